import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { run } from './exec.js';
import { tempDir, type Teardown } from './daemon.js';

// oidc-provider ships no type declarations: load it through a non-literal specifier so tsc leaves it alone.
// (v9 prints "Unsupported runtime. Use Node.js v22.x LTS" once on import under Node 20; it works regardless.)
const OIDC_PROVIDER: string = 'oidc-provider';

export interface OidcAccount { email: string; email_verified?: boolean; name?: string }

export interface OidcProvider {
  /** `https://127.0.0.1:<port>`: the certificate has IP SANs 127.0.0.1 and ::1, DNS SANs idp.test and localhost. */
  issuer: string;
  port: number;
  /** The throwaway CA that signed the provider's certificate: give it to the daemon as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  clientId: string;
  clientSecret: string;
  /**
   * Redirect URIs the client may use. Live: push to it after the daemon has bound its port (the daemon needs the issuer,
   * the provider the daemon's callback URL). Starts as opts.redirectUris.
   */
  redirectUris: string[];
  /** Account ids, in order, of every successful sign-in on the login page. */
  logins: string[];
  /** The oidc-provider instance (untyped), for tests that want to poke at it. */
  provider: any;
  stop(): Promise<void>;
}

const DEFAULT_ACCOUNTS: Record<string, OidcAccount> = { alice: { email: 'alice@corp.test', email_verified: true } };

async function openssl(args: string[]): Promise<void> {
  const r = await run('openssl', args);
  if (r.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** A throwaway CA and a leaf for the given DNS names and IP addresses (makeBackendCert only does DNS names). */
export async function makeProviderCert(dir: string, dns: string[], ips: string[]): Promise<{ caFile: string; certFile: string; keyFile: string }> {
  const p = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', p('idp-ca.key'), '-out', p('idp-ca.pem'), '-subj', '/CN=IdP Test CA', '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await openssl(['req', ...ec, '-keyout', p('idp.key'), '-out', p('idp.csr'), '-subj', `/CN=${dns[0] ?? ips[0]}`]);
  const san = [...dns.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  writeFileSync(p('idp.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`);
  await openssl(['x509', '-req', '-in', p('idp.csr'), '-CA', p('idp-ca.pem'), '-CAkey', p('idp-ca.key'), '-CAcreateserial',
    '-out', p('idp.pem'), '-days', '2', '-extfile', p('idp.ext')]);
  return { caFile: p('idp-ca.pem'), certFile: p('idp.pem'), keyFile: p('idp.key') };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, clientId: string, error?: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in - test IdP</title></head>
<body>
<h1>Sign in to the test IdP</h1>
<p>Client: <code class="client">${esc(clientId)}</code></p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>Login <input name="login" autocomplete="username" autofocus required></label>
<button type="submit">Sign in</button>
</form>
</body></html>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A real OpenID Connect provider (oidc-provider v9) over HTTPS on 127.0.0.1, with one confidential client
 * (client_secret_basic or client_secret_post), authorization code + PKCE S256 only, scopes openid/email/profile,
 * and `email`/`email_verified` in the ID token itself. Its login page is a form with `input[name=login]` (the account id)
 * and `button[type=submit]`; consent is granted automatically. Memory adapter: state dies with it.
 */
export async function startOidcProvider(t: Teardown, opts: { redirectUris: string[]; accounts?: Record<string, OidcAccount> }): Promise<OidcProvider> {
  const accounts = opts.accounts ?? DEFAULT_ACCOUNTS;
  const dir = tempDir(t, 'gwoidc-');
  const { caFile, certFile, keyFile } = await makeProviderCert(dir, ['idp.test', 'localhost'], ['127.0.0.1', '::1']);
  const clientId = 'gatewayd-portal';
  const clientSecret = randomBytes(24).toString('base64url');
  const logins: string[] = [];

  // The issuer must be known before the provider is built, so bind first and attach the handler afterwards.
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => { res.statusCode = 503; res.end(); };
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  t.teardown(stop);
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://127.0.0.1:${port}`;

  const { default: Provider } = (await import(OIDC_PROVIDER)) as { default: any };
  const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test-rs256', use: 'sig', alg: 'RS256' };

  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      // registration needs one; an unused placeholder when the caller will only add URIs later
      redirect_uris: opts.redirectUris.length ? opts.redirectUris : ['https://unused.invalid/callback'],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic', // client_secret_post is accepted too (oidc-provider allows either for a secret)
    }],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')] },
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = Object.hasOwn(accounts, id) ? accounts[id] : undefined;
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: account.email, email_verified: account.email_verified ?? false, ...(account.name ? { name: account.name } : {}) };
        },
      };
    },
    // Our own error page (also keeps oidc-provider from printing a NOTICE on stdout, where tap reads TAP).
    async renderError(ctx: any, out: { error: string; error_description?: string }) {
      ctx.type = 'html';
      ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>IdP error</title></head><body><h1>IdP error</h1>`
        + `<p class="error" role="alert"><code class="error-code">${esc(String(out.error))}</code>: ${esc(String(out.error_description ?? ''))}</p></body></html>`;
    },
    clientBasedCORS: () => false,
    // Explicit lifetimes: each default ttl function used would print a NOTICE on stdout.
    ttl: { AccessToken: 3600, AuthorizationCode: 600, IdToken: 3600, Interaction: 3600, Session: 86400, Grant: 86400 },
  });
  const callback = provider.callback();
  const redirectUris = [...opts.redirectUris];
  // Check redirect_uri against the live list by overriding Client#redirectUriAllowed (this provider's own Client class only).
  const registered = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(this: { clientId: string }, value: string): boolean {
    return this.clientId === clientId ? redirectUris.includes(value) : registered.call(this, value);
  };

  /** Our own interaction pages (devInteractions are off): a login form, and consent that approves itself. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction uid mismatch');
    const { prompt, params, session } = details;
    if (req.method === 'POST' && action === 'login') {
      const login = (await readForm(req)).get('login')?.trim() ?? '';
      if (!Object.hasOwn(accounts, login)) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(loginPage(uid, String(params.client_id), `Unknown account "${login}"`));
        return;
      }
      logins.push(login);
      await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      return;
    }
    if (req.method === 'GET' && action === undefined && prompt.name === 'login') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(loginPage(uid, String(params.client_id)));
      return;
    }
    if (req.method === 'GET' && action === undefined && prompt.name === 'consent') {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      const d = prompt.details;
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      if (d.missingResourceScopes) {
        for (const [indicator, scopes] of Object.entries(d.missingResourceScopes as Record<string, string[]>)) grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`unexpected interaction ${req.method} ${action ?? ''} for prompt ${prompt.name}`);
  }

  handler = (req, res) => {
    const m = /^\/interaction\/([^/?]+)(?:\/([^/?]+))?(?:\?|$)/.exec(req.url ?? '');
    if (!m) {
      callback(req, res);
      return;
    }
    interaction(req, res, m[1], m[2]).catch((err: any) => {
      if (res.headersSent) { res.destroy(); return; }
      res.writeHead(err?.statusCode ?? 500, { 'content-type': 'text/plain' });
      res.end(`interaction failed: ${err?.name ?? 'Error'}: ${err?.message ?? err}${err?.error_description ? ` (${err.error_description})` : ''}`);
    });
  };

  return { issuer, port, caFile, clientId, clientSecret, redirectUris, logins, provider, stop };
}

/**
 * On the provider's login page (where the browser landed after following the authorization URL), signs in as `login`
 * and waits until the browser has left the provider (normally: loaded the client's redirect URI).
 * Throws with the page's message if the provider refused the login. Consent is granted by the provider itself;
 * should a consent form with a submit button ever show, it is approved.
 */
export async function signInAtProvider(page: Page, login: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const input = page.locator('input[name=login]');
  await input.waitFor({ timeout: left() });
  const origin = new URL(page.url()).origin;
  await input.fill(login);
  let submit = page.locator('button[type=submit]').first();
  for (let step = 0; step < 5; step++) {
    // The POST answers with a chain of 303s (login -> /auth -> consent -> /auth -> redirect_uri): one main-frame commit at the end.
    const navigated = page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: left() });
    await submit.click({ timeout: left() });
    await navigated;
    const here = new URL(page.url());
    if (here.origin !== origin) {
      await page.waitForLoadState('load', { timeout: left() });
      return;
    }
    // Still at the provider: the login was refused, or a consent page wants a click.
    await page.waitForLoadState('domcontentloaded', { timeout: left() });
    const error = page.locator('.error');
    if (await error.count()) throw new Error(`the provider refused the login: ${await error.first().textContent()}`);
    if (await page.locator('input[name=login]').count()) throw new Error('the provider showed its login form again');
    submit = page.locator('button[type=submit]').first();
    if (!(await submit.count())) throw new Error(`stuck at the provider: ${here.href}: ${(await page.textContent('body'))?.slice(0, 300)}`);
  }
  throw new Error('too many steps at the provider');
}
