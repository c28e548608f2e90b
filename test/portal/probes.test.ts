import t from 'tap';
import { run } from '../helpers/exec.js';
import { startDaemon, HOSTNAME } from '../helpers/daemon.js';
import { curl } from '../helpers/clients.js';

const gw = await startDaemon(t);
const portal = `https://${HOSTNAME}:${gw.httpsPort}/portal`;

/** A plain-HTTP request to port 80 (ephemeral here) with the given Host; returns status and Location. */
async function plain(host: string, path: string, method = 'GET'): Promise<{ status: number; location: string }> {
  const r = await run('curl', ['-sS', '-o', '/dev/null', '-X', method, '-H', `Host: ${host}`, '-w', '%{http_code} %{redirect_url}', `http://127.0.0.1:${gw.httpPort}${path}`]);
  const [status, location] = r.stdout.split(' ');
  return { status: Number(status), location: location ?? '' };
}

t.test('the probe paths of every OS redirect to the portal, whatever the Host', async (t) => {
  for (const [host, path] of [
    ['connectivitycheck.gstatic.com', '/generate_204'],
    ['www.google.com', '/gen_204'],
    ['captive.apple.com', '/hotspot-detect.html'],
    ['www.apple.com', '/library/test/success.html'],
    ['www.msftconnecttest.com', '/connecttest.txt'],
    ['www.msftncsi.com', '/ncsi.txt'],
    ['detectportal.firefox.com', '/canonical.html'],
    ['nmcheck.gnome.org', '/check_network_status.txt'],
    ['anything.example', '/generate_204'],
  ]) {
    t.same(await plain(host, path), { status: 302, location: portal }, `${host}${path}`);
  }
});

t.test('dedicated probe hosts redirect on any path (keyed by Host)', async (t) => {
  t.same(await plain('captive.apple.com', '/'), { status: 302, location: portal });
  t.same(await plain('connectivity-check.ubuntu.com', '/'), { status: 302, location: portal });
  t.same(await plain('clients3.google.com', '/generate_204?x=1'), { status: 302, location: portal });
});

t.test('every other plain-HTTP request goes to https on the same name', async (t) => {
  t.same(await plain('example.com', '/foo?x=1'), { status: 301, location: 'https://example.com/foo?x=1' });
  t.same(await plain('example.com', '/form', 'POST'), { status: 308, location: 'https://example.com/form' });
  t.same(await plain(HOSTNAME, '/admin'), { status: 301, location: `https://${HOSTNAME}:${gw.httpsPort}/admin` });
  t.same(await plain('not a host!', '/x'), { status: 301, location: `https://${HOSTNAME}:${gw.httpsPort}/x` }, 'a bad Host falls back to the gateway name');
});

t.test('the probe paths on the gateway name over https redirect too', async (t) => {
  for (const path of ['/generate_204', '/hotspot-detect.html', '/connecttest.txt']) {
    const r = await run('curl', ['-sS', '-k', '-o', '/dev/null', '--resolve', `${HOSTNAME}:${gw.httpsPort}:127.0.0.1`,
      '-w', '%{http_code} %{redirect_url}', `https://${HOSTNAME}:${gw.httpsPort}${path}`]);
    t.equal(r.stdout, `302 ${portal}`, path);
  }
  const page = await curl(HOSTNAME, gw.httpsPort, '/portal', ['-k']);
  t.equal(page.status, 200);
  t.match(page.body, /<input id="email" name="email"/, 'the enrollment form');
});

t.test('RFC 8908 captive portal API', async (t) => {
  const r = await run('curl', ['-sS', '-k', '-D', '-', '--resolve', `${HOSTNAME}:${gw.httpsPort}:127.0.0.1`, `https://${HOSTNAME}:${gw.httpsPort}/api/captive`]);
  t.match(r.stdout, /content-type: application\/captive\+json/i);
  const body = JSON.parse(r.stdout.split('\r\n\r\n')[1]);
  t.same(body, { captive: true, 'user-portal-url': portal });
  await run('sqlite3', [`${gw.dataDir}/gateway.db`, "INSERT INTO devices (client_ip, enrolled_at) VALUES ('127.0.0.1', 1)"]);
  const after = await run('curl', ['-sS', '-k', '--resolve', `${HOSTNAME}:${gw.httpsPort}:127.0.0.1`, `https://${HOSTNAME}:${gw.httpsPort}/api/captive`]);
  t.equal(JSON.parse(after.stdout).captive, false, 'an enrolled device is no longer captive');
});
