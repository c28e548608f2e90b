import t, { type Test } from "tap";
import { Duplex } from 'node:stream';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sleep } from '../helpers/exec.js';
import { startDaemon, HOSTNAME } from '../helpers/daemon.js';
import { startBackend } from '../helpers/tls-backend.js';
import { curl } from '../helpers/clients.js';
import { captureClientHello } from '../helpers/hello.js';

const backend = await startBackend(t);
const gw = await startDaemon(t, {
  tls: { routes: [{ sni: 'backend.test', to: `127.0.0.1:${backend.port}` }] },
  relay: { helloTimeoutMs: 700, maxHelloBytes: 4096 },
});

/** A socket to the daemon whose first `slowBytes` bytes are written one at a time, with a pause after each. */
function tricklingSocket(port: number, slowBytes: number, pauseMs: number): Duplex {
  const raw: Socket = netConnect(port, '127.0.0.1');
  let sent = 0;
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      (async () => {
        for (let i = 0; i < chunk.length; i++) {
          if (sent < slowBytes) {
            raw.write(chunk.subarray(i, i + 1));
            sent++;
            await sleep(pauseMs);
          } else {
            raw.write(chunk.subarray(i));
            break;
          }
        }
      })().then(() => cb(), cb);
    },
    final(cb) {
      raw.end();
      cb();
    },
  });
  raw.on('data', (d) => duplex.push(d));
  raw.on('end', () => duplex.push(null));
  raw.on('error', (e) => duplex.destroy(e));
  return duplex;
}

async function alive(t: Test): Promise<void> {
  const r = await curl(HOSTNAME, gw.httpsPort, '/healthz', ['-k']);
  t.equal(r.status, 200, 'the daemon still answers on its own name');
  const p = await curl('backend.test', gw.httpsPort, '/hello', ['--cacert', backend.caFile]);
  t.equal(p.status, 200, 'and still passes traffic through');
}

t.test('a ClientHello delivered one byte at a time', async (t) => {
  const hello = await captureClientHello('backend.test');
  const sock = tricklingSocket(gw.httpsPort, hello.length, 1);
  const tls = tlsConnect({ socket: sock, servername: 'backend.test', ca: readFileSync(backend.caFile) });
  await new Promise<void>((resolve, reject) => {
    tls.once('secureConnect', resolve);
    tls.once('error', reject);
  });
  const peer = new X509Certificate(tls.getPeerX509Certificate()!.raw);
  t.equal(peer.fingerprint256, backend.fingerprint, 'the backend certificate, not a minted one');
  tls.write('GET /hello HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n');
  let body = '';
  for await (const chunk of tls) body += chunk;
  t.match(body, /hello from backend/);
});

/** Writes bytes on a raw socket and reports whether and how soon the daemon closed it. */
async function sendRaw(data: Buffer | null, opts: { endAfter?: boolean; giveUpMs?: number } = {}): Promise<{ closedMs: number; received: number }> {
  const sock = netConnect(gw.httpsPort, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise((r) => sock.once('connect', r));
  const start = Date.now();
  let received = 0;
  sock.on('data', (d) => (received += d.length));
  if (data) sock.write(data);
  if (opts.endAfter) sock.end();
  // A mutated hello may still be valid enough for the backend to answer and wait for more: give up then.
  const giveUp = setTimeout(() => sock.destroy(), opts.giveUpMs ?? 4000);
  await new Promise((r) => sock.once('close', r));
  clearTimeout(giveUp);
  return { closedMs: Date.now() - start, received };
}

t.test('garbage instead of a ClientHello is closed', async (t) => {
  const r = await sendRaw(Buffer.from('GET / HTTP/1.1\r\nHost: backend.test\r\n\r\n'));
  t.ok(r.closedMs < 500, `closed at once (${r.closedMs} ms)`);
  t.equal(r.received, 0);
  await alive(t);
});

t.test('a truncated ClientHello followed by the client closing', async (t) => {
  const hello = await captureClientHello('backend.test');
  const r = await sendRaw(hello.subarray(0, 40), { endAfter: true });
  t.ok(r.closedMs < 500);
  await alive(t);
});

t.test('a stalled ClientHello is cut after relay.helloTimeoutMs', async (t) => {
  const hello = await captureClientHello('backend.test');
  const r = await sendRaw(hello.subarray(0, 100));
  t.ok(r.closedMs >= 600 && r.closedMs < 3000, `closed after ${r.closedMs} ms (timeout 700)`);
  await alive(t);
});

t.test('a hello larger than relay.maxHelloBytes is refused', async (t) => {
  const header = Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x3f, 0xfc]); // claims 16 KiB
  const r = await sendRaw(Buffer.concat([header, randomBytes(6000)]));
  t.ok(r.closedMs < 1000, `closed after ${r.closedMs} ms`);
  await alive(t);
});

t.test('fuzz: 300 random and mutated hellos in parallel, then the daemon still serves', async (t) => {
  const hello = await captureClientHello('backend.test');
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < 300; i++) {
    let data: Buffer;
    if (i % 2) data = randomBytes(1 + Math.floor(Math.random() * 2000));
    else {
      data = Buffer.from(hello);
      for (let k = 0; k < 4; k++) data[Math.floor(Math.random() * data.length)] = Math.floor(Math.random() * 256);
    }
    jobs.push(sendRaw(data, { endAfter: i % 3 === 0, giveUpMs: 1500 }).catch(() => undefined));
    if (jobs.length === 100) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
  t.equal(gw.proc.exitCode, null, 'the process is still running');
  await alive(t);
});
