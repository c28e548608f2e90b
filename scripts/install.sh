#!/bin/bash
# Installs the built gatewayd on this machine as a systemd service:
#   /opt/gatewayd (code), /etc/gatewayd/gateway.yaml (config, kept if present),
#   /var/lib/gatewayd (state, created by systemd), user "gatewayd".
# Usage: sudo scripts/install.sh [--no-start]     (run `make build` first)
set -euo pipefail
cd "$(dirname "$0")/.."
start=1
[ "${1:-}" = "--no-start" ] && start=0
[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root" >&2; exit 1; }
[ -f dist/src/cli/gatewayd.js ] || { echo "install.sh: not built yet: run make build" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  { echo "install.sh: Node.js 20 or newer is needed" >&2; exit 1; }

prefix=/opt/gatewayd
id gatewayd >/dev/null 2>&1 || useradd --system --home-dir /var/lib/gatewayd --no-create-home --shell /usr/sbin/nologin gatewayd

install -d -m 0755 "$prefix" "$prefix/scripts"
rm -rf "$prefix/dist"
cp -r dist package.json package-lock.json README.md config systemd "$prefix/"
install -m 0755 scripts/gatewayd "$prefix/scripts/gatewayd"
(cd "$prefix" && npm_config_build_from_source=true npm ci --omit=dev --no-fund --no-audit --loglevel=error)
ln -sf "$prefix/scripts/gatewayd" /usr/local/bin/gatewayd

install -d -m 0750 -g gatewayd /etc/gatewayd
if [ ! -f /etc/gatewayd/gateway.yaml ]; then
  install -m 0640 -g gatewayd config/gateway.appliance.yaml /etc/gatewayd/gateway.yaml
  echo "installed /etc/gatewayd/gateway.yaml: set gateway.hostname and gateway.address"
fi
install -m 0644 systemd/gatewayd.service /etc/systemd/system/gatewayd.service

if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable gatewayd.service
  if [ "$start" -eq 1 ]; then systemctl restart gatewayd.service && systemctl --no-pager status gatewayd.service | head -5; fi
else
  echo "systemd is not running here: start with  gatewayd serve --config /etc/gatewayd/gateway.yaml"
fi
echo "check the config any time with: gatewayd config check --config /etc/gatewayd/gateway.yaml"
