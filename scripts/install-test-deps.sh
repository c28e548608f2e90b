#!/bin/bash
# Installs the Debian packages the test suite drives, when any is missing (needs root or sudo).
set -euo pipefail
need=()
check() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
check curl curl
check openssl openssl
check sqlite3 sqlite3
check dig dnsutils
check kdig knot-dnsutils
check chromium chromium
check certutil libnss3-tools
check systemd-analyze systemd
check unbound unbound
check /usr/bin/python3 python3
# python3 modules: the independent NAS simulator and webhook receiver
/usr/bin/python3 -c "import pyrad" 2>/dev/null || need+=(python3-pyrad)
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing test dependencies: ${need[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
