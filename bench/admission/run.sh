#!/bin/bash
# Enrollment to admission latency: N devices (127.0.0.10 and up) enroll through the portal with
# curl; the repo's independent peers answer: a Python webhook receiver (checks the HMAC) and a
# pyrad NAS (checks both RADIUS authenticators). Latencies come from the daemon's JSON log.
set -euo pipefail
BENCH_NAME=admission
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/lib.sh"
N=${N:-40}
ensure curl curl
/usr/bin/python3 -c 'import pyrad' 2>/dev/null || ensure /usr/share/doc/python3-pyrad python3-pyrad
[ -f "$ROOT/dist/src/cli/gatewayd.js" ] || die "not built: run make build"
OUT="$ROOT/bench/out/admission"; rm -rf "$OUT"; mkdir -p "$OUT"; cd "$OUT"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
# The peers exit when their stdin closes: it is held open for as long as this script runs.
alive() { while kill -0 $$ 2>/dev/null; do sleep 1; done; }
/usr/bin/python3 "$ROOT/test/helpers/webhook-receiver.py" --secret bench-secret-0123456789 --port 18999 > hook.log 2>&1 < <(alive 2>/dev/null) & pids+=($!)
/usr/bin/python3 "$ROOT/test/helpers/nas.py" --secret nas-secret --port 18799 --mode ack > nas.log 2>&1 < <(alive 2>/dev/null) & pids+=($!)
cat > gw.yaml <<YAML
gateway: { hostname: gw.test, address: 127.0.0.1 }
listen: { https: 127.0.0.1:18443, dns: 127.0.0.1:18053 }
dataDir: ./data
dns: { upstreams: [127.0.0.1:1] }
log: { level: info }
tenants:
  - { id: bench, name: Bench, networks: [127.0.0.0/8], portal: { identityMode: none, admitWebhookUrl: "http://127.0.0.1:18999/admit", admitWebhookSecret: bench-secret-0123456789 } }
nac: { coa: [ { address: 127.0.0.1, port: 18799, secret: nas-secret } ] }
YAML
node "$ROOT/dist/src/cli/gatewayd.js" serve --config gw.yaml > gw.log 2>&1 & GW=$!; pids+=($GW)
for _ in $(seq 50); do grep -q '"listener":"https"' gw.log 2>/dev/null && break; sleep 0.1; done
log "other processes used $(cpu_busy_pct)% of the CPU just before the run"
start=$(date +%s%N)
for i in $(seq 10 $((9 + N))); do
  C=(curl -sk --interface "127.0.0.$i" --resolve gw.test:18443:127.0.0.1 -c "jar$i" -b "jar$i")
  token=$("${C[@]}" https://gw.test:18443/portal | grep -o 'name="_csrf" value="[^"]*"' | sed 's/.*value="//;s/"//')
  "${C[@]}" -o /dev/null https://gw.test:18443/portal/enroll --data-urlencode "_csrf=$token" --data-urlencode "email=d$i@bench.test" --data-urlencode "sessionid=s$i"
done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
sleep 2
kill -TERM "$GW"; wait "$GW" 2>/dev/null || true
node "$ROOT/bench/admission/report.mjs" gw.log
echo "enrollments: $N in $elapsed_ms ms, sequential curl, two requests each (page, then form)"
echo "webhooks whose HMAC the receiver verified: $(grep -c '"signature_ok": true' hook.log)"
echo "CoA requests whose authenticators the NAS verified: $(grep -c '"message_authenticator_ok": true' nas.log)"
