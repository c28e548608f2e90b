import t from 'tap';
import { createServer, type Server, type Socket } from 'node:net';
import { run, sleep } from '../helpers/exec.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  parseRetryAfter,
  postWebhook,
  retryDelayMs,
  signBody,
  WEBHOOK_MAX_ATTEMPTS,
  type AdmitEvent,
  type WebhookAttempt,
} from '../../src/nac/webhook.js';

const SECRET = 'whsec-4f1c9e2b-admit-test-secret';

let seq = 0;
function attempt(url: string, extra: Partial<WebhookAttempt> = {}): WebhookAttempt {
  const event: AdmitEvent = {
    event: 'device.admit',
    org: 'tenant-acme',
    deviceKey: 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c',
    framedIp: '10.20.30.40',
    action: 'coa-reauthorize',
    at: 1_700_000_000_000,
  };
  return { url, secret: SECRET, body: JSON.stringify(event), deliveryId: `dlv-${++seq}`, event: 'device.admit', ...extra };
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

t.test('a signed delivery is accepted and verifies independently', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET });
  // Non-ASCII in the body: the signature must cover the UTF-8 bytes actually sent.
  const a = attempt(rx.url, { body: JSON.stringify({ event: 'device.admit', org: 'Zürich-Ω', deviceKey: 'k', framedIp: '10.0.0.1', action: 'coa-reauthorize', at: 1 }) });
  const r = await postWebhook(a);
  t.has(r, { outcome: 'delivered', status: 200 });
  t.type(r.durationMs, 'number');
  const [d] = await rx.waitForDeliveries(1);
  t.equal(d.path, '/hook');
  t.equal(d.signatureOk, true, 'python hmac agrees with the signature');
  t.equal(d.status, 200);
  t.equal(d.body, a.body, 'body bytes arrive unchanged');
  t.same(d.json, JSON.parse(a.body));
  t.equal(d.headers['content-type'], 'application/json');
  t.equal(d.headers['x-gateway-signature'], signBody(a.body, SECRET));
  t.match(d.headers['x-gateway-signature'], /^sha256=[0-9a-f]{64}$/);
  t.equal(d.headers['x-gateway-delivery'], a.deliveryId);
  t.equal(d.headers['x-gateway-event'], 'device.admit');
  t.equal(d.headers['user-agent'], 'gatewayd');

  const custom = await postWebhook(attempt(rx.url, { userAgent: 'gatewayd/1.2.3' }));
  t.equal(custom.outcome, 'delivered');
  t.equal((await rx.waitForDeliveries(2))[1].headers['user-agent'], 'gatewayd/1.2.3');
});

t.test('a wrong secret is refused with 401 and is retried; the secret is not in the error', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET });
  const wrong = 'whsec-wrong-7d3a0c55';
  const r = await postWebhook(attempt(rx.url, { secret: wrong }));
  t.equal(r.outcome, 'retry');
  t.equal(r.outcome === 'retry' && r.status, 401);
  t.match(r.outcome === 'retry' && r.error, /^HTTP 401 Unauthorized: bad signature$/);
  t.notOk(JSON.stringify(r).includes(wrong));
  const [d] = await rx.waitForDeliveries(1);
  t.equal(d.signatureOk, false);
  t.equal(d.status, 401);
});

t.test('503 with Retry-After: 2 is retried with retryAfterMs 2000; the same delivery id succeeds later', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET, responses: [503, 503, 200], retryAfter: 2 });
  const a = attempt(rx.url);
  for (let i = 0; i < 2; i++) {
    const r = await postWebhook(a);
    t.has(r, { outcome: 'retry', status: 503, retryAfterMs: 2000 });
    t.match(r.outcome === 'retry' && r.error, /^HTTP 503 Service Unavailable: \{"status": 503\}$/);
    t.equal(retryDelayMs(i + 1, r.outcome === 'retry' ? r.retryAfterMs : undefined, () => 0.5), i === 0 ? 5000 : 30_000);
  }
  t.has(await postWebhook(a), { outcome: 'delivered', status: 200 });
  const ds = await rx.waitForDeliveries(3);
  t.same(ds.map((d) => d.status), [503, 503, 200]);
  t.same(new Set(ds.map((d) => d.headers['x-gateway-delivery'])), new Set([a.deliveryId]), 'one delivery id across attempts');
  t.ok(ds.every((d) => d.signatureOk));
});

t.test('429 without Retry-After is retried with no retryAfterMs', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET, responses: [429] });
  const r = await postWebhook(attempt(rx.url));
  t.equal(r.outcome, 'retry');
  t.equal(r.outcome === 'retry' && r.status, 429);
  t.notOk('retryAfterMs' in r);
});

t.test('410 means gone', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET, responses: [410] });
  const r = await postWebhook(attempt(rx.url));
  t.has(r, { outcome: 'gone', status: 410 });
  t.match(r.outcome === 'gone' && r.error, /^HTTP 410 Gone/);
});

t.test('500 is retried', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET, responses: [500] });
  const r = await postWebhook(attempt(rx.url));
  t.has(r, { outcome: 'retry', status: 500 });
  t.match(r.outcome === 'retry' && r.error, /^HTTP 500 Internal Server Error/);
});

t.test('a 302 is a failure and is not followed', async (t) => {
  const rx = await startWebhookReceiver(t, { secret: SECRET, responses: [302, 200] });
  const r = await postWebhook(attempt(rx.url));
  t.has(r, { outcome: 'retry', status: 302 });
  t.match(r.outcome === 'retry' && r.error, /^HTTP 302 Found \(redirect to \/redirected not followed\)/);
  await rx.waitForDeliveries(1);
  await sleep(300);
  t.same(rx.deliveries.map((d) => d.path), ['/hook'], 'nothing was sent to the redirect target');
});

t.test('connection refused is retried with the socket error', async (t) => {
  const port = await closedPort();
  const r = await postWebhook(attempt(`http://127.0.0.1:${port}/hook`));
  t.equal(r.outcome, 'retry');
  t.notOk('status' in r);
  t.equal(r.outcome === 'retry' && r.error, `connect ECONNREFUSED 127.0.0.1:${port}`);
});

t.test('a receiver that comes back on the same port gets the retry', async (t) => {
  const first = await startWebhookReceiver(t, { secret: SECRET });
  const a = attempt(first.url);
  await first.stop();
  const down = await postWebhook(a);
  t.match(down.outcome === 'retry' && down.error, /ECONNREFUSED/);
  const again = await startWebhookReceiver(t, { secret: SECRET, port: first.port });
  t.equal(again.port, first.port);
  t.has(await postWebhook(a), { outcome: 'delivered', status: 200 });
  t.equal((await again.waitForDeliveries(1))[0].headers['x-gateway-delivery'], a.deliveryId);
});

t.test('a receiver that never answers times out', async (t) => {
  const sockets = new Set<Socket>();
  const silent: Server = createServer((s) => {
    sockets.add(s);
    s.resume(); // read the request, never answer
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const { port } = silent.address() as { port: number };
  const started = Date.now();
  const r = await postWebhook(attempt(`http://127.0.0.1:${port}/hook`, { timeoutMs: 300 }));
  const took = Date.now() - started;
  t.has(r, { outcome: 'retry', error: 'timed out after 300 ms' });
  t.ok(took >= 250 && took < 3000, `gave up after ${took} ms`);
  t.equal(sockets.size, 1, 'it did connect');
});

t.test('a response body is read only up to a cap, and the error quotes its start', async (t) => {
  // A raw server answering 500 with an endless body: the sender must not wait for the end.
  const big = createServer((s) => {
    s.once('data', () => {
      s.write('HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = 'x'.repeat(1024);
      const pump = () => {
        while (!s.destroyed && s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`));
        if (!s.destroyed) s.once('drain', pump);
      };
      pump();
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => big.listen(0, '127.0.0.1', r));
  t.teardown(() => big.close());
  const { port } = big.address() as { port: number };
  const r = await postWebhook(attempt(`http://127.0.0.1:${port}/hook`, { timeoutMs: 5000 }));
  t.has(r, { outcome: 'retry', status: 500 });
  t.equal(r.outcome === 'retry' && r.error, `HTTP 500 Internal Server Error: ${'x'.repeat(200)}…`);
  t.ok(r.durationMs < 4000, `did not wait for the body to end (${r.durationMs} ms)`);
});

t.test('a receiver echoing the secret back does not get it into the error', async (t) => {
  const echo = createServer((s) => {
    s.once('data', () => {
      const body = `misconfigured: expected secret ${SECRET}`;
      s.end(`HTTP/1.1 400 Bad Request\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  t.teardown(() => echo.close());
  const { port } = echo.address() as { port: number };
  const r = await postWebhook(attempt(`http://127.0.0.1:${port}/hook`));
  t.has(r, { outcome: 'retry', status: 400, error: 'HTTP 400 Bad Request: misconfigured: expected secret [redacted]' });
});

t.test('a bad URL is retried, never thrown', async (t) => {
  t.match(await postWebhook(attempt('not a url')), { outcome: 'retry', error: 'invalid webhook URL' });
  t.match(await postWebhook(attempt('data:application/json,{}')), { outcome: 'retry', error: 'unsupported webhook URL scheme data:' });
});

t.test('signBody matches openssl', async (t) => {
  for (const body of [attempt('http://x').body, '{"org":"Zürich-Ω"}', '']) {
    const r = await run('openssl', ['dgst', '-sha256', '-hmac', SECRET], { input: Buffer.from(body, 'utf8') });
    t.equal(r.code, 0, r.stderr);
    const hex = /([0-9a-f]{64})\s*$/.exec(r.stdout)?.[1];
    t.ok(hex, r.stdout);
    t.equal(signBody(body, SECRET), `sha256=${hex}`);
    t.equal(signBody(Buffer.from(body, 'utf8'), SECRET), `sha256=${hex}`);
  }
});

t.test('retryDelayMs follows the schedule with ±20% jitter', async (t) => {
  const schedule = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 14_400_000, 14_400_000];
  schedule.forEach((base, i) => {
    const n = i + 1;
    t.equal(retryDelayMs(n, undefined, () => 0.5), base, `attempt ${n} centre`);
    t.equal(retryDelayMs(n, undefined, () => 0), base * 0.8, `attempt ${n} low`);
    t.equal(retryDelayMs(n, undefined, () => 0.999999), Math.round(base * (0.8 + 0.4 * 0.999999)), `attempt ${n} high`);
    const outside = Array.from({ length: 200 }, () => retryDelayMs(n)).filter((d) => d < base * 0.8 || d > base * 1.2);
    t.same(outside, [], `attempt ${n}: Math.random jitter stays within ±20%`);
  });
  t.equal(retryDelayMs(100, undefined, () => 0.5), 14_400_000, 'stays at 4 h');
  t.equal(retryDelayMs(0, undefined, () => 0.5), 5_000, 'nonsense counts start at the beginning');
  t.equal(retryDelayMs(1, 60_000, () => 0.99), 60_000, 'Retry-After above the schedule wins, unjittered');
  t.equal(retryDelayMs(3, 60_000, () => 0.5), 120_000, 'Retry-After below the schedule does not shorten it');
  t.equal(retryDelayMs(8, 48 * 3_600_000, () => 0.5), 24 * 3_600_000, 'capped at 24 h');
  t.equal(WEBHOOK_MAX_ATTEMPTS, 16);
});

t.test('parseRetryAfter reads both forms and ignores garbage', async (t) => {
  const now = Date.parse('1994-11-06T08:49:00Z');
  t.equal(parseRetryAfter('2', now), 2000);
  t.equal(parseRetryAfter(' 120 ', now), 120_000);
  t.equal(parseRetryAfter('0', now), 0);
  t.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now), 37_000);
  t.equal(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now), 37_000);
  t.equal(parseRetryAfter('Sun Nov  6 08:49:37 1994', now), 37_000);
  t.equal(parseRetryAfter('Sat, 05 Nov 1994 08:49:37 GMT', now), 0, 'a date in the past means now');
  t.equal(parseRetryAfter('999999999', now), 24 * 3_600_000, 'capped at 24 h');
  t.equal(parseRetryAfter('Sun, 06 Nov 2094 08:49:37 GMT', now), 24 * 3_600_000);
  for (const junk of [null, undefined, '', 'soon', '1.5', '-5', '2 seconds', 'Sun, garbage', '0x10']) {
    t.equal(parseRetryAfter(junk, now), undefined, `ignores ${JSON.stringify(junk)}`);
  }
});
