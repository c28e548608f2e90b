import t from 'tap';
import { connect as tlsConnect } from 'node:tls';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { waitFor, sleep } from '../helpers/exec.js';
import { baseConfig, gatewayd, startDaemon, tempDir } from '../helpers/daemon.js';
import { startBackend } from '../helpers/tls-backend.js';
import { curl } from '../helpers/clients.js';

const backend = await startBackend(t);

t.test('SIGHUP applies a new config; a bad one is refused and the old keeps running', async (t) => {
  const gw = await startDaemon(t, { tls: { routes: [{ sni: 'backend.test', to: `127.0.0.1:${backend.port}` }] } });
  const viaRoute = (name: string) => curl(name, gw.httpsPort, '/hello', ['-k']);
  t.equal((await viaRoute('backend.test')).status, 200);
  t.equal((await viaRoute('added.test')).status, 0, 'no route yet: the name does not resolve');

  const config = baseConfig(gw.dataDir, {
    tls: { routes: [{ sni: 'backend.test', to: `127.0.0.1:${backend.port}` }, { sni: 'added.test', to: `127.0.0.1:${backend.port}` }] },
    listen: { https: `127.0.0.1:${gw.httpsPort}`, http: `127.0.0.1:${gw.httpPort}` },
  });
  gw.writeConfig(config);
  gw.proc.kill('SIGHUP');
  await gw.waitForLog((l) => l.msg === 'config reloaded');
  t.equal((await viaRoute('added.test')).status, 200, 'the new route works without a restart');

  (await import('node:fs')).writeFileSync(gw.configFile, 'gateway:\n  hostname: [oops\n');
  gw.proc.kill('SIGHUP');
  const failed = await gw.waitForLog((l) => l.msg === 'config reload failed; the previous config stays in effect');
  t.match(failed.problems.join('\n'), /gateway\.yaml:\d+:\d+: YAML/, 'the log says where and why');
  t.equal((await viaRoute('added.test')).status, 200, 'the previous config still serves');
  t.equal(gw.proc.exitCode, null);

  gw.writeConfig({ ...config, tls: { routes: [{ sni: 'added.test', to: 'not a target' }] } });
  gw.proc.kill('SIGHUP');
  await waitFor(() => gw.logs.filter((l) => l.msg?.startsWith('config reload failed')).length === 2, 5000, 'second failure');
  t.equal((await viaRoute('added.test')).status, 200);
});

t.test('SIGTERM drains: open relays finish, new connections are refused, exit 0', async (t) => {
  const gw = await startDaemon(t, { tls: { routes: [{ sni: 'backend.test', to: `127.0.0.1:${backend.port}` }] } });
  const tls = tlsConnect({ port: gw.httpsPort, host: '127.0.0.1', servername: 'backend.test', ca: readFileSync(backend.caFile) });
  await new Promise((r, j) => tls.once('secureConnect', r).once('error', j));
  gw.proc.kill('SIGTERM');
  await gw.waitForLog((l) => l.msg === 'stopping: draining connections');
  await sleep(200);
  const refused = await curl('backend.test', gw.httpsPort, '/hello', ['-k', '--max-time', '2']);
  t.equal(refused.status, 0, 'the listener is closed');
  tls.write('GET /hello HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n');
  let body = '';
  for await (const chunk of tls) body += chunk;
  t.match(body, /hello from backend/, 'the open connection was still relayed');
  t.equal(await gw.exited, 0, 'clean exit');
  t.ok(gw.logs.some((l) => l.msg === 'stopped'));
});

t.test('a port that cannot be bound gives a clear message and exit 1', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const dir = tempDir(t);
  const file = `${dir}/gateway.yaml`;
  (await import('node:fs')).writeFileSync(file, stringify(baseConfig(`${dir}/data`, { listen: { https: `127.0.0.1:${port}` } })));
  const r = await gatewayd(['serve', '--config', file]);
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`cannot bind https on 127\\.0\\.0\\.1:${port}: address already in use`));
});
