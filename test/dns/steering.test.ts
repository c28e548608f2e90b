import t from 'tap';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { run, sleep, waitFor } from '../helpers/exec.js';
import { gatewayd, startDaemon, HOSTNAME } from '../helpers/daemon.js';
import { startUnbound } from '../helpers/unbound.js';
import { dig } from '../helpers/dig.js';

const unbound = await startUnbound(t, [
  'captive.apple.com. 60 IN A 198.51.100.7',
  'api.openai.com. 60 IN A 198.51.100.8',
  'www.lab.test. 60 IN A 192.0.2.10',
]);
const upstreams = [`127.0.0.1:${unbound.port}`];
const sql = (db: string, q: string) => run('sqlite3', ['-json', db, q]).then((r) => (r.stdout.trim() ? JSON.parse(r.stdout) : []));

t.test('captive steering: probe names go to the gateway until the device enrolls', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams, captive: true } });
  const steered = await dig(gw.dnsPort, 'captive.apple.com');
  t.equal(steered.answers[0]?.data, '127.0.0.1', 'gateway.address');
  t.ok(steered.flags.includes('aa'));
  t.equal((await dig(gw.dnsPort, 'connectivitycheck.gstatic.com')).answers[0]?.data, '127.0.0.1');
  t.equal((await dig(gw.dnsPort, 'www.lab.test')).answers[0]?.data, '192.0.2.10', 'other names are forwarded');
  await sql(`${gw.dataDir}/gateway.db`, "INSERT INTO devices (client_ip, identity, identity_mode, enrolled_at) VALUES ('127.0.0.1', 'a@example.com', 'none', 1)");
  t.equal((await dig(gw.dnsPort, 'captive.apple.com')).answers[0]?.data, '198.51.100.7', 'an enrolled device gets the real answer');
  const probe = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: captive.apple.com', `http://127.0.0.1:${gw.httpPort}/hotspot-detect.html`]);
  t.equal(probe.stdout, '200', 'and its probe gets the success page');
});

t.test('captive steering off (the default): probe names are forwarded', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams } });
  t.equal((await dig(gw.dnsPort, 'captive.apple.com')).answers[0]?.data, '198.51.100.7');
});

t.test('GATEWAY_DNS_CAPTIVE=1 turns captive steering on', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams } }, { env: { GATEWAY_DNS_CAPTIVE: '1' } });
  t.equal((await dig(gw.dnsPort, 'captive.apple.com')).answers[0]?.data, '127.0.0.1');
});

t.test('AI steering, canaries, static hosts, the gateway name, and lookup records', async (t) => {
  const gw = await startDaemon(t, {
    dns: {
      upstreams, steerAi: true,
      aiServices: [{ name: 'Corp LLM', domains: ['llm.corp.test'] }],
      hosts: { 'printer.lan': '192.168.1.50', 'nas.lan': ['192.168.1.60', 'fd00::60'] },
    },
  });
  const a = await dig(gw.dnsPort, 'api.openai.com');
  t.equal(a.answers[0]?.data, '127.0.0.1', 'an AI name answers the gateway');
  t.equal((await dig(gw.dnsPort, 'chat.deepseek.com')).answers[0]?.data, '127.0.0.1');
  t.equal((await dig(gw.dnsPort, 'x.llm.corp.test')).answers[0]?.data, '127.0.0.1', 'catalog extended in the config');
  const aaaa = await dig(gw.dnsPort, 'api.openai.com', 'AAAA');
  t.equal(aaaa.status, 'NOERROR');
  t.equal(aaaa.answers.length, 0, 'no IPv6 way around the gateway');
  t.equal(aaaa.authority[0]?.type, 'SOA');
  const https = await dig(gw.dnsPort, 'api.openai.com', 'TYPE65');
  t.equal(https.answers.length, 0, 'no HTTPS record, so no ECH hint or alt address');
  t.equal(unbound.queries().filter((q) => q.startsWith('api.openai.com.')).length, 0, 'steered names never go upstream');

  for (const canary of ['use-application-dns.net', 'mask.icloud.com', 'mask-h2.icloud.com']) {
    t.equal((await dig(gw.dnsPort, canary)).status, 'NXDOMAIN', canary);
  }
  t.equal((await dig(gw.dnsPort, 'printer.lan')).answers[0]?.data, '192.168.1.50');
  t.equal((await dig(gw.dnsPort, 'nas.lan', 'AAAA')).answers[0]?.data, 'fd00::60');
  t.equal((await dig(gw.dnsPort, HOSTNAME)).answers[0]?.data, '127.0.0.1', 'the gateway name resolves to gateway.address');

  const rows = await waitFor(async () => {
    const r = await sql(`${gw.dataDir}/gateway.db`, 'SELECT * FROM dns_lookups ORDER BY id');
    return r.length >= 5 ? r : undefined;
  }, 5000, 'lookup records');
  t.match(rows[0], { client_ip: '127.0.0.1', name: 'api.openai.com', qtype: 'A', service: 'OpenAI', transport: 'udp', steered: 1 });
  t.ok(rows.some((r: any) => r.service === 'Corp LLM'));
  t.notOk(rows.some((r: any) => r.name === 'printer.lan'), 'only AI names are recorded');
});

t.test('with AI steering off, AI names are forwarded but still recorded', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams } });
  t.equal((await dig(gw.dnsPort, 'api.openai.com')).answers[0]?.data, '198.51.100.8');
  const rows = await waitFor(async () => {
    const r = await sql(`${gw.dataDir}/gateway.db`, 'SELECT * FROM dns_lookups');
    return r.length ? r : undefined;
  }, 5000, 'lookup record');
  t.match(rows[0], { name: 'api.openai.com', service: 'OpenAI', steered: 0 });
});

t.test('not an open resolver: clients outside dns.allowNetworks are REFUSED; a client over its rate is dropped', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams, allowNetworks: ['127.0.0.1/32'], rateLimit: { qps: 5, burst: 5 } } });
  t.equal((await dig(gw.dnsPort, 'www.lab.test', 'A', ['-b', '127.0.0.2'])).status, 'REFUSED');
  t.equal((await dig(gw.dnsPort, 'www.lab.test', 'A', ['-b', '127.0.0.2', '+tcp'])).status, 'REFUSED');
  t.equal((await dig(gw.dnsPort, 'www.lab.test')).status, 'NOERROR');
  await sleep(1100);
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  let answered = 0;
  sock.on('message', () => answered++);
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  for (let i = 0; i < 40; i++) {
    sock.send(dnsPacket.encode({ type: 'query', id: i, questions: [{ type: 'A', name: 'www.lab.test' }] }), gw.dnsPort, '127.0.0.1');
  }
  await sleep(500);
  t.ok(answered >= 5 && answered <= 10, `answered ${answered} of 40 at 5 qps with a burst of 5`);
});

t.test('DNS over HTTPS: kdig over HTTP/2 (POST and GET), curl over HTTP/1.1, errors', async (t) => {
  const gw = await startDaemon(t, { dns: { upstreams, steerAi: true } });
  const caFile = join(gw.dir, 'ca.pem');
  writeFileSync(caFile, (await gatewayd(['ca', 'export', '--config', gw.configFile])).stdout);
  const kdig = (extra: string[]) => run('kdig', ['@127.0.0.1', '-p', String(gw.httpsPort), `+tls-ca=${caFile}`, `+tls-hostname=${HOSTNAME}`, ...extra]);
  const post = await kdig(['+https', 'www.lab.test']);
  t.match(post.stdout, /HTTP\/2-POST/);
  t.match(post.stdout, /www\.lab\.test\.\s+\d+\s+IN\s+A\s+192\.0\.2\.10/);
  const get = await kdig(['+https-get', 'api.openai.com']);
  t.match(get.stdout, /HTTP\/2-GET/);
  t.match(get.stdout, /api\.openai\.com\.\s+\d+\s+IN\s+A\s+127\.0\.0\.1/);

  const query = dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'www.lab.test' }] });
  const base = ['-sS', '--http1.1', '--cacert', caFile, '--resolve', `${HOSTNAME}:${gw.httpsPort}:127.0.0.1`];
  const url = `https://${HOSTNAME}:${gw.httpsPort}/dns-query`;
  const queryFile = join(gw.dir, 'query.bin');
  const headersFile = join(gw.dir, 'headers.txt');
  writeFileSync(queryFile, query);
  const h1 = await run('curl', [...base, '-H', 'content-type: application/dns-message', '--data-binary', `@${queryFile}`, '-D', headersFile, url]);
  const headers = readFileSync(headersFile, 'utf8');
  t.match(headers, /content-type: application\/dns-message/i);
  t.match(headers, /cache-control: max-age=\d+/i);
  t.equal((dnsPacket.decode(h1.stdoutBuffer).answers![0] as { data: string }).data, '192.0.2.10');
  const code = async (args: string[]) => (await run('curl', [...base, '-o', '/dev/null', '-w', '%{http_code}', ...args])).stdout;
  t.equal(await code([url]), '400', 'GET without ?dns=');
  t.equal(await code([`${url}?dns=***`]), '400', 'not base64url');
  t.equal(await code(['-H', 'content-type: text/plain', '--data', 'hello', url]), '415', 'POST of another media type');
  t.equal(await code(['-H', 'content-type: application/dns-message', '--data', 'x', url]), '400', 'shorter than a header');
});

t.test('a DNS port that cannot be bound explains itself', async (t) => {
  const sock = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  t.teardown(() => sock.close());
  const gw = startDaemon(t, { dns: { upstreams }, listen: { dns: `127.0.0.1:${sock.address().port}` } });
  await t.rejects(gw, /cannot bind dns on 127\.0\.0\.1:\d+: address already in use/);
});
