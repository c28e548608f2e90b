import t from 'tap';
import { createServer } from 'node:net';
import { sleep } from '../helpers/exec.js';
import { startDaemon } from '../helpers/daemon.js';
import { csrfOf, curlSession, enroll, type Curl } from '../helpers/curl-session.js';
import { startSmtpSink } from '../helpers/smtp.js';

// One-time codes by email, through a real SMTP server: expiry, resend throttling, the hourly
// send limit, and what a person sees when mail cannot be sent.

const sink = await startSmtpSink(t);
const smtp = { host: '127.0.0.1', port: sink.port, from: 'Gateway <gateway@corp.test>' };
const codeOf = (subject: string) => /\b(\d{6})\b/.exec(subject)![1];
const challengeOf = (html: string) => /name="challenge" value="([^"]+)"/.exec(html)![1];

async function submitCode(curl: Curl, page: string, code: string) {
  return curl('/portal/verify', ['--data-urlencode', `_csrf=${csrfOf(page)}`, '--data-urlencode', `challenge=${challengeOf(page)}`, '--data-urlencode', `code=${code}`]);
}

t.test('a code expires; a resend is throttled, and the new code replaces the old one', async (t) => {
  const gw = await startDaemon(t, { portal: { identityMode: 'otp' }, smtp, otp: { ttlMinutes: 0.1, resendSeconds: 10 } });
  const curl = curlSession(t, gw);
  const asked = await enroll(curl, 'Expiring@Corp.test');
  t.equal(asked.status, 200);
  t.match(asked.body, /We sent a code to <strong>expiring@corp\.test<\/strong>/);
  const mail = await sink.waitForMessage('expiring@corp.test');
  t.match(mail.text, /expires in 0\.1 minutes|expires in/);
  t.notOk(gw.logs.some((l) => JSON.stringify(l).includes(codeOf(mail.subject))), 'the code is not in the log');

  const early = await curl('/portal/resend', ['--data-urlencode', `_csrf=${csrfOf(asked.body)}`, '--data-urlencode', `challenge=${challengeOf(asked.body)}`]);
  t.equal(early.status, 429);
  t.match(early.body, /You can ask for another in \d+ s/);

  await sleep(6500);
  const late = await submitCode(curl, asked.body, codeOf(mail.subject));
  t.equal(late.status, 410, 'after ttlMinutes the right code no longer works');
  t.match(late.body, /The code has expired/);

  await sleep(3600);
  sink.messages.length = 0;
  const resent = await curl('/portal/resend', ['--data-urlencode', `_csrf=${csrfOf(late.body)}`, '--data-urlencode', `challenge=${challengeOf(asked.body)}`]);
  t.equal(resent.status, 200);
  t.match(resent.body, /A new code is on its way/);
  const second = await sink.waitForMessage('expiring@corp.test');
  const oldCode = codeOf(mail.subject);
  const newCode = codeOf(second.subject);
  if (oldCode !== newCode) {
    const stale = await submitCode(curl, resent.body, oldCode);
    t.equal(stale.status, 400, 'the earlier code stopped working');
  }
  const ok = await submitCode(curl, resent.body, newCode);
  t.equal(ok.status, 303, 'the new code enrolls the device');
  t.equal((await curl('/api/captive')).json().captive, false);
});

t.test('codes per address per hour are limited, so the portal is not a mail cannon', async (t) => {
  const gw = await startDaemon(t, { portal: { identityMode: 'otp' }, smtp, otp: { maxPerHour: 2 } });
  const curl = curlSession(t, gw);
  t.equal((await enroll(curl, 'victim@corp.test')).status, 200);
  t.equal((await enroll(curl, 'victim@corp.test')).status, 200);
  const third = await enroll(curl, 'victim@corp.test');
  t.equal(third.status, 429);
  t.match(third.body, /Too many codes were sent to this address/);
  t.match(third.body, /id="email-error"/, 'shown next to the email field');
});

t.test('parallel requests cannot slip past the hourly limit', async (t) => {
  const gw = await startDaemon(t, { portal: { identityMode: 'otp' }, smtp, otp: { maxPerHour: 2 } });
  sink.messages.length = 0;
  const results = await Promise.all(Array.from({ length: 6 }, () => enroll(curlSession(t, gw), 'burst@corp.test')));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [200, 200, 429, 429, 429, 429], 'two codes, four refusals');
  await sleep(500);
  t.equal(sink.messages.filter((m) => m.to.includes('burst@corp.test')).length, 2, 'two mails');
});

t.test('when mail cannot be sent the person is told, and nothing is enrolled', async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as { port: number }).port;
  await new Promise((r) => closed.close(r));
  const gw = await startDaemon(t, { portal: { identityMode: 'otp' }, smtp: { ...smtp, port } });
  const curl = curlSession(t, gw);
  const r = await enroll(curl, 'someone@corp.test');
  t.equal(r.status, 502);
  t.match(r.body, /The code could not be sent right now/);
  t.ok(gw.logs.some((l) => l.msg === 'could not send the one-time code' && /ECONNREFUSED/.test(JSON.stringify(l))), 'the reason is in the log');
  t.equal((await curl('/api/captive')).json().captive, true);
});

t.test('an address outside the allowed domains gets no code', async (t) => {
  const gw = await startDaemon(t, { portal: { identityMode: 'otp', allowedDomains: ['corp.test'] }, smtp });
  sink.messages.length = 0;
  const r = await enroll(curlSession(t, gw), 'mallory@elsewhere.test');
  t.equal(r.status, 400);
  t.match(r.body, /Addresses at elsewhere\.test cannot join this network/);
  await sleep(300);
  t.equal(sink.messages.length, 0);
});
