import t from 'tap';
import { randomBytes } from 'node:crypto';
import { parseClientHello } from '../../src/net/index.js';
import { captureClientHello, splitIntoRecords } from '../helpers/hello.js';

const hello = await captureClientHello('Api.Example.test', ['h2', 'http/1.1']);

t.test('a real ClientHello: SNI (lower-cased) and ALPN', async (t) => {
  const r = parseClientHello(hello);
  t.same(r, { status: 'ok', sni: 'api.example.test', alpn: ['h2', 'http/1.1'], ech: false });
});

t.test('no SNI', async (t) => {
  const r = parseClientHello(await captureClientHello(undefined, []));
  t.equal(r.status, 'ok');
  t.equal(r.status === 'ok' && r.sni, null);
});

t.test('every prefix is incomplete, never an error', async (t) => {
  for (let i = 0; i < hello.length; i++) {
    const r = parseClientHello(hello.subarray(0, i));
    if (r.status !== 'incomplete') {
      t.fail(`prefix of ${i} bytes gave ${JSON.stringify(r)}`);
      return;
    }
  }
  t.pass('all prefixes incomplete');
});

t.test('a hello split across many TLS records', async (t) => {
  for (const size of [1, 7, 100, 512]) {
    const r = parseClientHello(splitIntoRecords(hello, size));
    t.equal(r.status === 'ok' && r.sni, 'api.example.test', `records of ${size} bytes`);
  }
});

t.test('garbage is invalid with a reason', async (t) => {
  t.match(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), { status: 'invalid', reason: /not a TLS handshake/ });
  t.match(parseClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00])), { status: 'invalid', reason: /length/ });
  const notHello = Buffer.from(hello);
  notHello[5] = 0x02; // ServerHello
  t.match(parseClientHello(notHello), { status: 'invalid', reason: /not a ClientHello/ });
  const badName = Buffer.from(hello);
  const at = badName.indexOf('Api.Example.test');
  t.ok(at > 0);
  badName[at] = 0x00;
  t.match(parseClientHello(badName), { status: 'invalid', reason: /host name/ });
});

t.test('fuzz: random and mutated hellos never throw', async (t) => {
  let thrown = 0;
  for (let i = 0; i < 20000; i++) {
    let input: Buffer;
    if (i % 3 === 0) input = randomBytes(Math.floor(Math.random() * 600));
    else {
      input = Buffer.from(hello);
      for (let k = 0; k < 1 + (i % 8); k++) input[Math.floor(Math.random() * input.length)] = Math.floor(Math.random() * 256);
      if (i % 5 === 0) input = input.subarray(0, Math.floor(Math.random() * input.length));
    }
    try {
      parseClientHello(input);
    } catch {
      thrown++;
    }
  }
  t.equal(thrown, 0);
});
