#!/usr/bin/env bash
# TLS on the API: a coordinator with a self-signed certificate made here serves https only; the
# CLI and an agent that trust the certificate work over https (a study runs end to end), plain
# HTTP on that port gets no answer, and clients that do not trust the certificate, or reach a
# server whose certificate names another host, are refused.
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || fail "openssl is not installed (scripts/install-test-deps.sh installs it)"
cert() {  # cert NAME SUBJECT_ALT_NAMES
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" -addext "subjectAltName=$2" \
    -keyout "$WORK/$1.key" -out "$WORK/$1.pem" 2>"$WORK/openssl.log" || fail "openssl req: $(cat "$WORK/openssl.log")"
}
cert localhost "DNS:localhost,IP:127.0.0.1"
cert elsewhere "DNS:elsewhere.example"

# A coordinator with a key that is not its certificate's does not start, and names the file.
set +e
"$BIN/scalebench-coordinator" --port 0 --db "$WORK/bad.db" --tls-cert "$WORK/localhost.pem" \
  --tls-key "$WORK/elsewhere.key" >"$WORK/badkey.log" 2>&1
rc=$?
set -e
[[ $rc -ne 0 ]] && grep -q "TLS private key .*/elsewhere.key: .*mismatch" "$WORK/badkey.log" || fail "mismatched key: $(cat "$WORK/badkey.log")"

start_tls_coordinator() {  # start_tls_coordinator NAME: sets PORT
  rm -f "$WORK/port"
  "$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$WORK/$1.db" --heartbeat-interval 0.5 \
    --heartbeat-timeout 4 --tls-cert "$WORK/$1.pem" --tls-key "$WORK/$1.key" >>"$WORK/coordinator-$1.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  [[ -s $WORK/port ]] || fail "coordinator $1 did not start: $(cat "$WORK/coordinator-$1.log")"
  PORT=$(cat "$WORK/port")
}
start_tls_coordinator localhost
URL=https://127.0.0.1:$PORT
grep -q "listening on https://" "$WORK/coordinator-localhost.log" || fail "the log does not say https"

# https with the certificate trusted: answers. Plain HTTP on the same port: no answer at all.
[[ $(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/localhost.pem" "$URL/healthz") == 200 ]] || fail "https healthz"
[[ $(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/localhost.pem" "https://localhost:$PORT/healthz") == 200 ]] ||
  fail "https by name"
set +e
code=$(curl -s -o "$WORK/plain.out" -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT/healthz")
curl_rc=$?
set -e
[[ $curl_rc -ne 0 && $code == 000 && ! -s $WORK/plain.out ]] || fail "plain http got an answer: $code rc $curl_rc"
for _ in $(seq 50); do grep -q "TLS handshake with 127.0.0.1:[0-9]* failed" "$WORK/coordinator-localhost.log" && break; sleep 0.1; done
grep -q "TLS handshake with 127.0.0.1:[0-9]* failed" "$WORK/coordinator-localhost.log" || fail "the refused handshake is not logged"

# The CLI: without the CA it refuses the server (exit 4, OpenSSL's reason); with --ca-file or
# SCALEBENCH_CA_FILE it works.
set +e
"$BIN/scalebench" agents --coordinator "$URL" >"$WORK/noca.log" 2>&1
rc=$?
set -e
[[ $rc -eq 4 ]] || fail "CLI without the CA: exit $rc, want 4"
grep -q "certificate verify failed" "$WORK/noca.log" || fail "CLI without the CA: $(cat "$WORK/noca.log")"
"$BIN/scalebench" agents --coordinator "$URL" --ca-file "$WORK/localhost.pem" >/dev/null || fail "CLI --ca-file"
SCALEBENCH_CA_FILE=$WORK/localhost.pem "$BIN/scalebench" agents --coordinator "$URL" >/dev/null || fail "CLI SCALEBENCH_CA_FILE"
set +e
"$BIN/scalebench" agents --coordinator "$URL" --ca-file "$WORK/missing.pem" >"$WORK/missingca.log" 2>&1
rc=$?
set -e
[[ $rc -ne 0 ]] && grep -q "missing.pem" "$WORK/missingca.log" || fail "a missing CA file: $(cat "$WORK/missingca.log")"

# An agent that does not trust the certificate never registers, and says why.
"$BIN/scalebench-agent" --coordinator "$URL" --name untrusting --work-dir "$WORK/agent-untrusting" \
  >"$WORK/agent-untrusting.log" 2>&1 &
untrusting=$!
PIDS+=($untrusting)
for _ in $(seq 100); do grep -q "certificate verify failed" "$WORK/agent-untrusting.log" && break; sleep 0.1; done
grep -q "certificate verify failed" "$WORK/agent-untrusting.log" || fail "untrusting agent: $(cat "$WORK/agent-untrusting.log")"
kill "$untrusting"

# An agent that trusts it registers and runs a study submitted over https.
export SCALEBENCH_CA_FILE=$WORK/localhost.pem
"$BIN/scalebench-agent" --coordinator "$URL" --name n1 --work-dir "$WORK/agent-n1" --ca-file "$WORK/localhost.pem" \
  >"$WORK/agent-n1.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do "$BIN/scalebench" agents --coordinator "$URL" 2>/dev/null | grep -q "^n1 .*alive" && break; sleep 0.1; done
"$BIN/scalebench" agents --coordinator "$URL" | grep -q "^n1 .*alive" || fail "agent n1 did not register over https"
"$BIN/scalebench" agents --coordinator "$URL" | grep -q "^untrusting" && fail "the untrusting agent registered"
cat >"$WORK/study.yaml" <<'YAML'
name: tls-smoke
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 1KiB, max_bytes: 4KiB, step_factor: 4, time_cap: 0.2}
placement: {ranks_per_node: [2]}
repetitions: 5
timeout: 2m
YAML
"$BIN/scalebench" submit "$WORK/study.yaml" --coordinator "$URL" | grep -q "submitted experiment tls-smoke" || fail "submit over https"
for _ in $(seq 240); do
  "$BIN/scalebench" status tls-smoke --coordinator "$URL" | grep -q " 1/1 " && break
  sleep 0.5
done
"$BIN/scalebench" status tls-smoke --coordinator "$URL" | grep -q ' 1/1 .*"ok":1' || fail "the study did not end ok"
"$BIN/scalebench" results --coordinator "$URL" --format json >"$WORK/records.jsonl"
json_check "$WORK/records.jsonl" 'len(records) == 6 and all(r["status"] == "ok" and r["placement"]["ranks"] == 2 for r in records)'

# A server whose certificate names another host is refused even though the CA is trusted.
start_tls_coordinator elsewhere
set +e
"$BIN/scalebench" agents --coordinator "https://127.0.0.1:$PORT" --ca-file "$WORK/elsewhere.pem" >"$WORK/wronghost.log" 2>&1
rc=$?
set -e
[[ $rc -eq 4 ]] && grep -q "certificate verify failed" "$WORK/wronghost.log" || fail "wrong host name: $(cat "$WORK/wronghost.log")"
echo "tls_api: ok"
