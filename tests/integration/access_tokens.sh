#!/usr/bin/env bash
# Bearer tokens on the real coordinator and agent: each role's routes refuse the others' tokens
# and no token, agents with the right token register and run work, tokens never reach a log.
source "$(dirname "$0")/lib.sh"
AGENT_TOKEN=agent-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
USER_TOKEN=user-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
READ_TOKEN=read-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'agent %s\nuser %s\nread %s\n' "$AGENT_TOKEN" "$USER_TOKEN" "$READ_TOKEN" >"$WORK/tokens"
echo "$AGENT_TOKEN" >"$WORK/agent.token"
echo "$USER_TOKEN" >"$WORK/user.token"

"$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$WORK/a.db" --token-file "$WORK/tokens" \
  --heartbeat-interval 0.5 --heartbeat-timeout 4 >>"$WORK/coordinator.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
URL=http://127.0.0.1:$(cat "$WORK/port")

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[[ $(code "$URL/healthz") == 200 ]] || fail "healthz is open"
[[ $(code "$URL/metrics") == 200 ]] || fail "metrics are open unless --protect-metrics"
[[ $(code "$URL/api/v1/results") == 401 ]] || fail "results without a token"
[[ $(code -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/results") == 200 ]] || fail "results with the read token"
[[ $(code -H "Authorization: Bearer $AGENT_TOKEN" "$URL/api/v1/results") == 403 ]] || fail "results with the agent token"
[[ $(code -X POST -H "Authorization: Bearer $READ_TOKEN" --data-binary @"$SRC/examples/quick.yaml" "$URL/api/v1/experiments") == 403 ]] ||
  fail "a read token may not submit"
[[ $(code -X POST -H "Authorization: Bearer $USER_TOKEN" -d '{}' "$URL/api/v1/agents/register") == 403 ]] ||
  fail "a user token may not register an agent"
[[ $(code -X POST -H "Authorization: Bearer wrong-token-0123456789" -d '{}' "$URL/api/v1/runs/1/finish") == 401 ]] ||
  fail "an unknown token"
curl -s -H "Authorization: Bearer $READ_TOKEN" -X POST "$URL/api/v1/experiments" | grep -q "may not submit" ||
  fail "the refusal says why"

# An agent without its token is refused, and says so; with it, it registers.
"$BIN/scalebench-agent" --coordinator "$URL" --name nokey --work-dir "$WORK/agent-nokey" >"$WORK/agent-nokey.log" 2>&1 &
nokey=$!
PIDS+=($nokey)
for _ in $(seq 50); do grep -q "401\|token" "$WORK/agent-nokey.log" && break; sleep 0.1; done
grep -q "token" "$WORK/agent-nokey.log" || fail "an agent without a token does not say it needs one: $(cat "$WORK/agent-nokey.log")"
kill "$nokey" 2>/dev/null || true
"$BIN/scalebench-agent" --coordinator "$URL" --name n1 --work-dir "$WORK/agent-n1" --token-file "$WORK/agent.token" \
  >"$WORK/agent-n1.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  SCALEBENCH_TOKEN=$READ_TOKEN "$BIN/scalebench" agents --coordinator "$URL" 2>/dev/null | grep -q "^n1 .*alive" && break
  sleep 0.1
done
SCALEBENCH_TOKEN=$READ_TOKEN "$BIN/scalebench" agents --coordinator "$URL" | grep -q "^n1 .*alive" || fail "agent n1 did not register"

set +e
"$BIN/scalebench" submit "$SRC/examples/quick.yaml" --coordinator "$URL" >"$WORK/nokey-submit.log" 2>&1
rc=$?
set -e
[[ $rc -eq 4 ]] || fail "submit without a token exits 4, got $rc"
grep -q "needs a user token" "$WORK/nokey-submit.log" || fail "submit without a token: $(cat "$WORK/nokey-submit.log")"
"$BIN/scalebench" submit "$SRC/examples/quick.yaml" --coordinator "$URL" --token-file "$WORK/user.token" >/dev/null ||
  fail "submit with the user token"
wait_finished() { :; }
for _ in $(seq 240); do
  curl -sf -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/experiments/quick" |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["finished"] else 1)' 2>/dev/null && break
  sleep 0.5
done
SCALEBENCH_TOKEN=$READ_TOKEN "$BIN/scalebench" results --coordinator "$URL" --format json >"$WORK/records.jsonl"
json_check "$WORK/records.jsonl" 'len(records) > 0 and all(r["status"] == "ok" for r in records)'

# No token in any log, the agents' run logs and specs included.
for t in "$AGENT_TOKEN" "$USER_TOKEN" "$READ_TOKEN"; do
  if grep -rq "$t" "$WORK"/*.log "$WORK"/agent-*/ 2>/dev/null; then fail "a token is in a log"; fi
done
echo "access_tokens: ok"
