#!/usr/bin/env bash
# SNI passthrough benchmark: gatewayd vs haproxy (mode tcp, req.ssl_sni routing) in front of the
# same local nginx TLS backend, plus the backend measured directly as a baseline.
# See bench/sni-passthrough/README.md. Everything stays on 127.0.0.1; raw output goes to bench/out/.
#
# Knobs (environment): DURATION ROUNDS WARMUP CONNS NEWCONN_CONNS BULK_MB BULK_REPEAT BULK_RUNS IDLE_CONNS
# HAPROXY_NBTHREAD NGINX_WORKERS BACKEND_PORT GW_PORT HA_PORT STRICT (1: exit 3 when a target is missed)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

DURATION=${DURATION:-8}            # seconds per wrk run
ROUNDS=${ROUNDS:-2}                # wrk runs per target and test, interleaved between targets; figures are means
WARMUP=${WARMUP:-2}                # seconds of unmeasured wrk load per target before each test
CONNS=${CONNS:-50}                 # concurrent kept-alive connections
NEWCONN_CONNS=${NEWCONN_CONNS:-50} # concurrent clients in the new-connection test
BULK_MB=${BULK_MB:-100}            # size of the bulk file
BULK_REPEAT=${BULK_REPEAT:-5}      # downloads of the file per curl (one connection) = one sample
BULK_RUNS=${BULK_RUNS:-5}          # samples per target; figure is the median
IDLE_CONNS=${IDLE_CONNS:-1000}     # idle TLS connections for the memory test
HAPROXY_NBTHREAD=${HAPROXY_NBTHREAD:-1} # gatewayd relays on one event loop; give haproxy one thread too
NGINX_WORKERS=${NGINX_WORKERS:-1}
BACKEND_PORT=${BACKEND_PORT:-28440}
GW_PORT=${GW_PORT:-28441}
HA_PORT=${HA_PORT:-28442}
STRICT=${STRICT:-0}
SNI=backend.bench.test
TARGET_BULK=0.9      # gatewayd/haproxy targets from the issue
TARGET_NEWCONN=0.7

BENCH_NAME=bench
# shellcheck source=../lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../lib.sh"
ensure nginx nginx-light
ensure haproxy haproxy
ensure wrk wrk
ensure curl curl
ensure openssl openssl
command -v node >/dev/null || die "node is required"
# Debian starts nginx/haproxy services on install; they listen on other ports and are left alone.

GATEWAYD="$ROOT/dist/src/cli/gatewayd.js"
if [ ! -f "$GATEWAYD" ] || [ "${BUILD:-0}" = 1 ]; then
  log "building gatewayd"
  (cd "$ROOT" && npx tsc -p .)
fi

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
NOFILE=$(ulimit -n)
[ "$NOFILE" -ge $((IDLE_CONNS * 3 + 200)) ] || die "open-file limit $NOFILE is too low for IDLE_CONNS=$IDLE_CONNS"
HA_MAXCONN=$(( (NOFILE - 100) / 2 > 8192 ? 8192 : (NOFILE - 100) / 2 )) # haproxy needs ~2 fds per connection

for p in "$BACKEND_PORT" "$GW_PORT" "$HA_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then die "port $p is already in use (set BACKEND_PORT/GW_PORT/HA_PORT)"; fi
done

# The figures are only meaningful on an otherwise idle machine: say so when it is not.
BUSY_BEFORE=$(cpu_busy_pct)
[ "$BUSY_BEFORE" -le 15 ] || log "warning: the machine is already ${BUSY_BEFORE}% busy before the bench starts; results will be noisy"

OUT="$ROOT/bench/out/sni-passthrough-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
TMP=$(mktemp -d /tmp/sni-bench.XXXXXX)

PIDS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 0.3
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  # Keep the servers' logs with the raw results, then drop the scratch directory.
  cp "$TMP"/*.log "$OUT"/ 2>/dev/null || true
  cp "$TMP"/*.cfg "$TMP"/*.yaml "$TMP"/nginx/nginx.conf "$OUT"/ 2>/dev/null || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# Backend: nginx, TLS 1.2/1.3, ECDSA P-256 certificate, one worker, no session resumption
# (every new connection is a full handshake), a tiny response and a big file.
log "preparing backend (nginx on $BACKEND_PORT)"
mkdir -p "$TMP/nginx/www" "$TMP/nginx/tmp" "$TMP/gw-data"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=$SNI" -addext "subjectAltName=DNS:$SNI" \
  -keyout "$TMP/nginx/key.pem" -out "$TMP/nginx/cert.pem" >/dev/null 2>&1
head -c "$((BULK_MB * 1024 * 1024))" /dev/urandom >"$TMP/nginx/www/big.bin"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes $NGINX_WORKERS;
daemon off;
master_process $([ "$NGINX_WORKERS" = 1 ] && echo off || echo on);
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx.log warn;
worker_rlimit_nofile $NOFILE;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/tmp;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$BACKEND_PORT ssl backlog=4096;
    server_name $SNI;
    ssl_certificate $TMP/nginx/cert.pem;
    ssl_certificate_key $TMP/nginx/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache off;
    ssl_session_tickets off;
    root $TMP/nginx/www;
    location = /small { default_type text/plain; return 200 "ok\n"; }
  }
}
EOF
nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx.log" >>"$TMP/nginx.log" 2>&1 &
NGINX_PID=$!
PIDS+=("$NGINX_PID")

# gatewayd: one static passthrough route to the backend.
cat >"$TMP/gatewayd.yaml" <<EOF
gateway: { hostname: gw.bench.test, address: 127.0.0.1 }
listen: { https: 127.0.0.1:$GW_PORT, http: null, dns: 127.0.0.1:0 }
dataDir: $TMP/gw-data
tls:
  routes:
    - { sni: $SNI, to: 127.0.0.1:$BACKEND_PORT }
dns: { upstreams: [ 127.0.0.1:53 ] }
log: { level: warn }
EOF
node "$GATEWAYD" serve --config "$TMP/gatewayd.yaml" >"$TMP/gatewayd.log" 2>"$TMP/gatewayd-stderr.log" &
GW_PID=$!
PIDS+=("$GW_PID")

# haproxy: the textbook SNI router, no default backend (like gatewayd without a route: close).
cat >"$TMP/haproxy.cfg" <<EOF
global
  nbthread $HAPROXY_NBTHREAD
  maxconn $HA_MAXCONN
defaults
  mode tcp
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend sni
  bind 127.0.0.1:$HA_PORT
  tcp-request inspect-delay 10s
  tcp-request content accept if { req.ssl_hello_type 1 }
  use_backend be_backend if { req.ssl_sni -i $SNI }
backend be_backend
  server s1 127.0.0.1:$BACKEND_PORT
EOF
haproxy -c -q -f "$TMP/haproxy.cfg" || die "haproxy config invalid"
haproxy -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1 &
HA_PID=$!
PIDS+=("$HA_PID")

wait_port() { # wait_port NAME PORT PID
  local i
  for i in $(seq 1 150); do
    kill -0 "$3" 2>/dev/null || die "$1 exited during start-up (see $OUT/$1*.log)"
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  die "$1 did not listen on $2 within 15 s"
}
wait_port nginx "$BACKEND_PORT" "$NGINX_PID"
wait_port gatewayd "$GW_PORT" "$GW_PID"
wait_port haproxy "$HA_PORT" "$HA_PID"

TARGETS=(direct gatewayd haproxy)
declare -A PORT=([direct]=$BACKEND_PORT [gatewayd]=$GW_PORT [haproxy]=$HA_PORT)
declare -A PID=([direct]=$NGINX_PID [gatewayd]=$GW_PID [haproxy]=$HA_PID)

url() { echo "https://$SNI:${PORT[$1]}$2"; }
fetch() { # fetch TARGET PATH [curl args...]
  local t=$1 path=$2; shift 2
  curl -sS -k --resolve "$SNI:${PORT[$t]}:127.0.0.1" "$@" "$(url "$t" "$path")"
}
for t in "${TARGETS[@]}"; do
  [ "$(fetch "$t" /small)" = ok ] || die "sanity check failed: no 'ok' from /small via $t"
done
log "all three paths answer (direct :$BACKEND_PORT, gatewayd :$GW_PORT, haproxy :$HA_PORT)"

{
  echo "date: $(date -Is)"
  echo "git: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo n/a) $(cd "$ROOT" && git status --porcelain 2>/dev/null | wc -l) dirty file(s)"
  echo "cpus: $(nproc)  kernel: $(uname -r)"
  echo "node: $(node -v)  $(haproxy -v | head -1)  $(nginx -v 2>&1)  $(wrk -v 2>&1 | head -1)"
  echo "cpu busy before start: ${BUSY_BEFORE}%  loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "settings: DURATION=$DURATION ROUNDS=$ROUNDS WARMUP=$WARMUP CONNS=$CONNS NEWCONN_CONNS=$NEWCONN_CONNS BULK_MB=$BULK_MB BULK_REPEAT=$BULK_REPEAT BULK_RUNS=$BULK_RUNS IDLE_CONNS=$IDLE_CONNS HAPROXY_NBTHREAD=$HAPROXY_NBTHREAD NGINX_WORKERS=$NGINX_WORKERS"
} >"$OUT/env.txt"

# ---------------------------------------------------------------------------------------------
declare -A R # R[metric.target] = space-separated samples

add() { R[$1.$2]="${R[$1.$2]:-}${R[$1.$2]:+ }$3"; }
mean() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (NF) printf "%.2f", s / NF; else printf "nan" }' <<<"$1"; }
median() { tr ' ' '\n' <<<"$1" | sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) printf "%.2f", a[(NR + 1) / 2]; else printf "%.2f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
CLK_TCK=$(getconf CLK_TCK)

run_wrk() { # run_wrk TEST TARGET ROUND -> samples in R
  local test=$1 t=$2 round=$3 conns=$CONNS extra=() raw c0 c1 res cpu
  if [ "$test" = newconn ]; then conns=$NEWCONN_CONNS; extra=(-H 'Connection: close'); fi
  raw="$OUT/wrk-$test-$t-r$round.txt"
  c0=$(cpu_ticks "${PID[$t]}")
  wrk -t1 -c"$conns" -d"${DURATION}s" --timeout 5s --latency -s "$HERE/wrk-sni.lua" "${extra[@]}" "$(url "$t" /small)" >"$raw" 2>&1 ||
    die "wrk failed against $t (see $raw)"
  c1=$(cpu_ticks "${PID[$t]}")
  res=$(grep '^RESULT ' "$raw") || die "no RESULT line in $raw"
  add "$test.rps" "$t" "$(field rps "$res")"
  add "$test.p50" "$t" "$(awk -v u="$(field p50_us "$res")" 'BEGIN { printf "%.3f", u / 1000 }')"
  add "$test.p99" "$t" "$(awk -v u="$(field p99_us "$res")" 'BEGIN { printf "%.3f", u / 1000 }')"
  cpu=$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v s="$(field duration_s "$res")" 'BEGIN { printf "%.1f", 100 * d / hz / s }')
  add "$test.cpu" "$t" "$cpu"
  local errs
  errs=$(($(field err_connect "$res") + $(field err_read "$res") + $(field err_write "$res") + $(field err_status "$res") + $(field err_timeout "$res")))
  add "$test.errors" "$t" "$errs"
  log "  $test $t round $round: $(field rps "$res") req/s, p99 $(field p99_us "$res") us, errors $errs, server-side CPU $cpu%"
}

wrk_test() { # wrk_test TEST
  local test=$1 t r order
  log "$test: warm-up ${WARMUP}s per target"
  for t in "${TARGETS[@]}"; do
    local extra=()
    [ "$test" = newconn ] && extra=(-H 'Connection: close')
    wrk -t1 -c"$CONNS" -d"${WARMUP}s" -s "$HERE/wrk-sni.lua" "${extra[@]}" "$(url "$t" /small)" >/dev/null 2>&1 || true
  done
  for r in $(seq 1 "$ROUNDS"); do
    # alternate the order so neither proxy always runs right after the other
    if ((r % 2)); then order=(gatewayd haproxy direct); else order=(haproxy gatewayd direct); fi
    for t in "${order[@]}"; do run_wrk "$test" "$t" "$r"; done
  done
}

# Foreign CPU: everything the machine ran during the measurements that is neither one of the three
# servers nor a client this script started (those are reaped children: bash's `times` counts them).
sys_busy_s() { awk -v hz="$CLK_TCK" '/^cpu /{ printf "%.2f", ($2 + $3 + $4) / hz }' /proc/stat; }
ours_s() {
  local servers children
  servers=$(cat "/proc/$NGINX_PID/stat" "/proc/$GW_PID/stat" "/proc/$HA_PID/stat" | awk -v hz="$CLK_TCK" '{ s += $14 + $15 } END { printf "%.2f", s / hz }')
  children=$(times | tail -1 | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.2f", s }')
  awk -v a="$servers" -v b="$children" 'BEGIN { printf "%.2f", a + b }'
}
CPU0_SYS=$(sys_busy_s) CPU0_OURS=$(ours_s) CPU0_T=$(date +%s.%N)

# 1. Memory per idle connection first, while the processes are fresh (later tests grow heaps and pools).
log "idle memory: $IDLE_CONNS idle TLS connections per target"
for t in gatewayd haproxy direct; do
  line=$(node "$HERE/idle-conns.mjs" --port "${PORT[$t]}" --pid "${PID[$t]}" --count "$IDLE_CONNS" --label "$t" 2>&1 | tee "$OUT/idle-$t.txt" | grep '^IDLE ') ||
    die "idle-connection test failed for $t (see $OUT/idle-$t.txt)"
  json=${line#IDLE }
  add idle.kib "$t" "$(node -e 'const r = JSON.parse(process.argv[1]); console.log(r.perConnKiB)' "$json")"
  add idle.before "$t" "$(node -e 'console.log(JSON.parse(process.argv[1]).rssBeforeKiB)' "$json")"
  add idle.after "$t" "$(node -e 'console.log(JSON.parse(process.argv[1]).rssAfterKiB)' "$json")"
  log "  $t: RSS ${R[idle.before.$t]} -> ${R[idle.after.$t]} KiB = ${R[idle.kib.$t]} KiB per idle connection"
  sleep 1
done

# 2. Kept-alive requests/s and latency.
log "keep-alive: $CONNS connections, ${DURATION}s x $ROUNDS rounds per target"
wrk_test keepalive

# 3. New TLS connections per second: one request per connection (full handshake each time).
log "new connections: $NEWCONN_CONNS clients, Connection: close, ${DURATION}s x $ROUNDS rounds per target"
wrk_test newconn

# 4. Bulk throughput of one TLS stream. One sample = one curl fetching the file BULK_REPEAT times over
#    one kept-alive connection (a single 100 MiB transfer lasts ~0.15 s here: too short to be stable).
log "bulk: ${BULK_MB} MiB file x $BULK_REPEAT per connection, $BULK_RUNS samples per target (interleaved)"
for t in "${TARGETS[@]}"; do fetch "$t" /big.bin -o /dev/null; done # warm page cache and code paths
bulk_urls=() bulk_outs=()
for _ in $(seq 1 "$BULK_REPEAT"); do bulk_urls+=(/big.bin); bulk_outs+=(-o /dev/null); done
minflt() { awk '{ print $10 }' "/proc/$1/stat"; }
for i in $(seq 1 "$BULK_RUNS"); do
  for t in gatewayd haproxy direct; do
    c0=$(cpu_ticks "${PID[$t]}") f0=$(minflt "${PID[$t]}")
    lines=$(curl -sS -k --resolve "$SNI:${PORT[$t]}:127.0.0.1" "${bulk_outs[@]}" \
      -w '%{size_download} %{time_total} %{http_code} %{num_connects}\n' "${bulk_urls[@]/#/$(url "$t" "")}")
    c1=$(cpu_ticks "${PID[$t]}") f1=$(minflt "${PID[$t]}")
    printf '%s sample %s: cpu_ticks=%s minflt=%s\n%s\n' "$t" "$i" $((c1 - c0)) $((f1 - f0)) "$lines" >>"$OUT/bulk.txt"
    read -r bytes secs bad conns < <(awk -v want=$((BULK_MB * 1024 * 1024)) \
      '{ b += $1; s += $2; if ($3 != 200 || $1 != want) bad++; c += $4 } END { print b, s, bad + 0, c }' <<<"$lines")
    [ "$bad" = 0 ] || die "bulk download via $t incomplete (see $OUT/bulk.txt)"
    add bulk.mbps "$t" "$(awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f", b / s / 1e6 }')"
    add bulk.cpu "$t" "$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v s="$secs" 'BEGIN { printf "%.1f", 100 * d / hz / s }')"
    add bulk.cpu_s_per_gb "$t" "$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v b="$bytes" 'BEGIN { printf "%.3f", d / hz / (b / 1e9) }')"
    add bulk.minflt_per_mb "$t" "$(awk -v f=$((f1 - f0)) -v b="$bytes" 'BEGIN { printf "%.1f", f / (b / 1e6) }')"
  done
done
log "  bulk MB/s: gatewayd ${R[bulk.mbps.gatewayd]} | haproxy ${R[bulk.mbps.haproxy]} | direct ${R[bulk.mbps.direct]}"

FOREIGN_PCT=$(awk -v s0="$CPU0_SYS" -v s1="$(sys_busy_s)" -v o0="$CPU0_OURS" -v o1="$(ours_s)" -v t0="$CPU0_T" -v t1="$(date +%s.%N)" -v n="$(nproc)" \
  'BEGIN { f = (s1 - s0) - (o1 - o0); if (f < 0) f = 0; printf "%.0f", 100 * f / ((t1 - t0) * n) }')
echo "foreign CPU during the measurements: ${FOREIGN_PCT}% of the machine" >>"$OUT/env.txt"

# ---------------------------------------------------------------------------------------------
# Report.
declare -A V
for t in "${TARGETS[@]}"; do
  for m in keepalive.rps keepalive.p50 keepalive.p99 keepalive.cpu keepalive.errors newconn.rps newconn.p50 newconn.p99 newconn.cpu newconn.errors bulk.cpu bulk.cpu_s_per_gb bulk.minflt_per_mb; do
    V[$m.$t]=$(mean "${R[$m.$t]}")
  done
  V[bulk.mbps.$t]=$(median "${R[bulk.mbps.$t]}")
  V[idle.kib.$t]=${R[idle.kib.$t]}
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }

{
  echo
  echo "SNI passthrough: gatewayd vs haproxy (mode tcp) vs nginx backend directly  [$(nproc) CPUs, haproxy nbthread=$HAPROXY_NBTHREAD, nginx workers=$NGINX_WORKERS]"
  printf '%-34s %12s %12s %12s %10s\n' metric direct gatewayd haproxy "gw/ha"
  row() { # row LABEL METRIC
    printf '%-34s %12s %12s %12s %10s\n' "$1" "${V[$2.direct]}" "${V[$2.gatewayd]}" "${V[$2.haproxy]}" "$(ratio "${V[$2.gatewayd]}" "${V[$2.haproxy]}")"
  }
  row "keep-alive req/s (c=$CONNS)" keepalive.rps
  row "keep-alive p50 ms" keepalive.p50
  row "keep-alive p99 ms" keepalive.p99
  row "keep-alive server CPU %" keepalive.cpu
  row "keep-alive errors" keepalive.errors
  row "new TLS conn/s (c=$NEWCONN_CONNS)" newconn.rps
  row "new-conn p50 ms" newconn.p50
  row "new-conn p99 ms" newconn.p99
  row "new-conn server CPU %" newconn.cpu
  row "new-conn errors" newconn.errors
  row "bulk MB/s (median of $BULK_RUNS)" bulk.mbps
  row "bulk server CPU %" bulk.cpu
  row "bulk server CPU s per GB" bulk.cpu_s_per_gb
  row "bulk server page faults per MB" bulk.minflt_per_mb
  row "idle KiB/conn (n=$IDLE_CONNS)" idle.kib
  echo "(server CPU % = CPU of the process under test: nginx for direct, the proxy otherwise; 100 = one core)"
  echo
  echo "ratio gatewayd/haproxy keepalive_rps=$(ratio "${V[keepalive.rps.gatewayd]}" "${V[keepalive.rps.haproxy]}") newconn_per_s=$(ratio "${V[newconn.rps.gatewayd]}" "${V[newconn.rps.haproxy]}") bulk_MBps=$(ratio "${V[bulk.mbps.gatewayd]}" "${V[bulk.mbps.haproxy]}") p99=$(ratio "${V[keepalive.p99.gatewayd]}" "${V[keepalive.p99.haproxy]}") newconn_p99=$(ratio "${V[newconn.p99.gatewayd]}" "${V[newconn.p99.haproxy]}") idle_mem_per_conn=$(ratio "${V[idle.kib.gatewayd]}" "${V[idle.kib.haproxy]}")"
  echo "ratio proxy/direct gatewayd: keepalive_rps=$(ratio "${V[keepalive.rps.gatewayd]}" "${V[keepalive.rps.direct]}") newconn_per_s=$(ratio "${V[newconn.rps.gatewayd]}" "${V[newconn.rps.direct]}") bulk_MBps=$(ratio "${V[bulk.mbps.gatewayd]}" "${V[bulk.mbps.direct]}")  haproxy: keepalive_rps=$(ratio "${V[keepalive.rps.haproxy]}" "${V[keepalive.rps.direct]}") newconn_per_s=$(ratio "${V[newconn.rps.haproxy]}" "${V[newconn.rps.direct]}") bulk_MBps=$(ratio "${V[bulk.mbps.haproxy]}" "${V[bulk.mbps.direct]}")"
  if [ "$BUSY_BEFORE" -gt 15 ] || [ "$FOREIGN_PCT" -gt 5 ]; then
    echo "WARNING: other processes used the machine (${BUSY_BEFORE}% busy before start, ${FOREIGN_PCT}% of all CPUs during the run): figures are unreliable; rerun on an idle machine"
  else
    echo "machine otherwise idle: ${FOREIGN_PCT}% foreign CPU during the run"
  fi
  echo "idle_mem_per_conn_KiB gatewayd=${V[idle.kib.gatewayd]} haproxy=${V[idle.kib.haproxy]} nginx_direct=${V[idle.kib.direct]}"
} | tee "$OUT/summary.txt"

check() { # check NAME RATIO TARGET
  if awk -v r="$2" -v t="$3" 'BEGIN { exit !(r >= t) }'; then echo "target $1 >= $3x haproxy: PASS ($2)"
  else echo "target $1 >= $3x haproxy: MISS ($2)"; fi
}
{
  check bulk_MBps "$(ratio "${V[bulk.mbps.gatewayd]}" "${V[bulk.mbps.haproxy]}")" "$TARGET_BULK"
  check newconn_per_s "$(ratio "${V[newconn.rps.gatewayd]}" "${V[newconn.rps.haproxy]}")" "$TARGET_NEWCONN"
} | tee -a "$OUT/summary.txt"
missed=$(grep -c ': MISS' "$OUT/summary.txt" || true)

{
  for k in "${!R[@]}"; do printf '%s\t%s\n' "$k" "${R[$k]}"; done | sort
} >"$OUT/samples.tsv"
echo "raw output: ${OUT#"$ROOT"/}"
if [ "$STRICT" = 1 ] && [ "$missed" -gt 0 ]; then exit 3; fi
exit 0
