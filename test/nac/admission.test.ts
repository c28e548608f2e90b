import t from 'tap';
import { createServer } from 'node:net';
import { run, sleep, waitFor } from '../helpers/exec.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { adminSession, curlSession, enroll } from '../helpers/curl-session.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { startNas } from '../helpers/nas.js';

// Enrollment tells the customer's network to admit the device: a signed webhook and a RADIUS
// CoA, from a durable outbox. Peers are independent implementations (Python hmac, pyrad).

const SECRET = 'webhook-secret-0123456789';
const NAS_SECRET = 'nas-shared-secret';
const MERAKI = { client_mac: 'AA-BB-CC-00-11-22', client_ip: '10.20.30.40', ap_mac: '00:11:22:33:44:55', ssid: 'Guest', sessionid: 'sess-42', continue_url: 'https://example.com/next' };

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * One tenant whose devices arrive through NAT (127.0.0.1 is its egress address), so the
 * controller's client IP is what the NAS knows the device by.
 */
function portalConfig(webhookUrl: string, nas: { port: number; kind?: string; attributes?: string[]; timeoutMs?: number; retries?: number }[] = []) {
  return {
    tenants: [{ id: 'guests', name: 'Guest Wi-Fi', egress: ['127.0.0.0/24'], portal: { identityMode: 'none', admitWebhookUrl: webhookUrl, admitWebhookSecret: SECRET } }],
    nac: { coa: nas.map((n) => ({ address: '127.0.0.1', secret: NAS_SECRET, timeoutMs: 300, retries: 1, ...n })) },
  };
}

t.test('enrollment sends a signed admit webhook and a CoA-Request the peers verify on their own', async (t) => {
  const receiver = await startWebhookReceiver(t, { secret: SECRET });
  const nas = await startNas(t, { secret: NAS_SECRET });
  const disc = await startNas(t, { secret: NAS_SECRET });
  const gw = await startDaemon(t, portalConfig(receiver.url + '/admit', [
    { port: nas.port },
    { port: disc.port, kind: 'disconnect', attributes: ['Calling-Station-Id', 'User-Name', 'Acct-Session-Id'] },
  ]));
  const before = Date.now();
  const r = await enroll(curlSession(t, gw), 'guest@visitor.test', MERAKI);
  t.equal(r.status, 303);
  t.equal(r.location, 'https://example.com/next', 'the browser goes on to the controller\'s continue URL');

  const [hook] = await receiver.waitForDeliveries(1, 10_000);
  t.ok(hook.signatureOk, 'Python hmac verifies X-Gateway-Signature over the raw body');
  t.match(hook.headers['x-gateway-signature'], /^sha256=[0-9a-f]{64}$/);
  t.match(hook.headers['content-type'], /^application\/json/);
  t.match(hook.headers['x-gateway-delivery'], /^[0-9a-f-]{36}$/);
  t.same(Object.keys(hook.json).sort(), ['action', 'at', 'deviceKey', 'event', 'framedIp', 'org']);
  t.match(hook.json, { event: 'device.admit', org: 'guests', framedIp: '10.20.30.40', action: 'coa-reauthorize', deviceKey: /^[0-9a-f]{64}$/ });
  t.ok(hook.json.at >= before - 1000 && hook.json.at <= Date.now(), 'at is the enrollment time in ms');
  // openssl, a third implementation, agrees with the signature too.
  const dgst = await run('openssl', ['dgst', '-sha256', '-hmac', SECRET], { input: hook.body });
  t.equal(dgst.stdout.trim().split('= ')[1], hook.headers['x-gateway-signature'].slice(7));

  const [coa] = await nas.waitForPackets(1, 10_000);
  t.equal(coa.code_name, 'CoA-Request');
  t.equal(coa.authenticator_ok, true, 'Request Authenticator verified by the NAS');
  t.equal(coa.message_authenticator_ok, true, 'Message-Authenticator verified by the NAS');
  t.equal(coa.reply, 'CoA-ACK');
  t.same(coa.attributes?.['Framed-IP-Address'], ['10.20.30.40']);
  t.same(coa.attributes?.['Acct-Session-Id'], ['sess-42']);

  const [dis] = await disc.waitForPackets(1, 10_000);
  t.equal(dis.code_name, 'Disconnect-Request', 'a NAS set to disconnect gets a Disconnect-Request');
  t.same(dis.attributes?.['Calling-Station-Id'], ['AA-BB-CC-00-11-22']);
  t.same(dis.attributes?.['User-Name'], ['guest@visitor.test']);

  const admin = await adminSession(t, gw);
  const list = await waitFor(async () => {
    const d = (await admin.curl('/admin/api/deliveries')).json().deliveries;
    return d.length === 3 && d.every((x: any) => x.state === 'delivered') && d;
  }, 10_000, 'three delivered deliveries');
  t.same(list.map((d: any) => d.kind).sort(), ['coa', 'disconnect', 'webhook']);
  const metrics = (await admin.curl('/metrics')).body;
  t.match(metrics, /gatewayd_admission_deliveries\{state="delivered"\} 3/);
  t.match(metrics, /gatewayd_admission_attempts_total\{kind="coa",outcome="ack"\} 1/);
  t.match(metrics, /gatewayd_enrollments_total\{mode="none"\} 1/);
  const detail = (await admin.curl(`/admin/api/deliveries/${list[0].id}`)).json();
  t.equal(detail.attemptLog.length, 1, 'each attempt is logged');
  const devices = (await admin.curl('/admin/api/devices')).json().devices;
  t.match(devices[0], { mac: 'aa:bb:cc:00:11:22', identity: 'guest@visitor.test', identityMode: 'none', handoff: { ip: '10.20.30.40', ssid: 'Guest', sessionId: 'sess-42' } });
  t.notOk(JSON.stringify(gw.logs).includes(SECRET), 'the webhook secret is never logged');
  t.notOk(JSON.stringify(gw.logs).includes(NAS_SECRET), 'the NAS secret is never logged');
});

t.test('a busy receiver that asks for Retry-After gets the retry no sooner, with the same id and body', async (t) => {
  const receiver = await startWebhookReceiver(t, { secret: SECRET, responses: [503, 200], retryAfter: 8 });
  const gw = await startDaemon(t, portalConfig(receiver.url));
  await enroll(curlSession(t, gw), 'a@b.test');
  const first = await receiver.waitForDeliveries(1, 10_000);
  t.equal(first[0].status, 503, 'the receiver is busy, and asks for 8 s');
  const askedAt = Date.now();
  const both = await receiver.waitForDeliveries(2, 15_000);
  const waited = Date.now() - askedAt;
  t.ok(waited >= 7500 && waited < 12_000, `the next attempt waited for Retry-After (${waited} ms), not the 5 s schedule`);
  t.equal(both[1].status, 200);
  t.equal(both[0].headers['x-gateway-delivery'], both[1].headers['x-gateway-delivery'], 'a retry keeps its delivery id');
  t.equal(both[0].body, both[1].body, 'and its exact body');
});

t.test('receiver and NAS down, then SIGKILL with deliveries pending: once they are up, the restarted daemon completes them', async (t) => {
  const dir = tempDir(t);
  const hookPort = await freePort();
  const nasPort = await freePort();
  const config = portalConfig(`http://127.0.0.1:${hookPort}/admit`, [{ port: nasPort }]);
  const gw = await startDaemon(t, config, { dir });
  await enroll(curlSession(t, gw), 'killed@b.test');
  await gw.waitForLog((l) => l.msg === 'admission attempt failed; will retry' && l.kind === 'webhook', 5000);
  await gw.waitForLog((l) => l.msg === 'admission attempt failed; will retry' && l.kind === 'coa', 5000);
  gw.proc.kill('SIGKILL');
  await gw.exited;
  const receiver = await startWebhookReceiver(t, { secret: SECRET, port: hookPort });
  const nas = await startNas(t, { secret: NAS_SECRET, port: nasPort });
  const again = await startDaemon(t, config, { dir });
  const [hook] = await receiver.waitForDeliveries(1, 15_000);
  t.ok(hook.signatureOk);
  t.equal(hook.json.event, 'device.admit');
  const [coa] = await nas.waitForPackets(1, 15_000);
  t.equal(coa.reply, 'CoA-ACK');
  await again.waitForLog((l) => l.msg === 'admission delivered' && l.kind === 'coa', 5000);
  const admin = await adminSession(t, again);
  const list = await waitFor(async () => {
    const d = (await admin.curl('/admin/api/deliveries')).json().deliveries;
    return d.every((x: any) => x.state === 'delivered') && d;
  }, 5000, 'delivered');
  t.ok(list.every((d: any) => d.attempts === 2), 'one failed attempt before the kill, one after the restart');
});

t.test('410 stops the webhook; a CoA-NAK is recorded with its Error-Cause; an admin can retry', async (t) => {
  const receiver = await startWebhookReceiver(t, { secret: SECRET, responses: [410, 200] });
  const nas = await startNas(t, { secret: NAS_SECRET, mode: 'nak', errorCause: 503 });
  const gw = await startDaemon(t, portalConfig(receiver.url, [{ port: nas.port }]));
  await enroll(curlSession(t, gw), 'gone@b.test');
  const admin = await adminSession(t, gw);
  const list = await waitFor(async () => {
    const d = (await admin.curl('/admin/api/deliveries')).json().deliveries;
    return d.length === 2 && d.every((x: any) => x.state !== 'pending') && d;
  }, 10_000, 'both finished');
  const hook = list.find((d: any) => d.kind === 'webhook');
  const coa = list.find((d: any) => d.kind === 'coa');
  t.equal(hook.state, 'gone', '410 means the endpoint is gone: no more attempts');
  t.equal(coa.state, 'failed');
  t.match(coa.lastError, /CoA-NAK Error-Cause 503 Session-Context-Not-Found/);
  t.ok(gw.logs.some((l) => l.msg === 'admission delivery stopped' && /Error-Cause 503/.test(l.error)), 'the NAK is logged with its Error-Cause');
  await sleep(6000);
  t.equal(receiver.deliveries.length, 1, 'a gone webhook is not tried again');

  // The admin page's retry button puts a delivery back in line at once.
  const page = await admin.curl('/admin/admission');
  t.match(page.body, new RegExp(`data-delivery="${hook.id}" data-state="gone"`));
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
  const retried = await admin.curl(`/admin/admission/${hook.id}/retry`, ['--data-urlencode', `_csrf=${csrf}`]);
  t.equal(retried.status, 303);
  await receiver.waitForDeliveries(2, 5000);
  const after = await waitFor(async () => {
    const d = (await admin.curl(`/admin/api/deliveries/${hook.id}`)).json();
    return d.state === 'delivered' && d;
  }, 5000, 'delivered after retry');
  t.equal(after.attemptLog.length, 2);
  t.equal((await admin.curl('/admin/admission/not-a-delivery/retry', ['--data-urlencode', `_csrf=${csrf}`])).status, 404);
});

t.test('a CoA that gets no answer is retransmitted, then retried later; a NAS that comes up gets it', async (t) => {
  const nasPort = await freePort();
  const gw = await startDaemon(t, { nac: { coa: [{ address: '127.0.0.1', port: nasPort, secret: NAS_SECRET, timeoutMs: 300, retries: 1 }] } });
  await enroll(curlSession(t, gw), 'late@b.test');
  const failed = await gw.waitForLog((l) => l.msg === 'admission attempt failed; will retry' && l.kind === 'coa', 5000);
  t.match(failed.error, /after 2 attempts/, 'the first attempt retransmitted once before giving up');
  const nas = await startNas(t, { secret: NAS_SECRET, port: nasPort });
  const [p] = await nas.waitForPackets(1, 10_000);
  t.equal(p.reply, 'CoA-ACK');
  t.equal(p.authenticator_ok, true);
});

t.test('a slow NAS does not hold up other admissions; removing a device cancels what still waits for it', async (t) => {
  const receiver = await startWebhookReceiver(t, { secret: SECRET });
  const nasPort = await freePort();
  const gw = await startDaemon(t, portalConfig(receiver.url, [{ port: nasPort, timeoutMs: 1500, retries: 2 }]));
  await enroll(curlSession(t, gw, { source: '127.0.0.4' }), 'first@b.test');
  await receiver.waitForDeliveries(1, 5000);
  // The first device's CoA is now being retransmitted to a NAS that never answers (1.5 + 3 + 6 s).
  const started = Date.now();
  await enroll(curlSession(t, gw, { source: '127.0.0.5' }), 'second@b.test');
  const both = await receiver.waitForDeliveries(2, 5000);
  t.ok(Date.now() - started < 1500, `the second webhook went out at once (${Date.now() - started} ms), not after the silent NAS`);
  t.equal(both[1].json.framedIp, '127.0.0.5');

  const admin = await adminSession(t, gw);
  const device = (await admin.curl('/admin/api/devices')).json().devices.find((d: any) => d.clientIp === '127.0.0.5');
  // Once its first CoA attempt has given up (datagrams already sent cannot be called back), remove it.
  await gw.waitForLog((l) => l.msg === 'admission attempt failed; will retry' && l.kind === 'coa' && gw.logs.filter((x) => x.msg === 'admission attempt failed; will retry' && x.kind === 'coa').length >= 2, 20_000);
  const page = await admin.curl('/admin/devices');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
  t.equal((await admin.curl(`/admin/devices/${device.id}/remove`, ['--data-urlencode', `_csrf=${csrf}`])).status, 303);
  const coa = await waitFor(async () => {
    const list = (await admin.curl('/admin/api/deliveries')).json().deliveries;
    return list.find((d: any) => d.deviceId === device.id && d.kind === 'coa' && d.state === 'cancelled');
  }, 10_000, 'the removed device\'s CoA to be cancelled');
  t.match(coa.lastError, /removed by admin/);
  const retry = await admin.curl(`/admin/admission/${coa.id}/retry`, ['--data-urlencode', `_csrf=${csrf}`]);
  t.equal(retry.status, 409, 'retrying would admit a removed device');
  const nas = await startNas(t, { secret: NAS_SECRET, port: nasPort });
  const [p] = await nas.waitForPackets(1, 15_000);
  t.same(p.attributes?.['Framed-IP-Address'], ['127.0.0.4'], 'the NAS, once up, hears of the enrolled device');
  await sleep(2000);
  t.notOk(nas.received.some((x) => x.attributes?.['Framed-IP-Address']?.[0] === '127.0.0.5'), 'and never of the removed one');
});

t.test('behind a tenant\'s NAT, devices are told apart by the controller\'s client IP', async (t) => {
  const receiver = await startWebhookReceiver(t, { secret: SECRET });
  const gw = await startDaemon(t, portalConfig(receiver.url));
  await enroll(curlSession(t, gw), 'one@b.test', { client_ip: '10.9.0.50' });
  await enroll(curlSession(t, gw), 'two@b.test', { client_ip: '10.9.0.51' });
  const hooks = await receiver.waitForDeliveries(2, 10_000);
  t.same(hooks.map((h) => h.json.framedIp).sort(), ['10.9.0.50', '10.9.0.51'], 'the second device did not cancel the first one\'s admission');
  const curl = curlSession(t, gw);
  t.match((await curl('/portal?client_ip=10.9.0.50')).body, /You are connected[\s\S]*one@b\.test/, 'the portal knows the device by its reported address');
  t.match((await curl('/portal?client_ip=10.9.0.52')).body, /Join the network/, 'another device behind the NAT gets the form');
  t.match((await curl('/portal')).body, /Join the network/, 'and so does one the controller did not name');
  const admin = await adminSession(t, gw);
  const active = (await admin.curl('/admin/api/devices')).json().devices;
  t.same(active.map((d: any) => d.identity).sort(), ['one@b.test', 'two@b.test'], 'both devices stay enrolled');
});
