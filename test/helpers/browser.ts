import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import { HOSTNAME, tempDir, type Teardown } from './daemon.js';

export const CHROMIUM = '/usr/bin/chromium';

/** User agents portal tests can pretend to have (the enrollment portal picks instructions by platform). */
export const USER_AGENTS = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  windows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  macos: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
} as const;

export interface LaunchedChromium {
  browser: Browser;
  /** A page in a fresh context (own cookies). HTTPS errors are ignored unless the launch said `ignoreHTTPSErrors: false`. */
  newPage(opts?: { userAgent?: string; ignoreHTTPSErrors?: boolean }): Promise<Page>;
}

/**
 * Debian's Chromium, headless, driven by playwright-core; closed on teardown. `gw.test` resolves to 127.0.0.1,
 * plus any `hostRules` (e.g. 'MAP idp.test 127.0.0.1'). HOME is `home` (whose .pki/nssdb holds the roots Chromium
 * trusts) or a fresh empty directory. Launch one per test file: the machine has two cores.
 */
export async function launchChromium(t: Teardown, opts: { home?: string; hostRules?: string[]; ignoreHTTPSErrors?: boolean } = {}): Promise<LaunchedChromium> {
  const home = opts.home ?? tempDir(t, 'gwchromium-home-');
  const rules = [`MAP ${HOSTNAME} 127.0.0.1`, ...(opts.hostRules ?? [])];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    env: { ...process.env, HOME: home },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--disable-extensions',
      `--host-resolver-rules=${rules.join(', ')}`,
    ],
  });
  t.teardown(() => browser.close());
  const defaultIgnore = opts.ignoreHTTPSErrors ?? true;
  return {
    browser,
    async newPage(pageOpts = {}) {
      const context = await browser.newContext({
        ignoreHTTPSErrors: pageOpts.ignoreHTTPSErrors ?? defaultIgnore,
        ...(pageOpts.userAgent ? { userAgent: pageOpts.userAgent } : {}),
      });
      return context.newPage();
    },
  };
}

/** A page in a fresh browser context, closed when the test ends. */
export async function openPage(t: Teardown, browser: LaunchedChromium, userAgent?: string): Promise<Page> {
  const page = await browser.newPage({ userAgent });
  t.teardown(() => page.context().close());
  return page;
}

/** Clicks a submit button and waits until the navigation it starts has loaded; returns the final (non-redirect) response. */
export async function submitAndWait(page: Page, button = 'form button[type=submit]'): Promise<Response> {
  const committed = page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame() });
  const final = page.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === page.mainFrame() && (r.status() < 300 || r.status() >= 400));
  await page.locator(button).first().click();
  const res = await final;
  await committed;
  await page.waitForLoadState('load');
  return res;
}
