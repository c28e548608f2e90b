import t from 'tap';
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import dnsPacket from 'dns-packet';
import { sleep } from '../helpers/exec.js';
import { startDaemon } from '../helpers/daemon.js';
import { startUnbound } from '../helpers/unbound.js';
import { dig } from '../helpers/dig.js';

const txt = Array.from({ length: 12 }, (_, i) => `big.lab.test. 300 IN TXT "${String(i).padStart(2, '0')}${'x'.repeat(60)}"`);
const unbound = await startUnbound(t, [
  'www.lab.test. 20 IN A 192.0.2.10',
  'short.lab.test. 2 IN A 192.0.2.11',
  'stale.lab.test. 2 IN A 192.0.2.12',
  'burst.lab.test. 300 IN A 192.0.2.13',
  ...txt,
]);
const gw = await startDaemon(t, {
  // No rate limit here: the fuzz below sends thousands of packets from the same address as dig.
  dns: { upstreams: ['127.0.0.1:9', `127.0.0.1:${unbound.port}`], timeoutMs: 300, cache: { minTtl: 1 }, rateLimit: { qps: 0 } },
});
const seen = (q: string) => unbound.queries().filter((x) => x === q).length;

t.test('forwards over UDP and TCP, keeping EDNS0', async (t) => {
  const udp = await dig(gw.dnsPort, 'www.lab.test');
  t.equal(udp.status, 'NOERROR');
  t.equal(udp.answers[0]?.data, '192.0.2.10');
  t.ok(udp.edns, 'EDNS0 answered with EDNS0');
  t.ok(udp.flags.includes('ra'));
  const tcp = await dig(gw.dnsPort, 'www.lab.test', 'A', ['+tcp']);
  t.equal(tcp.answers[0]?.data, '192.0.2.10');
  const plain = await dig(gw.dnsPort, 'www.lab.test', 'A', ['+noedns']);
  t.notOk(plain.edns, 'no EDNS0 asked, none given');
});

t.test('failover: the first upstream is dead, the second answers', async (t) => {
  const r = await dig(gw.dnsPort, 'burst.lab.test');
  t.equal(r.answers[0]?.data, '192.0.2.13');
});

t.test('cache: a second query is not forwarded and its TTL has gone down', async (t) => {
  const first = await dig(gw.dnsPort, 'www.lab.test');
  const before = seen('www.lab.test. A');
  await sleep(2100);
  const second = await dig(gw.dnsPort, 'www.lab.test');
  t.equal(seen('www.lab.test. A'), before, 'answered from the cache');
  t.ok(second.answers[0].ttl <= first.answers[0].ttl - 2, `TTL ${first.answers[0].ttl} -> ${second.answers[0].ttl}`);
});

t.test('a cached answer echoes the question exactly as asked (0x20 case) with the client ID', async (t) => {
  await dig(gw.dnsPort, 'www.lab.test');
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  const got = new Promise<Buffer>((r) => sock.once('message', r));
  sock.send(dnsPacket.encode({ type: 'query', id: 4321, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'wWw.LaB.tEsT' }] }), gw.dnsPort, '127.0.0.1');
  const answer = dnsPacket.decode(await got);
  t.equal(answer.id, 4321);
  t.equal(answer.questions![0].name, 'wWw.LaB.tEsT');
  t.ok((answer.flags ?? 0) & dnsPacket.RECURSION_DESIRED, 'RD echoed');
  t.equal((answer.answers![0] as { data: string }).data, '192.0.2.10');
});

t.test('negative caching (RFC 2308): NXDOMAIN kept for the SOA minimum', async (t) => {
  const a = await dig(gw.dnsPort, 'missing.lab.test');
  t.equal(a.status, 'NXDOMAIN');
  t.equal(a.authority[0]?.type, 'SOA');
  t.ok(a.authority[0].ttl <= 30, 'negative TTL bounded by the SOA minimum');
  const b = await dig(gw.dnsPort, 'missing.lab.test');
  t.equal(b.status, 'NXDOMAIN');
  t.equal(seen('missing.lab.test. A'), 1, 'asked upstream once');
  const nodata = await dig(gw.dnsPort, 'www.lab.test', 'AAAA');
  t.equal(nodata.status, 'NOERROR');
  t.equal(nodata.answers.length, 0);
  await dig(gw.dnsPort, 'www.lab.test', 'AAAA');
  t.equal(seen('www.lab.test. AAAA'), 1, 'NODATA cached too');
});

t.test('expired entries are fetched again', async (t) => {
  await dig(gw.dnsPort, 'short.lab.test');
  await sleep(2300);
  const r = await dig(gw.dnsPort, 'short.lab.test');
  t.equal(r.answers[0]?.data, '192.0.2.11');
  t.equal(seen('short.lab.test. A'), 2);
});

t.test('identical queries in flight are coalesced', async (t) => {
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  let answered = 0;
  sock.on('message', () => answered++);
  for (let i = 0; i < 20; i++) {
    sock.send(dnsPacket.encode({ type: 'query', id: i + 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'coalesce.lab.test' }] }), gw.dnsPort, '127.0.0.1');
  }
  await sleep(1500);
  t.equal(answered, 20, 'every client got its answer');
  t.equal(seen('coalesce.lab.test. A'), 1, 'upstream asked once');
});

t.test('an answer too big for UDP is truncated; dig retries over TCP', async (t) => {
  const udp = await dig(gw.dnsPort, 'big.lab.test', 'TXT', ['+noedns', '+ignore']);
  t.ok(udp.flags.includes('tc'), 'TC set');
  t.equal(udp.answers.length, 0);
  const auto = await dig(gw.dnsPort, 'big.lab.test', 'TXT', ['+noedns']);
  t.equal(auto.answers.length, 12, 'all records over TCP');
});

t.test('malformed packets: FORMERR where a reply is possible, and the resolver keeps answering', async (t) => {
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  const replies: Buffer[] = [];
  sock.on('message', (m) => replies.push(m));
  const header = Buffer.from([0xab, 0xcd, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 3, 0x77]); // question cut short
  sock.send(header, gw.dnsPort, '127.0.0.1');
  await sleep(200);
  t.equal(replies.length, 1);
  t.equal(replies[0].readUInt16BE(0), 0xabcd, 'same id');
  t.equal(replies[0][3] & 0x0f, 1, 'FORMERR');
  const good = dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'www.lab.test' }] });
  for (let i = 0; i < 3000; i++) {
    let p: Buffer;
    if (i % 2) p = randomBytes(Math.floor(Math.random() * 300));
    else {
      p = Buffer.from(good);
      for (let k = 0; k < 3; k++) p[Math.floor(Math.random() * p.length)] = Math.floor(Math.random() * 256);
    }
    sock.send(p, gw.dnsPort, '127.0.0.1');
    if (i % 200 === 0) await sleep(10);
  }
  await sleep(1000);
  t.equal(gw.proc.exitCode, null, 'still running');
  const after = await dig(gw.dnsPort, 'www.lab.test');
  t.equal(after.answers[0]?.data, '192.0.2.10', 'and still answering');
  const tcpGarbage = await import('node:net').then((net) => new Promise<void>((resolve) => {
    const s = net.connect(gw.dnsPort, '127.0.0.1', () => s.end(Buffer.concat([Buffer.from([0, 40]), randomBytes(40)])));
    s.on('close', () => resolve());
    s.on('error', () => resolve());
    s.resume();
  }));
  void tcpGarbage;
  t.equal((await dig(gw.dnsPort, 'www.lab.test', 'A', ['+tcp'])).answers[0]?.data, '192.0.2.10');
});

t.test('serve-stale: with every upstream down, an expired answer is still given', async (t) => {
  await dig(gw.dnsPort, 'stale.lab.test');
  await unbound.stop();
  await sleep(2300);
  const r = await dig(gw.dnsPort, 'stale.lab.test');
  t.equal(r.status, 'NOERROR');
  t.equal(r.answers[0]?.data, '192.0.2.12');
  t.equal(r.answers[0]?.ttl, 30, 'stale answers carry TTL 30 (RFC 8767)');
  const never = await dig(gw.dnsPort, 'never-seen.lab.test');
  t.equal(never.status, 'SERVFAIL', 'no cached answer: SERVFAIL');
});
