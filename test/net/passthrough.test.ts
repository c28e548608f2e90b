import t from 'tap';
import { run, waitFor } from '../helpers/exec.js';
import { startDaemon } from '../helpers/daemon.js';
import { startBackend, sha256, pattern } from '../helpers/tls-backend.js';
import { curl, fingerprintOf, firstPem, sClient } from '../helpers/clients.js';
import { startDnsUpstream } from '../helpers/dns-upstream.js';
import { captureClientHello } from '../helpers/hello.js';
import { createServer, connect, type AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

// A raw TCP destination: waits for the client's FIN, then answers with what it received and closes.
const rawBackend = createServer({ allowHalfOpen: true }, (s) => {
  const chunks: Buffer[] = [];
  s.on('data', (d) => chunks.push(d));
  s.on('end', () => {
    const all = Buffer.concat(chunks);
    s.end(`${all.length} ${createHash('sha256').update(all).digest('hex')}`);
  });
});
await new Promise<void>((r) => rawBackend.listen(0, '127.0.0.1', r));
t.teardown(() => rawBackend.close());

const backend = await startBackend(t);
const dns = await startDnsUpstream(t, { 'dynamic.test': '127.0.0.1' });
const gw = await startDaemon(t, {
  tls: {
    routes: [
      { sni: 'backend.test', to: `127.0.0.1:${backend.port}` },
      { sni: '*.wild.test', to: `127.0.0.1:${backend.port}` },
      { sni: 'raw.test', to: `127.0.0.1:${(rawBackend.address() as AddressInfo).port}` },
    ],
    passthroughPort: backend.port, // names resolved through DNS are dialled on this port
  },
  dns: { upstreams: [`127.0.0.1:${dns.port}`], timeoutMs: 500 },
});

t.test('static route: openssl s_client sees the backend certificate untouched', async (t) => {
  const r = await sClient(gw.httpsPort, 'backend.test');
  const pem = firstPem(r.stdout);
  t.ok(pem, 'a certificate arrived');
  t.equal(await fingerprintOf(pem!), backend.fingerprint, 'same certificate as the backend serves');
  t.match(r.stdout, /Verify return code: 19|Verify return code: 21|self-signed|unable to get local issuer/, 'not the gateway CA: the backend CA is not trusted here');
  const verified = await sClient(gw.httpsPort, 'backend.test', ['-CAfile', backend.caFile, '-verify_hostname', 'backend.test']);
  t.match(verified.stdout, /Verify return code: 0 \(ok\)/, 'verifies against the backend CA with hostname check');
});

t.test('static route: curl trusting only the backend CA', async (t) => {
  const r = await curl('backend.test', gw.httpsPort, '/hello', ['--cacert', backend.caFile]);
  t.equal(r.status, 200, r.stderr);
  t.match(r.body, /hello from backend/);
  const h1 = await curl('backend.test', gw.httpsPort, '/hello', ['--cacert', backend.caFile, '--http1.1']);
  t.equal(h1.httpVersion, '1.1');
});

t.test('a 20 MB download and a 5 MB upload arrive intact', async (t) => {
  const n = 20 * 1024 * 1024;
  const r = await run('curl', ['-sS', '--max-time', '30', '--resolve', `backend.test:${gw.httpsPort}:127.0.0.1`, '--cacert', backend.caFile, `https://backend.test:${gw.httpsPort}/big?n=${n}`]);
  t.equal(r.stdoutBuffer.length, n);
  t.equal(sha256(r.stdoutBuffer), sha256(pattern(n)));
  const up = pattern(5 * 1024 * 1024);
  const u = await run('curl', ['-sS', '--max-time', '30', '--resolve', `backend.test:${gw.httpsPort}:127.0.0.1`, '--cacert', backend.caFile,
    '--data-binary', '@-', '-H', 'content-type: application/octet-stream', `https://backend.test:${gw.httpsPort}/echo`], { input: up });
  t.equal(u.stdout, sha256(up));
});

t.test('wildcard route', async (t) => {
  const r = await curl('api.wild.test', gw.httpsPort, '/hello', ['--cacert', backend.caFile]);
  t.equal(r.status, 200, r.stderr);
  t.match(r.body, /host api.wild.test/);
});

t.test('a name with no static route is resolved through dns.upstreams', async (t) => {
  const r = await curl('dynamic.test', gw.httpsPort, '/hello', ['-k']);
  t.equal(r.status, 200, r.stderr);
  t.ok(dns.queries.includes('dynamic.test A'), 'asked the upstream');
  const nx = await curl('nowhere.test', gw.httpsPort, '/hello', ['-k']);
  t.equal(nx.status, 0, 'unresolvable name: the connection is closed');
  t.not(nx.code, 0);
});

t.test('half-close: the client FIN reaches the destination, whose answer still comes back', async (t) => {
  const hello = await captureClientHello('raw.test');
  const payload = Buffer.concat([hello, pattern(300_000)]);
  const sock = connect(gw.httpsPort, '127.0.0.1');
  sock.on('error', () => undefined);
  sock.end(payload); // write everything, then FIN
  const chunks: Buffer[] = [];
  for await (const c of sock) chunks.push(c as Buffer);
  t.equal(Buffer.concat(chunks).toString(), `${payload.length} ${sha256(payload)}`);
});

t.test('every connection becomes a flow record in the store', async (t) => {
  const db = `${gw.dataDir}/gateway.db`;
  const query = (sql: string) => run('sqlite3', ['-json', db, sql]).then((r) => (r.stdout.trim() ? JSON.parse(r.stdout) : []));
  const rows: any[] = await waitFor(async () => {
    const got = await query("SELECT * FROM flows WHERE route = 'passthrough' ORDER BY id");
    return got.some((f: any) => f.sni === 'nowhere.test') && got.length >= 6 ? got : undefined;
  }, 5000, 'flow records');
  const big = rows.find((f) => f.sni === 'backend.test' && f.bytes_down > 20 * 1024 * 1024);
  t.ok(big, 'the download is recorded with its bytes');
  t.equal(big.destination, `127.0.0.1:${backend.port}`);
  t.equal(big.client_ip, '127.0.0.1');
  t.match(big.outcome, /^(ok|client-reset)$/, 'ended normally (curl may close with a reset)');
  t.ok(big.duration_ms >= 0 && big.started_at > Date.now() - 60000);
  const upload = rows.find((f) => f.sni === 'backend.test' && f.bytes_up > 5 * 1024 * 1024);
  t.ok(upload, 'the upload is recorded with its bytes up');
  t.equal(rows.find((f) => f.sni === 'dynamic.test')?.destination, `127.0.0.1:${backend.port}`);
  t.equal(rows.find((f) => f.sni === 'nowhere.test')?.outcome, 'resolve-failed');
});
