#!/bin/bash
# tests/agent/agent_cli.sh - the `gpufleet agent` command over the FAKE NVML:
# missing library, failing nvmlInit, --allow-no-nvml, bad options, bad HTTP
# requests (the server keeps serving), content type, graceful stop.
. "$(dirname "$0")/lib.sh"

# NVML missing: one clear message, non-zero exit.
rc=0; "$GPUFLEET" agent --once --nvml-lib /nonexistent/libnvidia-ml.so.1 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "missing NVML: exit $rc, want 1"
grep -q "cannot load NVML from /nonexistent/libnvidia-ml.so.1" "$T/err" || fail "missing NVML: message: $(cat "$T/err")"
grep -q -- "--allow-no-nvml serves an empty set" "$T/err" || fail "missing NVML: no hint"
[ "$(wc -l < "$T/err")" = 1 ] || fail "missing NVML: want one message line, got: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "missing NVML: printed metrics anyway"
pass "missing NVML library -> exit 1 with a clear message"

# NVML present but nvmlInit fails.
printf 'init_error 9\ngpu 0\n' > "$T/state.init"
rc=0; GF_FAKE_NVML_STATE="$T/state.init" "$GPUFLEET" agent --once --nvml-lib "$FAKE" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "init failure: exit $rc"
grep -q "nvmlInit failed.*Driver Not Loaded" "$T/err" || fail "init failure: message: $(cat "$T/err")"
pass "nvmlInit failure -> exit 1"

# ...unless asked to serve an empty set.
"$GPUFLEET" agent --once --allow-no-nvml --nvml-lib /nonexistent/libnvidia-ml.so.1 >"$T/out" 2>/dev/null ||
	fail "--allow-no-nvml: non-zero exit"
grep -qx "gpufleet_agent_nvml_loaded 0" "$T/out" || fail "--allow-no-nvml: output: $(cat "$T/out")"
pass "--allow-no-nvml serves an empty set"

# Bad options.
rc=0; "$GPUFLEET" agent --bogus 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown option '--bogus'" "$T/err" || fail "bad option: exit $rc: $(cat "$T/err")"
rc=0; "$GPUFLEET" agent --interval-ms soon 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "interval-ms: 'soon'" "$T/err" || fail "bad interval: exit $rc"
rc=0; DCGM_EXPORTER_INTERVAL=-5 "$GPUFLEET" agent 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "DCGM_EXPORTER_INTERVAL: '-5'" "$T/err" || fail "bad DCGM_EXPORTER_INTERVAL: exit $rc"
rc=0; "$GPUFLEET" agent --address nowhere 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "is not \[HOST\]:PORT" "$T/err" || fail "bad address: exit $rc"
pass "bad options -> exit 2 naming the option"

# The server: bad requests get clear errors and it keeps serving.
start_agent --interval-ms 0
code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/nope")
[ "$code" = 404 ] && grep -q "GET /nope: no such path" "$T/body" || fail "404: $code $(cat "$T/body")"
code=$(curl -s -o "$T/body" -w '%{http_code}' -X POST --data x "http://127.0.0.1:$PORT/metrics")
[ "$code" = 405 ] || fail "POST /metrics: $code"
# A request that is not HTTP at all.
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'THIS IS NOT HTTP\r\n\r\n' >&3
timeout 5 cat <&3 > "$T/raw" || true
exec 3<&-
grep -q "^HTTP/1.1 400" "$T/raw" || fail "garbage request: $(head -1 "$T/raw")"
# A first line without a space: libmicrohttpd closes without an answer (docs/agent.md).
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'garbage\r\n\r\n' >&3
timeout 5 cat <&3 > "$T/raw" || true
exec 3<&-
[ ! -s "$T/raw" ] || fail "one-word request: expected no answer, got: $(head -c 80 "$T/raw")"
# Oversized headers.
big=$(head -c 40000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "http://127.0.0.1:$PORT/metrics")
[ "$code" = 431 ] || [ "$code" = 413 ] || fail "huge header: $code"
ct=$(curl -s -o "$T/m" -w '%{content_type}' "http://127.0.0.1:$PORT/metrics")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "content type '$ct'"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0".*pod="llm-7d9f-abcde"} 87$' "$T/m" || fail "metrics after bad requests"
[ "$(scrape /health)" = ok ] || fail "/health"
scrape /inventory | jq -e '.gpus | length == 2' >/dev/null || fail "/inventory"
kill -0 "$AGENT_PID" || fail "agent died"
pass "bad HTTP requests answered (404, 405, 400, 431) and the agent keeps serving"
stop_agent
pass "SIGTERM -> graceful stop, exit 0"
