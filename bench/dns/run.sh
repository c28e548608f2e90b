#!/usr/bin/env bash
# DNS resolver benchmark: gatewayd vs dnsmasq vs unbound, all three caching and forwarding to the
# SAME local upstream (an unbound serving a static zone), measured in the same run with dnsperf.
# See bench/dns/README.md. Everything stays on 127.0.0.1; raw output goes to bench/out/dns-*/.
#
# Knobs (environment): TESTS DURATION WARMUP ROUNDS CLIENTS OUTSTANDING HIT_NAMES ZONE_NAMES CACHE_SIZE
# DNSMASQ_CACHE LAT_QPS LAT_SECONDS UNBOUND2 PROFILE PROFILE_TESTS PERF PORT_BASE STRICT BUILD
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export PATH="$PATH:/usr/sbin:/sbin"

TESTS=${TESTS:-hit,lat,miss}    # which tests: hit (cache-hit qps), lat (latency at a fixed rate), miss (cache-miss qps)
DURATION=${DURATION:-15}        # seconds per throughput run (hit and miss)
WARMUP=${WARMUP:-2}             # seconds of unmeasured cache-hit load before each hit run (JIT, caches)
ROUNDS=${ROUNDS:-1}             # throughput runs per resolver and test, interleaved; figures are means
CLIENTS=${CLIENTS:-10}          # dnsperf -c: client sockets (source ports)
OUTSTANDING=${OUTSTANDING:-200} # dnsperf -q: queries in flight
HIT_NAMES=${HIT_NAMES:-100}     # names in the cache-hit set (h1..hN.bench.test, warmed first)
ZONE_NAMES=${ZONE_NAMES:-20000} # A records in the upstream's static zone
# Cache entries for gatewayd and dnsmasq (unbound gets 512 MB + 1 GB). Large enough that no cache
# fills during the miss runs: dnsmasq evicts from a full cache with a scan, and its miss rate then
# collapses (to ~300 qps at 100000 entries on a 2-core VM); CACHE_SIZE=100000 shows that.
CACHE_SIZE=${CACHE_SIZE:-$((ROUNDS * DURATION * 50000 > 1000000 ? ROUNDS * DURATION * 50000 : 1000000))}
DNSMASQ_CACHE=${DNSMASQ_CACHE:-$CACHE_SIZE} # dnsmasq alone (its default is 150; its hits are a little faster with a small cache)
LAT_QPS=${LAT_QPS:-2000}        # fixed query rate of the latency runs
LAT_SECONDS=${LAT_SECONDS:-5}   # length of each latency run
UNBOUND2=${UNBOUND2:-1}         # 1: also measure unbound with 2 threads (labelled unbound-2t)
PROFILE=${PROFILE:-auto}        # auto: CPU-profile gatewayd on a hit run when it misses the target; 1 always; 0 never
PROFILE_TESTS=${PROFILE_TESTS:-hit} # what to profile: hit, miss or hit,miss
PERF=${PERF:-0}                 # 1: when profiling, also record the profiled run with Linux perf (kernel + C++ + JS)
PORT_BASE=${PORT_BASE:-25350}   # upstream=BASE, gatewayd=+3, dnsmasq=+4, unbound=+5, unbound-2t=+6, profiled gatewayd=+7
STRICT=${STRICT:-0}             # 1: exit 3 when gatewayd misses the cache-hit target
TARGET_HIT=1.0                  # gatewayd/dnsmasq on cache hits, from the issue

UP_PORT=$PORT_BASE
GW_PORT=$((PORT_BASE + 3))
DM_PORT=$((PORT_BASE + 4))
UB_PORT=$((PORT_BASE + 5))
UB2_PORT=$((PORT_BASE + 6))
GWP_PORT=$((PORT_BASE + 7))

BENCH_NAME=dns-bench
# shellcheck source=../lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../lib.sh"
ensure dnsperf dnsperf
ensure resperf dnsperf
ensure dnsmasq dnsmasq-base
ensure unbound unbound
ensure unbound-checkconf unbound
ensure dig bind9-dnsutils
ensure ss iproute2
if [ "$PERF" = 1 ]; then ensure perf linux-perf; fi
command -v node >/dev/null || die "node is required"
# Installing the unbound package may start a system unbound on port 53; it is left alone.

GATEWAYD="$ROOT/dist/src/cli/gatewayd.js"
if [ ! -f "$GATEWAYD" ] || [ "${BUILD:-0}" = 1 ]; then
  log "building gatewayd"
  (cd "$ROOT" && npx tsc -p .)
fi
if [ -n "$(find "$ROOT/src" -name '*.ts' -newer "$GATEWAYD" -print -quit)" ]; then
  log "warning: src/ has changes newer than dist/: this measures the old build (BUILD=1 rebuilds first)"
fi

LABELS=(gatewayd dnsmasq unbound)
[ "$UNBOUND2" = 1 ] && LABELS+=(unbound-2t)
declare -A PORT=([upstream]=$UP_PORT [gatewayd]=$GW_PORT [dnsmasq]=$DM_PORT [unbound]=$UB_PORT [unbound-2t]=$UB2_PORT)

for p in "$UP_PORT" "$GW_PORT" "$DM_PORT" "$UB_PORT" "$UB2_PORT" "$GWP_PORT"; do
  if ss -Hlnu "sport = :$p" | grep -q . || ss -Hlnt "sport = :$p" | grep -q .; then
    die "port $p is already in use on this machine (set PORT_BASE)"
  fi
done

# The figures are only meaningful on an otherwise idle machine: say so when it is not.
BUSY_BEFORE=$(cpu_busy_pct)
[ "$BUSY_BEFORE" -le 15 ] || log "warning: the machine is already ${BUSY_BEFORE}% busy before the bench starts; results will be noisy"

STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$ROOT/bench/out/dns-$STAMP"
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/dns-bench.XXXXXX)

# ---------------------------------------------------------------------------------------------
# Process bookkeeping: every process started here is stopped on exit, by its pid.
PIDS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A PID
start() { # start LABEL LOGFILE CMD...: runs CMD in the background, remembers its pid
  local label=$1 logf=$2; shift 2
  "$@" >"$logf" 2>&1 &
  PID[$label]=$!
  PIDS+=("$!")
}

wait_dns() { # wait_dns LABEL PORT: until h1.bench.test resolves there
  local label=$1 port=$2
  for _ in $(seq 150); do
    if dig +time=1 +tries=1 +short @127.0.0.1 -p "$port" h1.bench.test A 2>/dev/null | grep -q '^192\.0\.2\.'; then return 0; fi
    kill -0 "${PID[$label]}" 2>/dev/null || die "$label exited on start; see $OUT/$label.log"
    sleep 0.2
  done
  die "$label does not answer on 127.0.0.1:$port"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { # utime+stime of a process, all threads (fields 14 and 15 of /proc/PID/stat)
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
sys_ticks() { # stime alone (the kernel side: socket calls, and loopback packet work done in them)
  awk '{ sub(/^.*\) /, ""); print $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
# Busy ticks of all CPUs: user+nice+system+steal. irq/softirq are left out: loopback packets are
# processed in softirq, which the kernel accounts to no process, so it would look like "other" load.
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $9 }' /proc/stat; }

# ---------------------------------------------------------------------------------------------
# Query files. Hit set: h1..hN (A), all in the upstream's zone. Miss sets are generated per run
# under m.bench.test, a redirect zone on the upstream that answers every name in it with an A
# record, so every miss name is new to the resolver yet costs the upstream the same as a zone name.
log "writing configs and query files to $WORK"
awk -v n="$HIT_NAMES" 'BEGIN { for (i = 1; i <= n; i++) printf "h%d.bench.test A\n", i }' >"$WORK/hit.txt"
miss_file() { # miss_file TAG COUNT > file: COUNT names never asked before
  awk -v t="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s-%d.m.bench.test A\n", t, i }'
}

unbound_server() { # unbound_server PORT THREADS: the server: settings every unbound here shares
  cat <<EOF
server:
  interface: 127.0.0.1
  port: $1
  do-ip4: yes
  do-ip6: no
  do-udp: yes
  do-tcp: yes
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$WORK"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 0
  num-threads: $2
  module-config: "iterator"
  do-not-query-localhost: no
EOF
}

# The shared upstream: unbound answering from local data only (no recursion, no cache involved).
{
  unbound_server "$UP_PORT" 1
  cat <<EOF
  access-control: 127.0.0.0/8 allow
  local-zone: "bench.test." static
  local-data: "bench.test. 3600 IN SOA ns.bench.test. hostmaster.bench.test. 1 3600 600 86400 3600"
  local-zone: "m.bench.test." redirect
  local-data: "m.bench.test. 3600 IN A 192.0.2.2"
EOF
  awk -v n="$ZONE_NAMES" 'BEGIN { for (i = 1; i <= n; i++) printf "  local-data: \"h%d.bench.test. 3600 IN A 192.0.%d.%d\"\n", i, 2 + int((i - 1) / 254) % 250, 1 + (i - 1) % 254 }'
  printf 'remote-control:\n  control-enable: no\n'
} >"$WORK/upstream.conf"
unbound-checkconf "$WORK/upstream.conf" >/dev/null || die "upstream.conf is invalid"

unbound_fwd_conf() { # unbound_fwd_conf PORT THREADS
  unbound_server "$1" "$2"
  cat <<EOF
  access-control: 127.0.0.0/8 allow
  qname-minimisation: no
  local-zone: "test." nodefault   # unbound answers test. (RFC 6761) NXDOMAIN itself by default
  msg-cache-size: 512m
  rrset-cache-size: 1g
  num-queries-per-thread: 4096
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@$UP_PORT
remote-control:
  control-enable: no
EOF
}
unbound_fwd_conf "$UB_PORT" 1 >"$WORK/unbound.conf"
unbound_fwd_conf "$UB2_PORT" 2 >"$WORK/unbound-2t.conf"
unbound-checkconf "$WORK/unbound.conf" >/dev/null || die "unbound.conf is invalid"
unbound-checkconf "$WORK/unbound-2t.conf" >/dev/null || die "unbound-2t.conf is invalid"

gatewayd_conf() { # gatewayd_conf PORT DATADIR
  cat <<EOF
gateway: { hostname: gw.bench.test, address: 127.0.0.1 }
listen: { https: 127.0.0.1:0, http: null, dns: 127.0.0.1:$1 }
dataDir: $2
dns:
  upstreams: [ 127.0.0.1:$UP_PORT ]
  rateLimit: { qps: 0 }          # 0 disables the per-client limit (needed for a benchmark)
  cache: { maxEntries: $CACHE_SIZE }
log: { level: warn }
EOF
}
mkdir -p "$WORK/gw-data" "$WORK/gwp-data"
gatewayd_conf "$GW_PORT" "$WORK/gw-data" >"$WORK/gatewayd.yaml"

DNSMASQ_ARGS=(--conf-file=/dev/null --keep-in-foreground --log-facility=- --pid-file=
  --port="$DM_PORT" --listen-address=127.0.0.1 --bind-interfaces --no-resolv --no-hosts
  --server="127.0.0.1#$UP_PORT" --cache-size="$DNSMASQ_CACHE" --dns-forward-max=10000)

cp "$WORK/upstream.conf" "$WORK/unbound.conf" "$WORK/unbound-2t.conf" "$WORK/gatewayd.yaml" "$OUT/"
printf '%q ' dnsmasq "${DNSMASQ_ARGS[@]}" >"$OUT/dnsmasq.args"; echo >>"$OUT/dnsmasq.args"

# ---------------------------------------------------------------------------------------------
log "starting the upstream (unbound, $ZONE_NAMES names) on 127.0.0.1:$UP_PORT"
start upstream "$OUT/upstream.log" unbound -d -c "$WORK/upstream.conf"
wait_dns upstream "$UP_PORT"

log "starting gatewayd on :$GW_PORT, dnsmasq on :$DM_PORT, unbound on :$UB_PORT$([ "$UNBOUND2" = 1 ] && echo ", unbound-2t on :$UB2_PORT")"
start gatewayd "$OUT/gatewayd.log" node "$GATEWAYD" serve --config "$WORK/gatewayd.yaml"
start dnsmasq "$OUT/dnsmasq.log" dnsmasq "${DNSMASQ_ARGS[@]}"
start unbound "$OUT/unbound.log" unbound -d -c "$WORK/unbound.conf"
if [ "$UNBOUND2" = 1 ]; then start unbound-2t "$OUT/unbound-2t.log" unbound -d -c "$WORK/unbound-2t.conf"; fi
for l in "${LABELS[@]}"; do wait_dns "$l" "${PORT[$l]}"; done

{
  echo "date: $(date -Is)"
  echo "host: $(uname -srm), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "node: $(node -v)"
  echo "gatewayd: $(node "$GATEWAYD" --version 2>/dev/null || echo '?'), commit $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "+ $(cd "$ROOT" && git status --porcelain -- src 2>/dev/null | wc -l) uncommitted file(s) under src/," \
    "dist built $(date -r "$ROOT/dist/src/dns/service.js" -Is 2>/dev/null || echo '?')"
  echo "dnsmasq: $(dnsmasq --version | head -1)"
  echo "unbound: $(unbound -V | head -1)"
  echo "dnsperf: $(dnsperf -h 2>&1 | awk '/^Version/ { print $2 }')"
  echo "cpu busy before start: ${BUSY_BEFORE}%"
  echo "loadavg at start: $(cat /proc/loadavg)"
  echo "knobs: TESTS=$TESTS CACHE_SIZE=$CACHE_SIZE DNSMASQ_CACHE=$DNSMASQ_CACHE DURATION=$DURATION WARMUP=$WARMUP ROUNDS=$ROUNDS CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING HIT_NAMES=$HIT_NAMES ZONE_NAMES=$ZONE_NAMES LAT_QPS=$LAT_QPS LAT_SECONDS=$LAT_SECONDS UNBOUND2=$UNBOUND2"
} >"$OUT/env.txt"

# ---------------------------------------------------------------------------------------------
# The runs.
dnsperf_at() { # dnsperf_at PORT ARGS...: dnsperf against 127.0.0.1:PORT
  local port=$1; shift
  dnsperf -s 127.0.0.1 -p "$port" -c "$CLIENTS" "$@"
}

measured() { # measured LABEL STEM ARGS...: dnsperf_at against LABEL into OUT/STEM.txt; OUT/STEM.cpu gets
  # the CPU that LABEL's process, the upstream, dnsperf and the whole machine used meanwhile
  local label=$1 stem=$2; shift 2
  local c0 s0 u0 m0 t0 c1 s1 u1 m1 t1 tf=$WORK/time.txt
  c0=$(cpu_ticks "${PID[$label]}"); s0=$(sys_ticks "${PID[$label]}"); u0=$(cpu_ticks "${PID[upstream]}"); m0=$(machine_ticks); t0=$(date +%s.%N)
  local TIMEFORMAT='%U %S'
  { time dnsperf_at "${PORT[$label]}" "$@" >"$OUT/$stem.txt" 2>&1; } 2>"$tf"
  c1=$(cpu_ticks "${PID[$label]}"); s1=$(sys_ticks "${PID[$label]}"); u1=$(cpu_ticks "${PID[upstream]}"); m1=$(machine_ticks); t1=$(date +%s.%N)
  {
    echo "clk_tck=$CLK_TCK"
    echo "resolver_ticks=$((c1 - c0))"
    echo "resolver_sys_ticks=$((s1 - s0))"
    echo "upstream_ticks=$((u1 - u0))"
    echo "machine_busy_ticks=$((m1 - m0))"
    echo "dnsperf_cpu_s=$(awk '{ print $1 + $2 }' "$tf")"
    echo "wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
  } >"$OUT/$stem.cpu"
}

rotate() { # rotate N ITEMS...: the items, starting at index N mod count (interleaves the order per round)
  local n=$1; shift
  local a=("$@") k=${#a[@]} i
  for ((i = 0; i < k; i++)); do echo "${a[$(((n + i) % k))]}"; done
}

warm_hits() { # warm_hits PORT: every hit name asked (twice), then WARMUP seconds of unmeasured load
  local port=$1
  dnsperf_at "$port" -d "$WORK/hit.txt" -n 2 -q 20 >/dev/null 2>&1
  dnsperf_at "$port" -d "$WORK/hit.txt" -l "$WARMUP" -q "$OUTSTANDING" >/dev/null 2>&1 || true
}

# Baseline: the upstream asked directly with the hit set. Nothing a forwarder does costs less than
# answering from local data, and dnsperf shares the 2 CPUs, so this is about the harness ceiling.
want() { [[ ",$TESTS," == *",$1,"* ]]; }
HIT_TARGETS=(upstream "${LABELS[@]}")
want hit || HIT_TARGETS=()
for ((r = 1; r <= ROUNDS && ${#HIT_TARGETS[@]} > 0; r++)); do
  for l in $(rotate $((r - 1)) "${HIT_TARGETS[@]}"); do
    log "round $r/$ROUNDS: cache hits, $l, ${DURATION}s"
    warm_hits "${PORT[$l]}"
    measured "$l" "hit-$l-r$r" -d "$WORK/hit.txt" -l "$DURATION" -q "$OUTSTANDING"
  done
done
for l in upstream "${LABELS[@]}"; do echo "$(rss_kb "${PID[$l]}")" >"$OUT/rss-after-hits-$l.txt"; done

LAT_COUNT=$((LAT_QPS * LAT_SECONDS * 12 / 10))
want lat || LAT_COUNT=0
for l in "${LABELS[@]}"; do
  [ "$LAT_COUNT" -gt 0 ] || break
  log "latency at $LAT_QPS qps: cache hits, $l, ${LAT_SECONDS}s"
  measured "$l" "lat-hit-$l" -d "$WORK/hit.txt" -l "$LAT_SECONDS" -Q "$LAT_QPS" -q "$OUTSTANDING" -v
  log "latency at $LAT_QPS qps: cache misses, $l, ${LAT_SECONDS}s"
  miss_file "lat-$l" "$LAT_COUNT" >"$WORK/miss.txt"
  measured "$l" "lat-miss-$l" -d "$WORK/miss.txt" -n 1 -l "$LAT_SECONDS" -Q "$LAT_QPS" -q "$OUTSTANDING" -v
done
rm -f "$WORK/miss.txt"
MISS_COUNT=$((DURATION * 80000)) # more names than any resolver gets through; -n 1 never wraps to hits
want miss || MISS_COUNT=0
for ((r = 1; r <= ROUNDS && MISS_COUNT > 0; r++)); do
  for l in $(rotate $((r - 1)) "${LABELS[@]}"); do
    log "round $r/$ROUNDS: cache misses, $l, ${DURATION}s"
    miss_file "r$r-$l" "$MISS_COUNT" >"$WORK/miss.txt"
    measured "$l" "miss-$l-r$r" -d "$WORK/miss.txt" -n 1 -l "$DURATION" -q "$OUTSTANDING"
  done
done
rm -f "$WORK/miss.txt"

for l in upstream "${LABELS[@]}"; do echo "$(rss_kb "${PID[$l]}")" >"$OUT/rss-end-$l.txt"; done
echo "loadavg at end: $(cat /proc/loadavg)" >>"$OUT/env.txt"

# ---------------------------------------------------------------------------------------------
# Report.
REPORT_RC=0
node "$HERE/report.mjs" "$OUT" "$TARGET_HIT" "${LABELS[@]}" | tee "$OUT/summary.txt" || REPORT_RC=$?
# report.mjs exits 3 when gatewayd misses the cache-hit target, other non-zero on a broken run.
[ "$REPORT_RC" = 0 ] || [ "$REPORT_RC" = 3 ] || die "report failed ($REPORT_RC)"

profile_run() { # profile_run TEST MODE: a fresh gatewayd, one TEST (hit|miss) run under MODE (cpuprof|perf), then a summary
  local test=$1 mode=$2 dir="$OUT/profile/$1-$2" prof pid
  log "profiling gatewayd ($mode) on a ${DURATION}s cache-$test run"
  rm -rf "$WORK/gwp-data"; mkdir -p "$WORK/gwp-data" "$dir"
  gatewayd_conf "$GWP_PORT" "$WORK/gwp-data" >"$WORK/gatewayd-prof.yaml"
  PORT[gatewayd-prof]=$GWP_PORT
  local flags=(--cpu-prof --cpu-prof-dir="$dir")
  if [ "$mode" = perf ]; then flags=(--perf-basic-prof); fi
  start gatewayd-prof "$dir/gatewayd.log" node "${flags[@]}" "$GATEWAYD" serve --config "$WORK/gatewayd-prof.yaml"
  pid=${PID[gatewayd-prof]}
  wait_dns gatewayd-prof "$GWP_PORT"
  warm_hits "$GWP_PORT"
  local input=("$WORK/hit.txt")
  if [ "$test" = miss ]; then
    miss_file "prof-$mode" "$MISS_COUNT_PROF" >"$WORK/miss.txt"
    input=("$WORK/miss.txt" -n 1)
  fi
  if [ "$mode" = perf ]; then
    start perf-record "$dir/perf-record.log" perf record -e cpu-clock -F 2999 -g -p "$pid" -o "$dir/perf.data" -- sleep "$((DURATION - 1))"
  fi
  measured gatewayd-prof "profile/$test-$mode/dnsperf" -d "${input[@]}" -l "$DURATION" -q "$OUTSTANDING"
  rm -f "$WORK/miss.txt"
  if [ "$mode" = perf ]; then
    wait "${PID[perf-record]}" 2>/dev/null || true
    # The stacks as text (JS names need /tmp/perf-PID.map, which goes away with the process).
    perf script -i "$dir/perf.data" -F tid,ip,sym 2>/dev/null | gzip -1 >"$dir/perf.script.gz"
    rm -f "$dir/perf.data"
    gzip -dc "$dir/perf.script.gz" | node "$HERE/perf-top.mjs" 25 | tee "$dir/top.txt"
  fi
  kill -TERM "$pid"
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  wait "$pid" 2>/dev/null || true
  rm -f "/tmp/perf-$pid.map"
  if [ "$mode" = cpuprof ]; then
    prof=$(ls -t "$dir"/*.cpuprofile 2>/dev/null | head -1 || true)
    if [ -n "$prof" ]; then
      node "$HERE/cpuprofile-top.mjs" "$prof" 30 --between 'dns/service\.js' --last "$DURATION" | tee "$dir/top.txt"
    else
      log "warning: no .cpuprofile was written (gatewayd did not exit cleanly?)"
    fi
  fi
}
MISS_COUNT_PROF=$((DURATION * 80000))
if [ "$PROFILE" = 1 ] || { [ "$PROFILE" = auto ] && [ "$REPORT_RC" = 3 ] && want hit; }; then
  for t in ${PROFILE_TESTS//,/ }; do
    profile_run "$t" cpuprof
    if [ "$PERF" = 1 ]; then profile_run "$t" perf; fi
  done
fi

log "raw output: $OUT"
if [ "$STRICT" = 1 ] && [ "$REPORT_RC" = 3 ]; then exit 3; fi
exit 0
