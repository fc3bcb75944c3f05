#!/usr/bin/env bash
# tests/cost/chart-rules.sh SRC - the chart's PrometheusRule (cost.prometheusRule.enabled) carries
# exactly the cost recording rules of data/prometheus/gpufleet-cost.rules.yml (ctest
# cost_chart_rules). Helm reads only files inside the chart, so the chart holds a copy
# (deploy/helm/gpufleet/files/): it must be byte for byte the rules file. Then, when a Helm is at
# hand ($HELM, or the one tests/k8s/build-helm caches; none is built here): helm lint --strict
# with the rule on, and the rendered PrometheusRule's spec.groups equal the file's groups, while
# the defaults render no PrometheusRule.
set -euo pipefail
src=$1
rules=$src/data/prometheus/gpufleet-cost.rules.yml
chart=$src/deploy/helm/gpufleet
fail() { echo "FAIL: $*"; exit 1; }
cmp "$rules" "$chart/files/gpufleet-cost.rules.yml" ||
	fail "deploy/helm/gpufleet/files/gpufleet-cost.rules.yml differs from data/prometheus/gpufleet-cost.rules.yml: copy it"
grep -q '.Files.Get "files/gpufleet-cost.rules.yml"' "$chart/templates/cost/prometheusrule.yaml" ||
	fail "templates/cost/prometheusrule.yaml does not render files/gpufleet-cost.rules.yml"
echo "ok: the chart's copy of the rules equals data/prometheus/gpufleet-cost.rules.yml"

helm=${HELM:-}
if [ -z "$helm" ]; then
	for h in "${GPUFLEET_K8S_CACHE:-$HOME/.cache/gpufleet/k8s}"/helm-*/bin/helm; do [ -x "$h" ] && helm=$h; done
fi
if [ -z "$helm" ]; then
	echo "helm: none built (tests/k8s/build-helm): the rendering is not checked in this run"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HELM_CACHE_HOME=$T/cache HELM_CONFIG_HOME=$T/config HELM_DATA_HOME=$T/data
"$helm" lint --strict "$chart" --set cost.prometheusRule.enabled=true --set 'cost.prometheusRule.labels.release=prom' \
	>"$T/lint.out" 2>&1 || fail "helm lint --strict: $(cat "$T/lint.out")"
"$helm" template gpufleet "$chart" --namespace gpufleet-system --set cost.prometheusRule.enabled=true \
	--set 'cost.prometheusRule.labels.release=prom' --show-only templates/cost/prometheusrule.yaml >"$T/rule.yaml" ||
	fail "helm template with cost.prometheusRule.enabled"
python3 - "$T/rule.yaml" "$rules" <<'PY' || fail "the rendered PrometheusRule"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert len(docs) == 1 and docs[0]["kind"] == "PrometheusRule", docs
d = docs[0]
assert d["apiVersion"] == "monitoring.coreos.com/v1"
assert d["metadata"]["name"] == "gpufleet-cost" and d["metadata"]["namespace"] == "gpufleet-system", d["metadata"]
assert d["metadata"]["labels"]["release"] == "prom", d["metadata"]["labels"]
want = yaml.safe_load(open(sys.argv[2]))
assert d["spec"] == want, "spec differs from the rules file"
n = sum(len(g["rules"]) for g in d["spec"]["groups"])
print("ok: PrometheusRule gpufleet-cost: %d group(s), %d rules, equal to the file" % (len(d["spec"]["groups"]), n))
PY
if "$helm" template gpufleet "$chart" | grep -q '^kind: PrometheusRule$'; then fail "the defaults render a PrometheusRule"; fi
echo "ok: helm lint --strict with the rule; the defaults render none"
