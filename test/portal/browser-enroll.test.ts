import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { launchChromium, openPage, submitAndWait, USER_AGENTS } from '../helpers/browser.js';
import { startDaemon, HOSTNAME, type RunningDaemon } from '../helpers/daemon.js';
import { sleep, waitFor } from '../helpers/exec.js';
import { signInAtProvider, startOidcProvider } from '../helpers/oidc.js';
import { startSmtpSink } from '../helpers/smtp.js';

// A real Chromium goes through the enrollment portal in each identity mode. Enrollment is keyed by the client
// address and Chromium always comes from 127.0.0.1, so each mode gets its own daemon, and within one the later
// scenarios either enroll nothing first or have the admin remove the device.
const chromium = await launchChromium(t);
type T = Test;

const origin = (gw: RunningDaemon) => `https://${HOSTNAME}:${gw.httpsPort}`;

const open = (t: T, userAgent?: string) => openPage(t, chromium, userAgent);

const submit = submitAndWait;

/** Opens /portal (with a controller's query string), types `email` and submits. */
async function enroll(page: Page, gw: RunningDaemon, email: string, query = ''): Promise<Response> {
  await page.goto(`${origin(gw)}/portal${query}`);
  await page.fill('input[name=email]', email);
  return submit(page);
}

/** A request from inside the page (so with its cookies, origin and Chromium's host rules); the page must be on the gateway. */
function fetchIn(page: Page, path: string, form?: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return page.evaluate(async ([path, form]) => {
    const r = await fetch(path, form ? { method: 'POST', body: new URLSearchParams(form), redirect: 'manual' } : {});
    return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() };
  }, [path, form] as const);
}

/** An admin session in its own context: the device list through the admin JSON API, and removal through the admin page. */
async function asAdmin(t: T, gw: RunningDaemon) {
  const page = await open(t);
  await page.goto(`${origin(gw)}/admin/login?next=/admin/devices`);
  await page.fill('input[name=username]', 'admin');
  await page.fill('input[name=password]', readFileSync(join(gw.dataDir, 'initial-admin-password'), 'utf8').trim());
  const res = await submit(page);
  if (res.status() !== 200 || !page.url().endsWith('/admin/devices')) throw new Error(`admin login failed: ${res.status()} ${page.url()}`);
  return {
    async devices(): Promise<Record<string, any>[]> {
      const r = await fetchIn(page, '/admin/api/devices');
      if (r.status !== 200) throw new Error(`/admin/api/devices: ${r.status} ${r.body}`);
      return JSON.parse(r.body).devices;
    },
    async remove(id: number): Promise<void> {
      await page.goto(`${origin(gw)}/admin/devices`);
      await submit(page, `tr[data-device="${id}"] button[type=submit]`);
    },
  };
}

async function connectedAs(t: T, page: Page, gw: RunningDaemon, identity: string | null): Promise<void> {
  t.equal(page.url(), `${origin(gw)}/portal`, 'ends on the portal');
  t.equal(await page.textContent('h1'), 'You are connected');
  if (identity) t.equal(await page.textContent('main p strong'), identity, 'the page names the identity');
}

/** The captive probe on the plain-HTTP port, as an Android phone would send it. */
async function probe(gw: RunningDaemon): Promise<{ status: number; location: string | null }> {
  const r = await fetch(`http://127.0.0.1:${gw.httpPort}/generate_204`, { redirect: 'manual' });
  await r.arrayBuffer();
  return { status: r.status, location: r.headers.get('location') };
}

t.test('none mode', async (t) => {
  const gw = await startDaemon(t, { portal: { identityMode: 'none' } });
  const admin = await asAdmin(t, gw);

  t.test('any text enrolls; the captive probe answers 204 afterwards', async (t) => {
    t.same(await probe(gw), { status: 302, location: `${origin(gw)}/portal` }, 'before enrollment the probe is sent to the portal');
    const page = await open(t, USER_AGENTS.windows);
    await page.goto(`${origin(gw)}/portal`);
    t.equal(await page.textContent('h1'), 'Join the network');
    t.equal(await page.getAttribute('input[name=email]', 'type'), 'text');
    await enroll(page, gw, 'visitor');
    await connectedAs(t, page, gw, 'visitor');
    const devices = await admin.devices();
    t.equal(devices.length, 1);
    t.match(devices[0], { identity: 'visitor', identityMode: 'none', clientIp: '127.0.0.1', mac: null, handoff: null });
    t.match(devices[0].userAgent, /Windows NT 10\.0/, 'the browser user agent is recorded');
    t.same(await probe(gw), { status: 204, location: null }, 'an enrolled device gets the OS success answer');
  });

  t.test('the done page gives next steps per OS', async (t) => {
    const want: Record<keyof typeof USER_AGENTS, { platform: string; steps: [string, string][] }> = {
      iphone: { platform: 'ios', steps: [['profile', '/portal/profile.mobileconfig']] },
      android: { platform: 'android', steps: [['profile', '/ca.crt']] },
      windows: { platform: 'windows', steps: [['connect', '/portal/connect'], ['profile', '/ca.crt']] },
      macos: { platform: 'macos', steps: [['connect', '/portal/connect'], ['profile', '/portal/profile.mobileconfig']] },
    };
    for (const [ua, expected] of Object.entries(want)) {
      const page = await open(t, USER_AGENTS[ua as keyof typeof USER_AGENTS]);
      await page.goto(`${origin(gw)}/portal`);
      t.equal(await page.textContent('h1'), 'You are connected', `${ua}: the enrolled address sees the done page in any browser`);
      t.equal(await page.getAttribute('ol.steps', 'data-platform'), expected.platform, `${ua}: platform`);
      const steps = await page.$$eval('ol.steps li[data-step]', (lis) => lis.map((li) => [li.getAttribute('data-step'), li.querySelector('a')?.getAttribute('href') ?? null]));
      t.same(steps, expected.steps, `${ua}: steps and their links`);
      if (ua === 'iphone') {
        const profile = await fetchIn(page, '/portal/profile.mobileconfig');
        t.equal(profile.status, 200);
        t.match(profile.type, /^application\/x-apple-aspen-config/, 'the iOS step links to a real profile');
      }
      await page.context().close();
    }
  });

  t.test('controller hand-off: stored with the device; safe continue URLs are followed, unsafe ones are not', async (t) => {
    const landed: string[] = [];
    const site = createServer((req, res) => {
      landed.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Landed</title><h1>Landed</h1>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    t.teardown(() => { site.closeAllConnections(); site.close(); });
    const continueUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/landed?x=1`;
    const meraki = (next: string) => `?client_mac=AA:BB:CC:DD:EE:01&client_ip=10.1.2.3&ap_mac=00:18:0a:11:22:33&ssid=Guest&continue_url=${encodeURIComponent(next)}`;

    for (const next of [continueUrl, 'javascript:alert(1)', 'https://user:pw@evil.test/']) {
      const [current] = await admin.devices(); // enrolled by the first test, or by the previous round
      if (current) await admin.remove(current.id);
      t.same(await admin.devices(), [], 'the admin removed the device, so the portal shows its form again');
      const page = await open(t);
      let dialog = false;
      page.on('dialog', (d) => { dialog = true; void d.dismiss(); });
      await enroll(page, gw, 'visitor', meraki(next));
      t.match(await admin.devices(), [{ mac: 'aa:bb:cc:dd:ee:01', identity: 'visitor', handoff: { ssid: 'Guest', reportedIp: '10.1.2.3', ap: '00:18:0a:11:22:33', mac: 'aa:bb:cc:dd:ee:01', continueUrl: next } }],
        'the hand-off is stored, normalized, with the device');
      if (next === continueUrl) {
        t.equal(page.url(), continueUrl, 'the browser ends at the continue URL');
        t.equal(await page.textContent('h1'), 'Landed');
        t.same(landed.filter((u) => u.startsWith('/landed')), ['/landed?x=1']);
        await page.goto(`${origin(gw)}/portal`);
        t.equal(await page.getAttribute('#continue', 'href'), continueUrl, 'the done page offers the continue URL');
      } else {
        await connectedAs(t, page, gw, 'visitor');
        t.equal(await page.locator('#continue').count(), 0, `${next}: no continue link`);
        t.notOk(dialog, `${next}: no script ran`);
        await gw.waitForLog((l) => l.msg === 'ignored an unsafe continue URL' && l.continueUrl === next);
      }
      await page.context().close();
    }
  });
});

t.test('domain mode with branding: the brand shows; other domains are refused next to the field; addresses are stored lowercase', async (t) => {
  const gw = await startDaemon(t, {
    portal: { identityMode: 'domain', allowedDomains: ['corp.test', 'corp.example'], branding: { name: 'Acme Guest WiFi', color: '#aa3300', welcome: 'Hello from Acme' } },
  });
  const admin = await asAdmin(t, gw);
  const page = await open(t);
  await page.goto(`${origin(gw)}/portal`);
  t.equal(await page.textContent('header strong'), 'Acme Guest WiFi', 'brand name in the header');
  t.match(await page.title(), /Acme Guest WiFi/);
  t.equal(await page.textContent('main h1 + p'), 'Hello from Acme', 'welcome text');
  t.equal(await page.$eval('header', (h) => getComputedStyle(h).backgroundColor), 'rgb(170, 51, 0)', 'accent color on the header');
  t.equal(await page.$eval('form button[type=submit]', (b) => getComputedStyle(b).backgroundColor), 'rgb(170, 51, 0)', 'and on the button');
  t.equal(await page.textContent('#email-hint'), 'Use your address at corp.test or corp.example.');

  const refused = await enroll(page, gw, 'someone@gmail.test');
  t.equal(refused.status(), 400);
  t.match(await page.textContent('#email-error'), /gmail\.test.*corp\.test or corp\.example/);
  t.equal(await page.getAttribute('input[name=email]', 'aria-invalid'), 'true');
  t.equal(await page.inputValue('input[name=email]'), 'someone@gmail.test', 'what was typed is kept');
  t.same(await admin.devices(), [], 'nothing enrolled');

  await page.fill('input[name=email]', 'Alice@Corp.Test');
  await submit(page);
  await connectedAs(t, page, gw, 'alice@corp.test');
  t.match(await admin.devices(), [{ identity: 'alice@corp.test', identityMode: 'domain' }]);
});

/** The code in a mail the daemon sent (the subject starts with it). */
const codeOf = (subject: string) => /^(\d{6,10}) is your /.exec(subject)?.[1] ?? '';
const wrong = (code: string) => code.replace(/\d$/, (d) => String((Number(d) + 1) % 10));

t.test('otp mode (maxAttempts 3, resendSeconds 10)', async (t) => {
  const smtp = await startSmtpSink(t);
  const gw = await startDaemon(t, { portal: { identityMode: 'otp' }, smtp: { host: '127.0.0.1', port: smtp.port, from: 'gateway@corp.test' }, otp: { maxAttempts: 3, resendSeconds: 10 } });
  const admin = await asAdmin(t, gw);
  // Bob's challenge is opened first; its resend wait runs while Carol locks hers.
  const bob = await open(t);
  let bobCode = '';
  let bobSentBy = 0;

  t.test('the code is mailed; a wrong one is refused with the tries left; a resend right away is refused', async (t) => {
    t.equal((await enroll(bob, gw, 'bob@corp.test')).status(), 200);
    bobSentBy = Date.now();
    t.equal(await bob.textContent('h1'), 'Check your email');
    t.equal(await bob.textContent('main strong'), 'bob@corp.test');
    const mail = await smtp.waitForMessage('bob@corp.test');
    t.equal(mail.from, 'gateway@corp.test');
    bobCode = codeOf(mail.subject);
    t.match(bobCode, /^\d{6}$/, `a 6-digit code in the subject: ${mail.subject}`);
    t.match(mail.text, new RegExp(`network is ${bobCode}\\.`), 'and in the text');

    await bob.fill('input[name=code]', wrong(bobCode));
    t.equal((await submit(bob)).status(), 400);
    t.match(await bob.textContent('#code-error'), /not right\. 2 tries left/);
    t.equal(await bob.getAttribute('input[name=code]', 'aria-invalid'), 'true');

    t.equal((await submit(bob, 'form[action="/portal/resend"] button')).status(), 429, 'a resend right away is refused');
    t.match(await bob.textContent('#code-error'), /another in \d+ s/);
    t.equal(smtp.messages.length, 1, 'no second mail');
    t.same(await admin.devices(), [], 'nothing enrolled yet');
  });

  t.test('after maxAttempts wrong codes the challenge is locked, and even the right code is refused', async (t) => {
    const page = await open(t);
    await enroll(page, gw, 'carol@corp.test');
    const code = codeOf((await smtp.waitForMessage('carol@corp.test')).subject);
    t.match(code, /^\d{6}$/);
    const form = { _csrf: await page.inputValue('input[name=_csrf]'), challenge: await page.inputValue('input[name=challenge]') };
    for (const left of ['2 tries', '1 try']) {
      await page.fill('input[name=code]', wrong(code));
      t.equal((await submit(page)).status(), 400);
      t.match(await page.textContent('#code-error'), new RegExp(`not right\\. ${left} left`));
    }
    await page.fill('input[name=code]', wrong(code));
    t.equal((await submit(page)).status(), 429);
    t.match(await page.textContent('#code-error'), /Too many wrong codes/);
    t.equal(await page.locator('input[name=code]').count(), 0, 'no code field any more');
    // The same browser posts the right code for the locked challenge.
    const late = await fetchIn(page, '/portal/verify', { ...form, code });
    t.equal(late.status, 429, 'the right code no longer works');
    t.match(late.body, /Too many wrong codes/);
    t.same(await admin.devices(), [], 'nothing enrolled');
  });

  t.test('after resendSeconds a new code arrives; it works and the first one no longer does', async (t) => {
    await sleep(bobSentBy + 10_200 - Date.now());
    const before = smtp.messages.length;
    t.equal((await submit(bob, 'form[action="/portal/resend"] button')).status(), 200);
    t.match(await bob.textContent('p.info'), /A new code is on its way/);
    await waitFor(() => smtp.messages.length > before, 5000, 'a second mail');
    t.same(smtp.messages[before].to, ['bob@corp.test']);
    const second = codeOf(smtp.messages[before].subject);
    t.match(second, /^\d{6}$/);
    if (second === bobCode) t.fail('the new code equals the old one (1 in a million); rerun');
    await bob.fill('input[name=code]', bobCode);
    t.equal((await submit(bob)).status(), 400, 'the first code is void');
    await bob.fill('input[name=code]', second);
    await submit(bob);
    await connectedAs(t, bob, gw, 'bob@corp.test');
    t.match(await admin.devices(), [{ identity: 'bob@corp.test', identityMode: 'otp' }]);
  });
});

t.test('sso mode: sign-in at the identity provider enrolls; an unverified email or another domain is refused', async (t) => {
  const idp = await startOidcProvider(t, {
    redirectUris: [],
    accounts: {
      alice: { email: 'alice@corp.test', email_verified: true },
      mallory: { email: 'mallory@corp.test', email_verified: false },
      eve: { email: 'eve@elsewhere.test', email_verified: true },
    },
  });
  const gw = await startDaemon(t, { portal: { identityMode: 'sso', allowedDomains: ['corp.test'], sso: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret } } },
    { env: { NODE_EXTRA_CA_CERTS: idp.caFile } });
  idp.redirectUris.push(`${origin(gw)}/portal/sso/callback`);
  const admin = await asAdmin(t, gw);

  const unverified = await open(t);
  await enroll(unverified, gw, '');
  t.equal(new URL(unverified.url()).origin, idp.issuer, 'the portal sends the browser to the provider');
  const callback = unverified.waitForResponse((r) => new URL(r.url()).pathname === '/portal/sso/callback');
  await signInAtProvider(unverified, 'mallory');
  t.equal((await callback).status(), 403);
  t.equal(new URL(unverified.url()).pathname, '/portal/sso/callback');
  t.equal(await unverified.textContent('h1'), 'Sign-in failed');
  t.match(await unverified.textContent('main p[role=alert]'), /not verified/);
  t.same(await admin.devices(), [], 'nothing enrolled');

  const outsider = await open(t);
  await enroll(outsider, gw, '');
  const refused = outsider.waitForResponse((r) => new URL(r.url()).pathname === '/portal/sso/callback');
  await signInAtProvider(outsider, 'eve');
  t.equal((await refused).status(), 403);
  t.match(await outsider.textContent('main p[role=alert]'), /Accounts at elsewhere\.test cannot join this network/);
  t.same(await admin.devices(), [], 'an account outside allowedDomains enrolls nothing');

  const page = await open(t);
  await enroll(page, gw, '');
  await signInAtProvider(page, 'alice');
  await connectedAs(t, page, gw, 'alice@corp.test');
  t.match(await admin.devices(), [{ identity: 'alice@corp.test', identityMode: 'sso' }]);
  t.same(idp.logins, ['mallory', 'eve', 'alice']);
});
