import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { adminSession, csrfOf, curlSession, enroll } from '../helpers/curl-session.js';

// Whatever a device or an admin sends gets a 4xx that names the problem, never a 5xx, and the
// daemon keeps serving.

const gw = await startDaemon(t, { portal: { identityMode: 'domain', allowedDomains: ['corp.test'] } });

t.test('portal forms: missing CSRF, wrong types, oversize and garbage values', async (t) => {
  const curl = curlSession(t, gw);
  const noCsrf = await curl('/portal/enroll', ['--data-urlencode', 'email=a@corp.test']);
  t.equal(noCsrf.status, 403);
  t.match(noCsrf.json(), { error: 'csrf' });

  const form = await curl('/portal');
  const csrf = csrfOf(form.body);
  const json = await curl('/portal/enroll', ['-H', 'content-type: application/json', '-H', `x-csrf-token: ${csrf}`, '--data-binary', '{"email":["a@corp.test"]}']);
  t.equal(json.status, 400, 'an email that is not a string is no email');
  const long = await curl('/portal/enroll', ['--data-urlencode', `_csrf=${csrf}`, '--data-urlencode', `email=${'a'.repeat(5000)}@corp.test`]);
  t.equal(long.status, 400);
  t.match(long.body, /too long/);
  const text = await curl('/portal/enroll', ['-H', 'content-type: application/xml', '--data-binary', '<email/>']);
  t.equal(text.status, 415, 'a body type the portal does not take');

  const verify = await curl('/portal/verify', ['--data-urlencode', `_csrf=${csrf}`, '--data-urlencode', 'challenge=nope', '--data-urlencode', 'code=12ab']);
  t.equal(verify.status, 404);
  t.match(verify.body, /unknown here/);
  const resend = await curl('/portal/resend', ['--data-urlencode', `_csrf=${csrf}`]);
  t.equal(resend.status, 404);

  for (const [q, want] of [['', /missing its code or state/], ['?code=x&state=y', /unknown or expired/], ['?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E', /refused the sign-in: &lt;b&gt;no&lt;\/b&gt;/]] as const) {
    const r = await curl(`/portal/sso/callback${q}`);
    t.equal(r.status, 400, `sso callback ${q || '(no query)'}`);
    t.match(r.body, want);
  }
  t.equal((await curl('/portal/logo/nobody')).status, 404);
  t.equal((await curl('/portal/logo/..%2f..%2fetc%2fpasswd')).status, 404);
});

t.test('garbage controller parameters are dropped, the enrollment still works', async (t) => {
  const curl = curlSession(t, gw);
  const r = await enroll(curl, 'ok@corp.test', { client_mac: 'zz:zz', client_ip: '999.1.1.1', ssid: 'x\u0001y', continue_url: 'javascript:alert(1)', ap_mac: '<script>' });
  t.equal(r.status, 303);
  t.match(r.location, /\/portal$/, 'an unsafe continue URL is not followed');
  const admin = await adminSession(t, gw);
  const [device] = (await admin.curl('/admin/api/devices')).json().devices;
  t.equal(device.mac, null);
  t.notOk(device.handoff.ip, 'an IP that is not one is dropped');
  t.notOk(device.handoff.ssid, 'a control character is not stored');
  const page = await admin.curl('/admin/devices');
  t.notMatch(page.body, /<script>/, 'stored values are escaped in the admin page');
});

t.test('admin API: wrong types and unknown values are named', async (t) => {
  const admin = await adminSession(t, gw);
  const array = await admin.api('PUT', '/admin/api/portal', ['x']);
  t.equal(array.status, 400);
  t.ok(array.json().fields, 'a JSON array is refused field by field');
  const unknown = await admin.api('PUT', '/admin/api/portal', { identityMode: 'none', allowedDomains: [], branding: {}, colour: 'red' });
  t.equal(unknown.status, 400);
  t.match(unknown.json().fields.form, /unknown field colour/);
  const mode = await admin.api('PUT', '/admin/api/portal', { identityMode: 'magic', allowedDomains: [], branding: {} });
  t.match(mode.json().fields.identityMode, /must be one of sso, otp, domain, none/);
  const sso = await admin.api('PUT', '/admin/api/portal', { identityMode: 'sso', allowedDomains: [], branding: {} });
  t.match(sso.json().fields.identityMode, /sso needs an identity provider/);
  const logo = await admin.api('POST', '/admin/api/portal/logo', { logo: 'x' });
  t.equal(logo.status, 415);
  const truncated = await admin.curl('/admin/api/portal/logo', ['-H', `x-csrf-token: ${admin.csrf}`, '-H', 'content-type: multipart/form-data; boundary=XYZ',
    '--data-binary', '--XYZ\r\nContent-Disposition: form-data; name="logo"; filename="a.png"\r\n\r\nabc']);
  t.equal(truncated.status, 400, 'a truncated upload is a bad request');
  t.match(truncated.json().fields.logo, /not valid multipart/);
  t.equal((await admin.curl('/admin/api/deliveries?state=bogus')).status, 400);
  t.equal((await admin.curl('/admin/api/deliveries/nope')).status, 404);
  t.equal((await admin.curl('/admin/api/devices?tenant=nope')).status, 404);
  t.equal((await admin.curl('/admin/devices/abc/remove', ['-X', 'POST', '-H', `x-csrf-token: ${admin.csrf}`])).status, 404);
  const test = await admin.api('POST', '/admin/api/portal/test-webhook');
  t.equal(test.status, 400);
  t.match(test.json().message, /save a webhook URL and secret first/);
});

t.test('nothing above was a server error, and the daemon still serves', async (t) => {
  t.notOk(gw.logs.some((l) => l.msg === 'request failed'), 'no request ended in a 500');
  t.equal((await curlSession(t, gw)('/healthz')).status, 200);
});
