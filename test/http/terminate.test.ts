import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../helpers/exec.js';
import { gatewayd, startDaemon, HOSTNAME } from '../helpers/daemon.js';
import { curl, firstPem, sClient } from '../helpers/clients.js';

const gw = await startDaemon(t);
const caPem = join(gw.dir, 'exported-ca.pem');
const caDer = join(gw.dir, 'exported-ca.der');

t.test('ca export writes the CA as PEM and as DER, the same certificate', async (t) => {
  const pem = await gatewayd(['ca', 'export', '--config', gw.configFile, '--format', 'pem']);
  t.equal(pem.code, 0, pem.stderr);
  t.match(pem.stdout, /^-----BEGIN CERTIFICATE-----/);
  writeFileSync(caPem, pem.stdout);
  const der = await gatewayd(['ca', 'export', '--config', gw.configFile, '--format', 'der']);
  t.equal(der.code, 0);
  writeFileSync(caDer, der.stdoutBuffer);
  const fp = async (args: string[]) => (await run('openssl', ['x509', ...args, '-noout', '-fingerprint', '-sha256'])).stdout;
  t.equal(await fp(['-in', caDer, '-inform', 'der']), await fp(['-in', caPem]));
  const bad = await gatewayd(['ca', 'export', '--config', gw.configFile, '--format', 'p12']);
  t.not(bad.code, 0);
  t.match(bad.stderr, /p12.*(pem|der)|choices/i, 'an unknown format is named');
});

t.test('terminated here over HTTP/2 and HTTP/1.1, curl trusting only the exported CA', async (t) => {
  const h2 = await curl(HOSTNAME, gw.httpsPort, '/healthz', ['--cacert', caPem, '--http2']);
  t.equal(h2.status, 200, h2.stderr);
  t.equal(h2.httpVersion, '2');
  t.same(JSON.parse(h2.body), { status: 'ok' });
  const h1 = await curl(HOSTNAME, gw.httpsPort, '/healthz', ['--cacert', caPem, '--http1.1']);
  t.equal(h1.status, 200, h1.stderr);
  t.equal(h1.httpVersion, '1.1');
  const nf = await curl(HOSTNAME, gw.httpsPort, '/no/such/page', ['--cacert', caPem]);
  t.equal(nf.status, 404);
  t.match(JSON.parse(nf.body), { error: 'not_found', message: /no\/such\/page/ });
});

t.test('a connection without SNI is terminated with a certificate valid for gateway.address', async (t) => {
  const r = await run('curl', ['-sS', '--cacert', caPem, '-o', '/dev/null', '-w', '%{http_code}', `https://127.0.0.1:${gw.httpsPort}/healthz`]);
  t.equal(r.stdout, '200', r.stderr);
});

t.test('the leaf: verifies against the CA, SAN, EKU serverAuth, SHA-256, AKI = CA SKI, short life', async (t) => {
  const s = await sClient(gw.httpsPort, HOSTNAME, ['-CAfile', caPem, '-verify_hostname', HOSTNAME]);
  t.match(s.stdout, /Verify return code: 0 \(ok\)/);
  const leafFile = join(gw.dir, 'leaf.pem');
  writeFileSync(leafFile, firstPem(s.stdout)!);
  const v = await run('openssl', ['verify', '-CAfile', caPem, '-purpose', 'sslserver', leafFile]);
  t.equal(v.code, 0, v.stdout + v.stderr);
  const text = (await run('openssl', ['x509', '-in', leafFile, '-noout', '-text'])).stdout;
  t.match(text, new RegExp(`DNS:${HOSTNAME.replace('.', '\\.')}`));
  t.match(text, /IP Address:127\.0\.0\.1/);
  t.match(text, /TLS Web Server Authentication/);
  t.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
  t.match(text, /CA:FALSE/);
  t.match(text, /Public-Key: \(2048 bit\)/);
  const caText = (await run('openssl', ['x509', '-in', caPem, '-noout', '-text'])).stdout;
  const ski = /Subject Key Identifier:\s*\n\s*([0-9A-F:]+)/.exec(caText)![1];
  const aki = /Authority Key Identifier:\s*\n\s*(?:keyid:)?([0-9A-F:]+)/.exec(text)![1];
  t.equal(aki, ski, 'AKI of the leaf is the SKI of the CA');
  const dates = (await run('openssl', ['x509', '-in', leafFile, '-noout', '-startdate', '-enddate'])).stdout;
  const notBefore = Date.parse(/notBefore=(.*)/.exec(dates)![1]);
  const notAfter = Date.parse(/notAfter=(.*)/.exec(dates)![1]);
  t.ok(Date.now() - notBefore >= 3600e3 && Date.now() - notBefore <= 2 * 86400e3, 'backdated between an hour and two days');
  t.ok(notAfter - Date.now() <= 31 * 86400e3, 'lives at most the configured 30 days');
  t.not(/Modulus:[\s\S]*?Exponent/.exec(text)?.[0], /Modulus:[\s\S]*?Exponent/.exec(caText)?.[0], 'the leaf key is not the CA key');
});

t.test('CA and leaf key files are mode 0600; ca init keeps an existing CA', async (t) => {
  const stat = await run('stat', ['-c', '%a %n', join(gw.dataDir, 'ca/ca.key.pem'), join(gw.dataDir, 'ca/leaf.key.pem'), join(gw.dataDir, 'gateway.db')]);
  for (const line of stat.stdout.trim().split('\n')) t.match(line, /^600 /, line);
  const init = await gatewayd(['ca', 'init', '--config', gw.configFile]);
  t.equal(init.code, 0);
  t.match(init.stdout, /kept the existing CA/);
  const again = await gatewayd(['ca', 'export', '--config', gw.configFile]);
  t.equal(again.stdout, (await import('node:fs')).readFileSync(caPem, 'utf8'), 'unchanged');
});
