#!/usr/bin/env bash
# Acceptance verdicts reach the real coordinator: POST /api/v1/node-health needs a user token,
# refuses a bad body naming the field, shows scalebench_node_health{Hostname, gpu, check} on
# /metrics (1 pass, 0.5 warn, 0 fail, the worst of a post's rules per check), the newest verdict
# per host, GPU and check wins, and a restart on the same store keeps them.
source "$(dirname "$0")/lib.sh"
USER_TOKEN=user-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
READ_TOKEN=read-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'user %s\nread %s\n' "$USER_TOKEN" "$READ_TOKEN" >"$WORK/tokens"
start() { start_coordinator "$WORK/h.db" "${1:-0}" --token-file "$WORK/tokens"; }
post() { curl -s -o "$WORK/answer" -w '%{http_code}' -X POST -H "Authorization: Bearer $1" --data-binary "$2" "$URL/api/v1/node-health"; }
# health HOST GPU CHECK: the gauge's value on /metrics, or "none".
health() {
  curl -sf "$URL/metrics" | python3 -c '
import re, sys
host, gpu, check = sys.argv[1:]
for line in sys.stdin:
    m = re.match(r"scalebench_node_health\{(.*)\} (\S+)$", line.strip())
    if m and dict(re.findall(r"(\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"", m.group(1))) == {"Hostname": host, "gpu": gpu, "check": check}:
        print(float(m.group(2))); break
else:
    print("none")' "$1" "$2" "$3"
}
start

v() { printf '{"host": "%s", "gpu": %s, "check": "%s", "rule": "%s", "outcome": "%s", "value": 1, "band": {"lo": 1}, "reason": ""}' "$@"; }
FIRST="{\"level\": \"quick\", \"verdicts\": [$(v node-1 0 'gemm.throughput precision=bf16' gemm-throughput pass),
  $(v node-1 0 'gemm.throughput precision=bf16' gemm-fleet warn), $(v node-1 1 'hbm.throughput' hbm-bandwidth pass),
  $(v node-2 0 'hbm.throughput' hbm-bandwidth fail), $(v node-2 -1 'nodecheck.versions' versions-agree pass),
  $(v node-2 1 'nodecheck.nvlink_replay_errors' nvlink-replay-errors-not-rising skip)]}"
[[ $(post "" "$FIRST") == 401 ]] || fail "a post without a token"
[[ $(post "$READ_TOKEN" "$FIRST") == 403 ]] || fail "a read token may not post verdicts"
[[ $(post "$USER_TOKEN" '{"verdicts": [{"host": "n", "gpu": 0, "check": "c", "outcome": "great"}]}') == 400 ]] ||
  fail "a bad outcome was taken"
grep -q 'verdicts\[0\].outcome: expected pass, warn, fail or skip' "$WORK/answer" || fail "no field named: $(cat "$WORK/answer")"
[[ $(post "$USER_TOKEN" '{"verdicts": [{"host": "", "gpu": 0, "check": "c", "outcome": "pass"}]}') == 400 ]] ||
  fail "an empty host was taken"
[[ $(post "$USER_TOKEN" "$FIRST") == 200 ]] || fail "post: $(cat "$WORK/answer")"
grep -q '"stored":4' "$WORK/answer" || fail "4 checks expected stored (the skip changes nothing): $(cat "$WORK/answer")"
[[ $(health node-1 0 'gemm.throughput precision=bf16') == 0.5 ]] || fail "the worst rule of a check: warn"
[[ $(health node-1 1 hbm.throughput) == 1.0 ]] || fail "pass is 1"
[[ $(health node-2 0 hbm.throughput) == 0.0 ]] || fail "fail is 0"
[[ $(health node-2 '' nodecheck.versions) == 1.0 ]] || fail "the node as a whole: gpu empty"
[[ $(health node-2 1 nodecheck.nvlink_replay_errors) == none ]] || fail "a skipped check is not shown"

# A later battery: node-2's HBM passes now, the rest stays.
[[ $(post "$USER_TOKEN" "{\"verdicts\": [$(v node-2 0 hbm.throughput hbm-bandwidth pass)]}") == 200 ]] || fail "second post"
[[ $(health node-2 0 hbm.throughput) == 1.0 ]] || fail "the newest verdict wins"
[[ $(health node-1 0 'gemm.throughput precision=bf16') == 0.5 ]] || fail "other checks stay"
curl -sf -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/node-health" >"$WORK/list.json"
python3 - "$WORK/list.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["verdicts"]
assert len(v) == 4, v
n2 = [x for x in v if x["host"] == "node-2" and x["gpu"] == 0][0]
assert n2["outcome"] == "pass" and n2["rule"] == "hbm-bandwidth" and n2["at"] > 1.7e9, n2
n1 = [x for x in v if x["host"] == "node-1" and x["gpu"] == 0][0]
assert n1["rule"] == "gemm-fleet" and n1["level"] == "quick", n1
PY

# A restart on the same store keeps them.
kill -TERM "$COORD_PID"
wait "$COORD_PID" 2>/dev/null || true
start "$PORT"
[[ $(health node-2 0 hbm.throughput) == 1.0 ]] || fail "lost at restart"
[[ $(health node-1 0 'gemm.throughput precision=bf16') == 0.5 ]] || fail "lost at restart (warn)"
echo "node_health: ok"
