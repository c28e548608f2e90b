import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { launchChromium, openPage, submitAndWait } from '../helpers/browser.js';
import { startDaemon, HOSTNAME } from '../helpers/daemon.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// An admin edits the enrollment portal on /portal-admin.html in a real Chromium; guests see the result at once.
// Nothing enrolls here, so every page (all from 127.0.0.1) sees the portal's enrollment form.
const chromium = await launchChromium(t);
const gw = await startDaemon(t);
const base = `https://${HOSTNAME}:${gw.httpsPort}`;
const SECRET = 'whsec-5f1c9a7e2b44d08e31aa';
const receiver = await startWebhookReceiver(t, { secret: SECRET });
/** A valid 1x1 RGBA PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const open = (t: Test) => openPage(t, chromium);

const submit = submitAndWait;

async function login(page: Page): Promise<Response> {
  await page.fill('input[name=username]', 'admin');
  await page.fill('input[name=password]', readFileSync(join(gw.dataDir, 'initial-admin-password'), 'utf8').trim());
  return submit(page);
}

/** A request from inside the page (its cookies and origin, Chromium's host rules); the page must be on the gateway. */
function fetchIn(page: Page, path: string, method = 'GET'): Promise<{ status: number; type: string; body: string; size: number }> {
  return page.evaluate(async ([path, method]) => {
    const r = await fetch(path, { method });
    const bytes = await r.arrayBuffer();
    return { status: r.status, type: r.headers.get('content-type') ?? '', body: new TextDecoder().decode(bytes), size: bytes.byteLength };
  }, [path, method] as const);
}

/** The error messages the admin page shows, by field (hidden ones left out). */
const shownErrors = (page: Page) =>
  page.$$eval('p[data-error-for]', (ps) => Object.fromEntries(ps.filter((p) => !(p as HTMLElement).hidden).map((p) => [(p as HTMLElement).dataset.errorFor, p.textContent])));

/** Clicks Save and waits for the page to show the outcome. */
async function save(page: Page): Promise<{ http: number; status: string; errors: Record<string, string | null> }> {
  const put = page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/api/portal' && r.request().method() === 'PUT');
  await page.click('#settings button[type=submit]');
  const http = (await put).status();
  await page.waitForFunction(() => !/^(Saving|$)/.test(document.getElementById('status')!.textContent ?? ''));
  return { http, status: (await page.textContent('#status')) ?? '', errors: await shownErrors(page) };
}

/** Picks a file for the logo form, uploads it and returns the HTTP status (the page reloads itself on success). */
async function uploadLogo(page: Page, file: { name: string; mimeType: string; buffer: Buffer }): Promise<number> {
  await page.setInputFiles('#logo', file);
  const post = page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/api/portal/logo' && r.request().method() === 'POST');
  await page.click('#logo-form button[type=submit]');
  const status = (await post).status();
  if (status === 200) await page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame() }).then(() => page.waitForLoadState('load'));
  else await page.waitForSelector('p[data-error-for="logo"]:not([hidden])');
  return status;
}

t.test('without a login /portal-admin.html sends the browser to the admin login, and back there after it', async (t) => {
  const page = await open(t);
  const res = await page.goto(`${base}/portal-admin.html`);
  t.equal(page.url(), `${base}/admin/login?next=%2Fportal-admin.html`);
  t.equal(res?.status(), 200);
  t.equal(await page.textContent('h1'), 'Sign in');
  t.equal(await page.locator('#settings').count(), 0, 'no settings form');
  t.equal((await fetchIn(page, '/admin/api/portal')).status, 401, 'the JSON API refuses too');
  t.equal((await fetchIn(page, '/admin/api/portal/test-webhook', 'POST')).status, 403, 'a write without a session (or CSRF token) is refused');
  await login(page);
  t.equal(page.url(), `${base}/portal-admin.html`);
  t.match(await page.textContent('h2'), /^Enrollment Portal/);
});

t.test('the portal admin page: validation next to each field, a save in effect at once, write-only secret, test webhook, logo', async (t) => {
  const page = await open(t);
  await page.goto(`${base}/portal-admin.html`);
  await login(page);
  t.equal(page.url(), `${base}/portal-admin.html`);
  const guest = await open(t);
  await guest.goto(`${base}/portal`);
  t.equal(await guest.getAttribute('input[name=email]', 'type'), 'text', 'the portal starts in none mode');
  t.notMatch(await guest.textContent('#email-hint'), /corp\.test/);

  await page.selectOption('#identityMode', 'domain');
  await page.fill('#allowedDomains', '');
  let r = await save(page);
  t.equal(r.http, 400);
  t.match(r.status, /^Not saved/);
  t.same(Object.keys(r.errors), ['allowedDomains'], 'one error, next to the allowed domains');
  t.match(r.errors.allowedDomains, /at least one allowed domain/);
  t.equal(await page.getAttribute('#allowedDomains', 'aria-invalid'), 'true');

  await page.fill('#allowedDomains', 'not a domain');
  r = await save(page);
  t.same(Object.keys(r.errors), ['allowedDomains']);
  t.match(r.errors.allowedDomains, /^entry 1: must be an email domain/);

  await page.fill('#allowedDomains', 'corp.test');
  await page.fill('#admitWebhookUrl', 'ftp://x');
  r = await save(page);
  t.same(Object.keys(r.errors).sort(), ['admitWebhookSecret', 'admitWebhookUrl'], 'the domain error is gone; every other problem is shown at once');
  t.match(r.errors.admitWebhookUrl, /http:\/\/ or https:\/\//);
  t.match(r.errors.admitWebhookSecret, /needs a secret/);
  t.equal(await page.getAttribute('#allowedDomains', 'aria-invalid'), 'false');

  await page.fill('#admitWebhookUrl', receiver.url);
  await page.fill('#admitWebhookSecret', 'short');
  r = await save(page);
  t.same(Object.keys(r.errors), ['admitWebhookSecret']);
  t.match(r.errors.admitWebhookSecret, /at least 16 characters/);

  await page.fill('#admitWebhookSecret', SECRET);
  await page.fill('[id="branding.color"]', 'red');
  r = await save(page);
  t.same(Object.keys(r.errors), ['branding.color']);
  t.match(r.errors['branding.color'], /#rrggbb/);
  t.match(r.status, /^Not saved/);
  t.match(JSON.parse((await fetchIn(page, '/admin/api/portal')).body), { identityMode: 'none', admitWebhookSecretSet: false }, 'nothing was saved so far');

  await page.fill('[id="branding.color"]', '#aa3300');
  await page.fill('[id="branding.name"]', 'Corp Guests');
  r = await save(page);
  t.equal(r.http, 200);
  t.match(r.status, /^Saved/);
  t.same(r.errors, {}, 'no errors shown');
  t.equal(await page.inputValue('#admitWebhookSecret'), '', 'the secret field is emptied');

  const fresh = await open(t);
  await fresh.goto(`${base}/portal`);
  t.equal(await fresh.textContent('#email-hint'), 'Use your address at corp.test.', 'a new portal page is in domain mode without a restart');
  t.equal(await fresh.getAttribute('input[name=email]', 'type'), 'email');
  t.equal(await fresh.textContent('header strong'), 'Corp Guests');
  t.equal(await fresh.$eval('header', (h) => getComputedStyle(h).backgroundColor), 'rgb(170, 51, 0)');

  await page.reload();
  t.equal(await page.inputValue('#identityMode'), 'domain');
  t.equal(await page.inputValue('#allowedDomains'), 'corp.test');
  t.equal(await page.inputValue('#admitWebhookUrl'), receiver.url);
  t.equal(await page.inputValue('#admitWebhookSecret'), '', 'the secret is write-only');
  t.match(await page.textContent('#secret-state'), /A secret is saved/);
  t.notOk((await page.content()).includes(SECRET), 'the secret is nowhere in the page');
  const api = await fetchIn(page, '/admin/api/portal');
  const json = JSON.parse(api.body);
  t.match(json, { identityMode: 'domain', allowedDomains: ['corp.test'], admitWebhookUrl: receiver.url, admitWebhookSecretSet: true, branding: { color: '#aa3300' } });
  t.same(Object.keys(json).filter((k) => /secret/i.test(k)), ['admitWebhookSecretSet'], 'no secret field in the JSON');
  t.notOk(api.body.includes(SECRET), 'and not its value anywhere');

  await page.click('#test-webhook');
  await page.waitForFunction(() => !/^(Sending|$)/.test(document.getElementById('test-result')!.textContent ?? ''));
  t.match(await page.textContent('#test-result'), /^Delivered: the receiver answered HTTP 200/);
  const [delivery] = await receiver.waitForDeliveries(1);
  t.ok(delivery.signatureOk, 'the receiver verified the HMAC signature with the saved secret');
  t.match(delivery, { json: { event: 'webhook.test' }, headers: { 'x-gateway-event': 'webhook.test' } });

  t.equal(await uploadLogo(page, { name: 'logo.png', mimeType: 'image/png', buffer: PNG }), 200);
  t.equal(await page.locator('img[alt="current logo"]').count(), 1, 'the admin page shows the logo');
  const logoLoaded = fresh.waitForResponse((res) => new URL(res.url()).pathname.startsWith('/portal/logo/'));
  await fresh.goto(`${base}/portal`);
  const logo = await logoLoaded;
  t.equal(logo.status(), 200);
  t.equal(logo.headers()['content-type'], 'image/png');
  t.ok((await logo.body()).equals(PNG), 'the bytes uploaded');
  await fresh.waitForFunction(() => document.querySelector<HTMLImageElement>('header img')?.complete);
  t.equal(await fresh.$eval('header img', (img) => (img as HTMLImageElement).naturalWidth), 1, 'the header image decodes');
  const logoPath = (await fresh.getAttribute('header img', 'src'))!.split('?')[0];

  t.equal(await uploadLogo(page, { name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image, only text\n') }), 415);
  t.match((await shownErrors(page)).logo, /PNG, JPEG/);
  t.equal(await uploadLogo(page, { name: 'huge.png', mimeType: 'image/png', buffer: Buffer.concat([PNG, Buffer.alloc(300 * 1024)]) }), 413);
  t.match((await shownErrors(page)).logo, /256 KiB/);
  const kept = await fetchIn(fresh, logoPath);
  t.match(kept, { status: 200, type: 'image/png', size: PNG.length }, 'the refused uploads left the saved logo alone');
});
