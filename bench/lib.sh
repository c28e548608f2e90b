# Shared by the benchmarks: logging and installing missing Debian packages.
# Set BENCH_NAME before sourcing; it prefixes every log line.

log() { printf '[%s %s] %s\n' "${BENCH_NAME:-bench}" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

apt_updated=0
ensure() { # ensure COMMAND PACKAGE: install PACKAGE unless COMMAND exists
  command -v "$1" >/dev/null 2>&1 && return 0
  log "installing $2 (for $1)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "$2" >/dev/null 2>&1; then
    [ "$apt_updated" = 1 ] || { apt-get update >/dev/null 2>&1 || true; apt_updated=1; }
    apt-get install -y --no-install-recommends "$2" >/dev/null || die "cannot install $2"
  fi
  command -v "$1" >/dev/null 2>&1 || die "$1 still missing after installing $2"
}

# Benchmarks mean something only on an otherwise idle machine: this measures how busy it is.
cpu_busy_pct() { # share of all CPUs busy over 1 s, from /proc/stat
  local a b
  a=$(awk '/^cpu /{ print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat); sleep 1
  b=$(awk '/^cpu /{ print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.0f", 100 * (y[1] - x[1]) / (y[2] - x[2]) }'
}
