import t from 'tap';
import { readFileSync, statSync } from 'node:fs';
import { run } from '../helpers/exec.js';
import { ROOT, gatewayd } from '../helpers/daemon.js';

t.test('the systemd unit passes systemd-analyze verify and carries the hardening', async (t) => {
  const unit = `${ROOT}systemd/gatewayd.service`;
  const r = await run('systemd-analyze', ['verify', unit]);
  t.equal(r.code, 0, r.stderr);
  const text = readFileSync(unit, 'utf8');
  for (const line of ['User=gatewayd', 'AmbientCapabilities=CAP_NET_BIND_SERVICE', 'StateDirectory=gatewayd', 'ExecReload=/bin/kill -HUP $MAINPID',
    'NoNewPrivileges=true', 'ProtectSystem=strict', 'PrivateTmp=true', 'ProtectHome=true']) {
    t.ok(text.split('\n').includes(line), line);
  }
});

t.test('the appliance config shipped for install.sh is valid', async (t) => {
  const r = await gatewayd(['config', 'check', '--config', `${ROOT}config/gateway.appliance.yaml`]);
  t.equal(r.code, 0, r.stderr);
});

t.test('scripts are executable and the wrapper runs the CLI', async (t) => {
  for (const f of ['scripts/gatewayd', 'scripts/install.sh', '.ci/run']) t.ok(statSync(`${ROOT}${f}`).mode & 0o100, f);
  const r = await run(`${ROOT}scripts/gatewayd`, ['--version']);
  t.match(r.stdout, /^\d+\.\d+\.\d+/);
});
