import t from 'tap';
import { gatewayd, startDaemon } from '../helpers/daemon.js';
import { adminSession, curlSession, enroll } from '../helpers/curl-session.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { waitFor } from '../helpers/exec.js';

// Two organizations on one appliance, told apart by the address their devices come from
// (curl binds 127.0.0.2 for Acme and 127.0.0.3 for Globex). Neither may see or change the other's.

const ACME_SECRET = 'acme-webhook-secret-0123';
const PASSWORD = 'tenant admin password 42';
const acmeHook = await startWebhookReceiver(t, { secret: ACME_SECRET });
const gw = await startDaemon(t, {
  tenants: [
    { id: 'acme', name: 'Acme', networks: ['127.0.0.2/32'], portal: { identityMode: 'domain', allowedDomains: ['acme.test'], admitWebhookUrl: acmeHook.url, admitWebhookSecret: ACME_SECRET } },
    { id: 'globex', name: 'Globex', networks: ['127.0.0.0/29'], egress: ['127.0.0.3'], portal: { identityMode: 'none', branding: { name: 'Globex Guest' } } },
  ],
});
for (const [user, tenant] of [['acme-admin', 'acme'], ['globex-admin', 'globex']]) {
  const r = await gatewayd(['admin', 'add', '--config', gw.configFile, '--username', user, '--tenant', tenant], `${PASSWORD}\n`);
  if (r.code !== 0) throw new Error(r.stderr);
}
const acmeDevice = curlSession(t, gw, { source: '127.0.0.2' });
const globexDevice = curlSession(t, gw, { source: '127.0.0.3' });

t.test('the tenant comes from the client address; the most specific network wins', async (t) => {
  t.match((await acmeDevice('/portal')).body, /<strong>Acme<\/strong>[\s\S]*Use your address at acme\.test/);
  t.match((await globexDevice('/portal')).body, /<strong>Globex Guest<\/strong>/, '127.0.0.3 is Globex by its egress address');
  const outside = await curlSession(t, gw, { source: '127.0.0.9' })('/portal');
  t.equal(outside.status, 403, 'an address in no tenant\'s networks gets no portal');
  t.match(outside.body, /127\.0\.0\.9 is not in any organization/);
  t.match((await curlSession(t, gw, { source: '127.0.0.4' })('/portal')).body, /Globex Guest/, '127.0.0.4 falls in Globex\'s /29');
});

let acmeId = 0;
let globexId = 0;

t.test('each enrollment belongs to its tenant, and only that tenant\'s webhook hears of it', async (t) => {
  t.equal((await enroll(acmeDevice, 'ann@acme.test')).status, 303);
  t.equal((await enroll(globexDevice, 'visitor')).status, 303);
  const [hook] = await acmeHook.waitForDeliveries(1, 10_000);
  t.equal(hook.json.org, 'acme');
  const admin = await adminSession(t, gw);
  const all = (await admin.curl('/admin/api/devices')).json().devices;
  t.same(all.map((d: any) => d.tenantId).sort(), ['acme', 'globex'], 'the appliance admin sees both');
  acmeId = all.find((d: any) => d.tenantId === 'acme').id;
  globexId = all.find((d: any) => d.tenantId === 'globex').id;
  const filtered = (await admin.curl('/admin/api/devices?tenant=globex')).json().devices;
  t.same(filtered.map((d: any) => d.id), [globexId]);
  await waitFor(() => acmeHook.deliveries.length === 1, 2000);
  t.equal(acmeHook.deliveries.length, 1, 'Globex\'s enrollment did not reach Acme\'s receiver');
});

t.test('the controller\'s parameters cannot push another device out or redirect its admission', async (t) => {
  const victim = curlSession(t, gw, { source: '127.0.0.4' });
  t.equal((await enroll(victim, 'victim', { client_mac: 'aa:bb:cc:dd:ee:04' })).status, 303);
  const spoofer = curlSession(t, gw, { source: '127.0.0.5' });
  t.equal((await enroll(spoofer, 'spoofer', { client_mac: 'aa:bb:cc:dd:ee:04', client_ip: '127.0.0.4' })).status, 303);
  t.equal((await victim('/api/captive')).json().captive, false, 'the first device is still enrolled');
  const admin = await adminSession(t, gw);
  const devices = (await admin.curl('/admin/api/devices?tenant=globex')).json().devices;
  const spoofed = devices.find((d: any) => d.identity === 'spoofer');
  t.equal(spoofed.clientIp, '127.0.0.5');
  t.match(spoofed.handoff, { reportedIp: '127.0.0.4' }, 'a claimed IP that is not the one seen is only reported');
  t.notOk(spoofed.handoff.ip);
  t.ok(devices.some((d: any) => d.identity === 'victim'), 'the victim\'s record was not replaced');
});

t.test('a tenant admin sees and changes only their own tenant', async (t) => {
  const acme = await adminSession(t, gw, { username: 'acme-admin', password: PASSWORD });
  const devices = (await acme.curl('/admin/api/devices')).json().devices;
  t.same(devices.map((d: any) => d.id), [acmeId]);
  const peek = await acme.curl('/admin/api/devices?tenant=globex');
  t.equal(peek.status, 403);
  t.match(peek.json().message, /manages tenant "acme" only/);
  t.same((await acme.curl('/admin/api/deliveries')).json().deliveries.map((d: any) => d.tenantId), ['acme']);

  const section = await acme.curl('/admin/devices');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(section.body)![1];
  t.notMatch(section.body, new RegExp(`data-device="${globexId}"`), 'the devices page lists no Globex device');
  const remove = await acme.curl(`/admin/devices/${globexId}/remove`, ['--data-urlencode', `_csrf=${csrf}`]);
  t.equal(remove.status, 404, 'removing another tenant\'s device is refused as if it did not exist');
  t.equal((await globexDevice('/api/captive')).json().captive, false, 'and the Globex device is still enrolled');

  const put = await acme.api('PUT', '/admin/api/portal?tenant=globex', { identityMode: 'none', allowedDomains: [], branding: {} });
  t.equal(put.status, 403, 'no writes to another tenant\'s portal');
  const own = await acme.api('PUT', '/admin/api/portal', { identityMode: 'domain', allowedDomains: ['acme.test', 'acme.example'], branding: { name: 'Acme Wi-Fi' } });
  t.equal(own.status, 200, own.body);
  t.match((await acmeDevice('/portal?x=1')).body, /Acme Wi-Fi/);
  t.match((await globexDevice('/portal')).body, /Globex Guest/, 'Globex\'s portal is unchanged');

  for (const path of ['/admin/api/flows', '/metrics']) t.equal((await acme.curl(path)).status, 403, `${path} covers every tenant: appliance admins only`);
  t.equal((await acme.curl('/admin/traffic')).status, 404, 'appliance sections are not shown to tenant admins');
  const globexDelivery = (await (await adminSession(t, gw)).curl('/admin/api/deliveries?tenant=acme')).json().deliveries[0];
  const globex = await adminSession(t, gw, { username: 'globex-admin', password: PASSWORD });
  t.equal((await globex.curl(`/admin/api/deliveries/${globexDelivery.id}`)).status, 404, 'Globex cannot read Acme\'s delivery');

  // A password change keeps the admin's tenant scope.
  const reset = await gatewayd(['admin', 'add', '--config', gw.configFile, '--username', 'acme-admin'], `${PASSWORD}\n`);
  t.equal(reset.code, 0, reset.stderr);
  const again = await adminSession(t, gw, { username: 'acme-admin', password: PASSWORD });
  t.equal((await again.curl('/admin/api/flows')).status, 403, 'still a tenant admin after a password change');

  const csrfAgain = /name="_csrf" value="([^"]+)"/.exec((await again.curl('/admin/devices')).body)![1];
  const removed = await again.curl(`/admin/devices/${acmeId}/remove`, ['--data-urlencode', `_csrf=${csrfAgain}`]);
  t.equal(removed.status, 303, 'its own device it can remove');
  t.equal((await acmeDevice('/api/captive')).json().captive, true, 'and that device meets the portal again');
});
