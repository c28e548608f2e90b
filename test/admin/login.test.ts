import t from 'tap';
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../helpers/exec.js';
import { gatewayd, startDaemon, tempDir, HOSTNAME } from '../helpers/daemon.js';

const gw = await startDaemon(t, { log: { level: 'debug' } });
const PASSWORD = 'correct horse battery staple';
const base = `https://${HOSTNAME}:${gw.httpsPort}`;

/** curl with its own cookie jar, like one browser. */
function browser() {
  const jar = join(tempDir(t, 'gwjar-'), 'cookies');
  return async (path: string, args: string[] = []) => {
    const r = await run('curl', ['-sS', '-k', '--resolve', `${HOSTNAME}:${gw.httpsPort}:127.0.0.1`, '-b', jar, '-c', jar, '-D', '-', ...args, `${base}${path}`]);
    const [head, ...rest] = r.stdout.split('\r\n\r\n');
    return { status: Number(/^HTTP\/\S+ (\d+)/.exec(head)?.[1]), head, body: rest.join('\r\n\r\n') };
  };
}
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];

t.test('a fresh appliance gets an "admin" account whose password is in a 0600 file', async (t) => {
  const file = join(gw.dataDir, 'initial-admin-password');
  t.equal(statSync(file).mode & 0o777, 0o600);
  const password = readFileSync(file, 'utf8').trim();
  t.ok(password.length >= 20);
  t.notOk(JSON.stringify(gw.logs).includes(password), 'the password is not in the log');
  const b = browser();
  const form = await b('/admin/login');
  const ok = await b('/admin/login', ['--data-urlencode', 'username=admin', '--data-urlencode', `password=${password}`, '--data-urlencode', `_csrf=${csrfOf(form.body)}`]);
  t.equal(ok.status, 303);
});

t.test('admin add reads the password from stdin and validates it', async (t) => {
  const short = await gatewayd(['admin', 'add', '--config', gw.configFile, '--username', 'ops'], 'short\n');
  t.equal(short.code, 1);
  t.match(short.stderr, /at least 10 characters/);
  const badName = await gatewayd(['admin', 'add', '--config', gw.configFile, '--username', 'a b'], `${PASSWORD}\n`);
  t.equal(badName.code, 1);
  t.match(badName.stderr, /username/);
  const r = await gatewayd(['admin', 'add', '--config', gw.configFile, '--username', 'ops'], `${PASSWORD}\n`);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /created admin "ops"/);
});

t.test('pages need a login; a wrong password is refused, the right one opens a session', async (t) => {
  const b = browser();
  const gate = await b('/admin/overview');
  t.equal(gate.status, 303);
  t.match(gate.head, /location: \/admin\/login\?next=%2Fadmin%2Foverview/i);
  t.equal((await b('/admin/api/flows')).status, 401);
  t.equal((await b('/metrics')).status, 401, 'metrics are admin-only on the gateway name');

  const form = await b('/admin/login?next=/admin/traffic');
  t.equal(form.status, 200);
  const wrong = await b('/admin/login', ['--data-urlencode', 'username=ops', '--data-urlencode', 'password=not the password', '--data-urlencode', `_csrf=${csrfOf(form.body)}`, '--data-urlencode', 'next=/admin/traffic']);
  t.equal(wrong.status, 401);
  t.match(wrong.body, /Wrong username or password/);
  t.notMatch(wrong.head, /__Host-gw_admin=/, 'no session cookie');
  const unknown = await b('/admin/login', ['--data-urlencode', 'username=nobody', '--data-urlencode', 'password=whatever12345', '--data-urlencode', `_csrf=${csrfOf(wrong.body)}`]);
  t.equal(unknown.status, 401, 'an unknown user gets the same answer');
  t.match(unknown.body, /Wrong username or password/);

  const right = await b('/admin/login', ['--data-urlencode', 'username=ops', '--data-urlencode', `password=${PASSWORD}`, '--data-urlencode', `_csrf=${csrfOf(unknown.body)}`, '--data-urlencode', 'next=/admin/traffic']);
  t.equal(right.status, 303);
  t.match(right.head, /location: \/admin\/traffic/i);
  const cookie = /set-cookie: (__Host-gw_admin=[^\r\n]+)/i.exec(right.head)?.[1] ?? '';
  t.match(cookie, /HttpOnly/i);
  t.match(cookie, /Secure/i);
  t.match(cookie, /SameSite=Strict/i);
  t.match(cookie, /Path=\//);

  const shell = await b('/admin/traffic');
  t.equal(shell.status, 200);
  t.match(shell.body, /<h2>Traffic<\/h2>/);
  t.match(shell.body, /href="\/admin\/overview"/, 'the shell lists its sections');
  const flows = await b('/admin/api/flows?limit=5');
  t.equal(flows.status, 200);
  t.ok(Array.isArray(JSON.parse(flows.body).flows));
  t.equal((await b('/admin/api/flows?limit=abc')).status, 400);
  t.equal((await b('/metrics')).status, 200);
  t.notOk(JSON.stringify(gw.logs).includes(PASSWORD), 'the password is never logged');

  const forgedLogout = await b('/admin/logout', ['-X', 'POST', '--data-urlencode', '_csrf=forged']);
  t.equal(forgedLogout.status, 403, 'a logout without a valid token is refused');
  t.equal((await b('/admin/api/flows')).status, 200, 'and the session is still there');
  const logout = await b('/admin/logout', ['-X', 'POST', '--data-urlencode', `_csrf=${csrfOf(shell.body)}`]);
  t.equal(logout.status, 303);
  t.equal((await b('/admin/api/flows')).status, 401, 'the session ends at once');
});

t.test('CSRF: a login or logout without a valid token is refused', async (t) => {
  const b = browser();
  await b('/admin/login');
  const none = await b('/admin/login', ['--data-urlencode', 'username=ops', '--data-urlencode', `password=${PASSWORD}`]);
  t.equal(none.status, 403);
  t.match(JSON.parse(none.body), { error: 'csrf', message: /CSRF/ });
  const forged = await b('/admin/login', ['--data-urlencode', 'username=ops', '--data-urlencode', `password=${PASSWORD}`, '--data-urlencode', '_csrf=forged-token']);
  t.equal(forged.status, 403);
  t.notMatch(forged.head, /__Host-gw_admin=/);
  // A token minted for another browser does not work with this browser's secret.
  const other = browser();
  const otherForm = await other('/admin/login');
  const crossed = await b('/admin/login', ['--data-urlencode', 'username=ops', '--data-urlencode', `password=${PASSWORD}`, '--data-urlencode', `_csrf=${csrfOf(otherForm.body)}`]);
  t.equal(crossed.status, 403);
});

t.test('the loopback metrics port serves Prometheus text without a login', async (t) => {
  const gw2 = await startDaemon(t, { listen: { metrics: '127.0.0.1:0' } });
  const r = await run('curl', ['-sS', `http://127.0.0.1:${gw2.metricsPort}/metrics`]);
  t.match(r.stdout, /# TYPE gatewayd_tls_connections_total counter/);
});
