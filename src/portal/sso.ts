import * as oidc from 'openid-client';
import { gatewayUrl, type GatewayContext } from '../http/context.js';
import type { PortalView } from './settings.js';

type SsoConfig = NonNullable<PortalView['sso']>;

/** The callback every tenant's identity provider redirects to; register it as the client's redirect URI. */
export const SSO_CALLBACK_PATH = '/portal/sso/callback';
/** Binds a sign-in to the browser that started it (SameSite=Lax: the IdP's redirect is a top-level GET). */
export const SSO_COOKIE = '__Host-gw_sso';
const LOGIN_TTL_MS = 10 * 60e3;

/** Discovery documents, fetched once per provider and client; a failed fetch is retried next time. */
const discovered = new Map<string, Promise<oidc.Configuration>>();

function configurationFor(sso: SsoConfig): Promise<oidc.Configuration> {
  const key = JSON.stringify([sso.issuer, sso.clientId, sso.clientSecret]);
  let p = discovered.get(key);
  if (!p) {
    p = oidc.discovery(new URL(sso.issuer), sso.clientId, sso.clientSecret, sso.clientSecret ? oidc.ClientSecretBasic(sso.clientSecret) : oidc.None(), {
      timeout: 10,
    });
    p.catch(() => discovered.delete(key));
    discovered.set(key, p);
  }
  return p;
}

/** Starts an authorization code flow with PKCE; returns the provider URL to send the browser to. */
export async function beginSignIn(
  ctx: GatewayContext,
  view: PortalView,
  req: { clientIp: string; handoff: Record<string, string> | null; userAgent: string | null; loginHint?: string },
): Promise<{ url: string; state: string }> {
  const sso = view.sso!;
  const config = await configurationFor(sso);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  await ctx.store.ssoLogins.create({
    state, tenantId: view.tenant.id, codeVerifier, nonce, clientIp: req.clientIp, handoff: req.handoff, userAgent: req.userAgent, createdAt: Date.now(),
  });
  const params: Record<string, string> = {
    redirect_uri: gatewayUrl(ctx, SSO_CALLBACK_PATH),
    scope: sso.scopes.join(' '),
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (req.loginHint) params.login_hint = req.loginHint;
  return { url: oidc.buildAuthorizationUrl(config, params).href, state };
}

export type SignInResult =
  | { ok: true; email: string; tenantId: string; clientIp: string; handoff: Record<string, string> | null; userAgent: string | null }
  | { ok: false; status: number; message: string };

/** Completes the flow at the callback: checks state, browser binding, PKCE and nonce, and reads the email from the ID token. */
export async function finishSignIn(ctx: GatewayContext, query: Record<string, string>, browserState: string | undefined, viewOf: (tenantId: string) => Promise<PortalView | undefined>): Promise<SignInResult> {
  if (query.error) return { ok: false, status: 400, message: `The identity provider refused the sign-in: ${query.error_description ?? query.error}` };
  if (!query.state || !query.code) return { ok: false, status: 400, message: 'The sign-in answer is missing its code or state. Start again.' };
  const login = await ctx.store.ssoLogins.take(query.state);
  if (!login || Date.now() - login.createdAt > LOGIN_TTL_MS) return { ok: false, status: 400, message: 'This sign-in is unknown or expired. Start again.' };
  if (browserState !== login.state) return { ok: false, status: 400, message: 'This sign-in was started in another browser. Start again here.' };
  const view = await viewOf(login.tenantId);
  if (!view?.sso) return { ok: false, status: 409, message: 'Single sign-on is no longer set up for this network.' };
  const redirectUri = gatewayUrl(ctx, SSO_CALLBACK_PATH);
  const current = new URL(redirectUri);
  for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v);
  let claims: oidc.IDToken | undefined;
  try {
    const config = await configurationFor(view.sso);
    const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: login.codeVerifier, expectedState: login.state, expectedNonce: login.nonce, idTokenExpected: true }, { redirect_uri: redirectUri });
    claims = tokens.claims();
  } catch (err) {
    ctx.log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code }, tenant: login.tenantId }, 'SSO code exchange failed');
    return { ok: false, status: 502, message: 'The identity provider did not confirm the sign-in. Start again; if it keeps failing, tell IT.' };
  }
  const email = typeof claims?.email === 'string' ? claims.email.toLowerCase() : undefined;
  if (!email) return { ok: false, status: 403, message: 'Your account has no email address at the identity provider, so it cannot be used here.' };
  // A provider that does not say the email is verified has not verified it (allowUnverifiedEmail trusts it anyway).
  if (claims!.email_verified !== true && !view.sso.allowUnverifiedEmail) return { ok: false, status: 403, message: 'Your email address is not verified at the identity provider.' };
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (view.allowedDomains.length > 0 && !view.allowedDomains.includes(domain)) {
    return { ok: false, status: 403, message: `Accounts at ${domain} cannot join this network. Sign in with your account at ${view.allowedDomains.join(' or ')}.` };
  }
  return { ok: true, email, tenantId: login.tenantId, clientIp: login.clientIp, handoff: login.handoff, userAgent: login.userAgent };
}
