#!/usr/bin/env bash
# tests/metrics-api/ma_cli_lists.sh GPUFLEET - gpufleet metrics-api's comma
# lists (--tls-san, --requestheader-allowed-names, --agents) through
# gf_cli_parse_list: empty items skipped, the cap of each list an error that
# names the option.  Nothing is served: every run stops at option checking.
set -u
bin=$1
fails=0

# expect RC MESSAGE ARGS...: the exit status and a line of stderr.
expect() {
	local rc=$1 msg=$2 err got
	shift 2
	err=$("$bin" metrics-api "$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" != "$rc" ] || ! grep -qF -- "$msg" <<<"$err"; then
		echo "FAIL: metrics-api $(printf '%.80s' "$*"): exit $got (want $rc), stderr: $err (want: $msg)"
		fails=$((fails + 1))
	fi
}

names() { seq -f "n%g" 1 "$1" | paste -sd, -; }

expect 2 "--tls-san: more than 64 values" --tls-san "$(names 65)"
expect 2 "--requestheader-allowed-names: more than 64 values" --requestheader-allowed-names "$(names 65)"
expect 2 "--agents: more than 4096 values" --agents "$(names 4097)"
# At the cap, with empty items around: accepted; the run stops at the next check.
expect 2 "--source prometheus needs --prometheus-url" --tls-san ",,$(names 64),," --source prometheus
expect 2 "--source prometheus needs --prometheus-url" --agents "$(names 2000)" --agents ",$(names 2096)," --source prometheus
expect 2 "--agents: more than 4096 values" --agents "$(names 2000)" --agents "$(names 2097)"
[ "$fails" = 0 ] && echo "ma_cli_lists: ok"
exit "$fails"
