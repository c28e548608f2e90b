import t, { type Test } from 'tap';
import dgram from 'node:dgram';
import { CoaTimeoutError, RadiusCoaClient, type CoaLogger, type CoaRequest } from '../../src/nac/radius.js';
import { startNas, type NasPacket } from '../helpers/nas.js';
import { sleep } from '../helpers/exec.js';

const SECRET = 's3cr3t-coa';

interface LogLine { level: 'debug' | 'warn'; obj: Record<string, unknown>; msg: string }

function client(t: { teardown(fn: () => unknown): void }) {
  const logs: LogLine[] = [];
  const log: CoaLogger = {
    debug: (obj, msg) => logs.push({ level: 'debug', obj: obj as Record<string, unknown>, msg }),
    warn: (obj, msg) => logs.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
  };
  const c = new RadiusCoaClient({ log });
  t.teardown(() => c.close());
  return { c, logs };
}

function coa(port: number, extra: Partial<CoaRequest> = {}): CoaRequest {
  return {
    address: '127.0.0.1',
    port,
    secret: SECRET,
    kind: 'coa',
    attributes: [['Framed-IP-Address', '10.1.2.3'], ['Acct-Session-Id', 'sess-0001']],
    ...extra,
  };
}

/** The simulator verified both authenticators with hashlib/hmac, independently of the client. */
function assertAuthenticated(t: Test, p: NasPacket) {
  t.equal(p.authenticator_ok, true, 'Request Authenticator verifies at the NAS');
  t.equal(p.message_authenticator_ok, true, 'Message-Authenticator present and verifies at the NAS');
}

t.test('CoA-Request with Framed-IP-Address and Acct-Session-Id is ACKed', async (t) => {
  const nas = await startNas(t, { secret: SECRET });
  const { c, logs } = client(t);
  const res = await c.send(coa(nas.port));
  t.match(res, { outcome: 'ack', code: 'CoA-ACK', attempts: 1 });
  t.equal(res.errorCause, undefined);
  t.ok(res.rttMs >= 0 && res.rttMs < 2000, 'rtt measured');
  const [p] = await nas.waitForPackets(1);
  t.equal(p.code_name, 'CoA-Request');
  assertAuthenticated(t, p);
  t.same(p.attributes?.['Framed-IP-Address'], ['10.1.2.3']);
  t.same(p.attributes?.['Acct-Session-Id'], ['sess-0001']);
  t.equal(p.attributes?.['Message-Authenticator']?.length, 1, 'exactly one Message-Authenticator');
  t.equal(p.reply, 'CoA-ACK');
  t.notOk(JSON.stringify(logs).includes(SECRET), 'secret never logged');
});

t.test('Disconnect-Request is answered with Disconnect-ACK', async (t) => {
  const nas = await startNas(t, { secret: SECRET });
  const { c } = client(t);
  const res = await c.send(coa(nas.port, { kind: 'disconnect' }));
  t.match(res, { outcome: 'ack', code: 'Disconnect-ACK', attempts: 1 });
  const [p] = await nas.waitForPackets(1);
  t.equal(p.code_name, 'Disconnect-Request');
  assertAuthenticated(t, p);
});

t.test('NAK carries a decoded Error-Cause', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'nak', errorCause: 503 });
  const { c } = client(t);
  const res = await c.send(coa(nas.port));
  t.match(res, { outcome: 'nak', code: 'CoA-NAK', errorCause: 503, errorCauseText: 'Session-Context-Not-Found' });
  const dis = await c.send(coa(nas.port, { kind: 'disconnect' }));
  t.match(dis, { outcome: 'nak', code: 'Disconnect-NAK', errorCause: 503, errorCauseText: 'Session-Context-Not-Found' });
});

t.test('a response with Message-Authenticator and Reply-Message is verified and decoded', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'nak', errorCause: 504, replyMessageAuthenticator: true, replyMessage: 'session is pinned' });
  const { c } = client(t);
  const res = await c.send(coa(nas.port, { kind: 'disconnect' }));
  t.match(res, { outcome: 'nak', code: 'Disconnect-NAK', errorCause: 504, errorCauseText: 'Session-Context-Not-Removable', replyMessage: 'session is pinned' });
});

t.test('wrong secret: the NAS drops the request and the client times out after its retries', async (t) => {
  const nas = await startNas(t, { secret: SECRET });
  const { c, logs } = client(t);
  const started = Date.now();
  const err = await c.send(coa(nas.port, { secret: 'not-the-secret', timeoutMs: 200, retries: 2 })).catch((e) => e);
  t.type(err, CoaTimeoutError);
  t.equal(err.attempts, 3);
  t.match(err.message, `127.0.0.1:${nas.port}`);
  t.match(err.message, /3 attempts/);
  t.ok(Date.now() - started >= 550, 'waited for every attempt');
  const packets = await nas.waitForPackets(3);
  for (const p of packets) {
    t.equal(p.authenticator_ok, false, 'Request Authenticator rejected by the NAS');
    t.equal(p.message_authenticator_ok, false, 'Message-Authenticator rejected by the NAS');
    t.equal(p.reply, null);
  }
  t.notOk(JSON.stringify(logs).includes('not-the-secret'), 'secret never logged');
  t.ok(logs.some((l) => l.level === 'warn' && /timed out/.test(l.msg)), 'timeout logged');
});

t.test('retransmissions resend the identical datagram', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'drop-first:2' });
  const { c } = client(t);
  const res = await c.send(coa(nas.port, { timeoutMs: 250, retries: 3 }));
  t.match(res, { outcome: 'ack', code: 'CoA-ACK', attempts: 3 });
  t.ok(res.rttMs >= 700 && res.rttMs < 1500, `the wait doubles, 250 then 500 ms (${res.rttMs} ms)`);
  const packets = await nas.waitForPackets(3);
  t.same(packets.map((p) => p.reply), [null, null, 'CoA-ACK']);
  t.equal(new Set(packets.map((p) => p.raw)).size, 1, 'same bytes every time');
  t.equal(new Set(packets.map((p) => p.id)).size, 1, 'same identifier');
  for (const p of packets) assertAuthenticated(t, p);
});

t.test('a NAS that comes back during the retries is reached (restart on the same port)', async (t) => {
  const first = await startNas(t, { secret: SECRET });
  const port = first.port;
  await first.stop();
  const { c } = client(t);
  const pending = c.send(coa(port, { timeoutMs: 300, retries: 5 }));
  await sleep(450);
  const nas = await startNas(t, { secret: SECRET, port });
  const res = await pending;
  t.equal(res.outcome, 'ack');
  t.ok(res.attempts >= 2, `answered on attempt ${res.attempts}`);
  const packets = await nas.waitForPackets(1);
  t.equal(packets[0].reply, 'CoA-ACK', 'the restarted NAS answered a retransmission');
  assertAuthenticated(t, packets[0]);
});

t.test('concurrent requests to one NAS use distinct identifiers', async (t) => {
  const nas = await startNas(t, { secret: SECRET });
  const { c } = client(t);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => c.send(coa(nas.port, { attributes: [['Acct-Session-Id', `sess-${i}`]] }))),
  );
  t.ok(results.every((r) => r.outcome === 'ack' && r.attempts === 1), 'all ACKed first time');
  const packets = await nas.waitForPackets(20);
  t.equal(new Set(packets.map((p) => p.id)).size, 20, 'identifiers distinct');
  t.same(new Set(packets.map((p) => p.attributes?.['Acct-Session-Id']?.[0])).size, 20);
});

t.test('more than 256 outstanding requests to one NAS are queued, never sharing an identifier', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'silent' });
  const { c } = client(t);
  const started = Date.now();
  const outcomes = await Promise.all(
    Array.from({ length: 260 }, () => c.send(coa(nas.port, { timeoutMs: 400, retries: 0 })).then(
      () => 'resolved',
      (e) => (e instanceof CoaTimeoutError ? 'timeout' : String(e)),
    )),
  );
  t.ok(outcomes.every((o) => o === 'timeout'), 'every request timed out');
  t.ok(Date.now() - started >= 800, 'the last four waited for identifiers to free up');
  const packets = await nas.waitForPackets(260);
  t.equal(new Set(packets.slice(0, 256).map((p) => p.id)).size, 256, 'the first 256 in flight use all 256 identifiers');
});

t.test('configurable attributes: User-Name and Cisco-AVPair', async (t) => {
  const nas = await startNas(t, { secret: SECRET });
  const { c } = client(t);
  const res = await c.send(coa(nas.port, {
    attributes: [['User-Name', 'alice@example.org'], ['Cisco-AVPair', 'audit-session-id=abc'], ['Event-Timestamp', 1700000000]],
  }));
  t.equal(res.outcome, 'ack');
  const [p] = await nas.waitForPackets(1);
  assertAuthenticated(t, p);
  t.same(p.attributes?.['User-Name'], ['alice@example.org']);
  t.same(p.attributes?.['Cisco-AVPair'], ['audit-session-id=abc'], 'vendor 9 attribute 1 decoded by the NAS dictionary');
  t.same(p.attributes?.['Event-Timestamp'], [1700000000]);
});

t.test('bad input is rejected with a clear error', async (t) => {
  const { c } = client(t);
  await t.rejects(c.send(coa(3799, { attributes: [['Foo-Bar', 'x']] })), /unknown RADIUS attribute 'Foo-Bar'/);
  await t.rejects(c.send(coa(3799, { attributes: [['Framed-IP-Address', '10.0.0.300']] })), /Framed-IP-Address/);
  await t.rejects(c.send(coa(3799, { attributes: [['Acct-Session-Id', '']] })), /Acct-Session-Id/);
  await t.rejects(c.send(coa(3799, { attributes: [['Message-Authenticator', Buffer.alloc(16)]] })), /added automatically/);
  await t.rejects(c.send(coa(3799, { address: 'nas.example' })), /IP address/);
  await t.rejects(c.send(coa(3799, { secret: '' })), /secret/);
});

t.test('a response with a bad Response Authenticator is dropped', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'bad-auth' });
  const { c, logs } = client(t);
  await t.rejects(c.send(coa(nas.port, { timeoutMs: 200, retries: 1 })), CoaTimeoutError);
  const packets = await nas.waitForPackets(2);
  t.same(packets.map((p) => p.reply), ['CoA-ACK', 'CoA-ACK'], 'the NAS did answer');
  t.ok(logs.some((l) => l.obj.reason === 'bad Response Authenticator'), 'drop logged at debug');
});

t.test('a response with a bad Message-Authenticator is dropped', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'bad-ma' });
  const { c, logs } = client(t);
  await t.rejects(c.send(coa(nas.port, { timeoutMs: 200, retries: 1 })), CoaTimeoutError);
  await nas.waitForPackets(2);
  t.ok(logs.some((l) => l.obj.reason === 'bad Message-Authenticator'), 'drop logged at debug');
});

t.test('garbage datagrams at the client socket are dropped without harm', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'drop-first:1' });
  const { c, logs } = client(t);
  const pending = c.send(coa(nas.port, { timeoutMs: 500, retries: 2 }));
  const [first] = await nas.waitForPackets(1);
  const clientPort = first.source[1];
  const junk = dgram.createSocket('udp4');
  t.teardown(() => junk.close());
  const forged = Buffer.from(first.raw, 'hex');
  forged[0] = 44; // a CoA-ACK with the right identifier, from the wrong port and unsigned
  const header = Buffer.alloc(20);
  header.writeUInt16BE(60000, 2);
  for (const d of [Buffer.alloc(0), Buffer.from([1, 2, 3]), header, Buffer.from('x'.repeat(300)), forged]) {
    await new Promise<void>((r) => junk.send(d, clientPort, '127.0.0.1', () => r()));
  }
  const res = await pending;
  t.match(res, { outcome: 'ack', attempts: 2 });
  t.ok(logs.filter((l) => l.msg === 'dropped RADIUS datagram').length >= 4, 'junk dropped at debug');
});

t.test('close() rejects outstanding requests', async (t) => {
  const nas = await startNas(t, { secret: SECRET, mode: 'silent' });
  const c = new RadiusCoaClient();
  const pending = c.send(coa(nas.port, { timeoutMs: 5000 }));
  await nas.waitForPackets(1);
  await c.close();
  await t.rejects(pending, /closed/);
  await t.rejects(c.send(coa(nas.port)), /closed/);
});
