import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { gatewayUrl, type GatewayContext } from '../http/context.js';
import { normalizeIp } from '../net/index.js';
import type { Tenant } from '../tenants/index.js';
import { afterEnrollment, behindNat, enrollDevice } from './enroll.js';
import { parseHandoff, safeContinueUrl, storedHandoff } from './handoff.js';
import { MOBILECONFIG_TYPE, mobileconfig } from './mobileconfig.js';
import { brandName, codeForm, connectPage, donePage, enrollForm, messagePage } from './pages.js';
import { platformOf } from './platform.js';
import { registerProbeRoutes } from './probes.js';
import { portalView, type PortalView } from './settings.js';
import { SSO_CALLBACK_PATH, SSO_COOKIE, beginSignIn, finishSignIn } from './sso.js';
import { resendChallenge, startChallenge, verifyChallenge } from './otp.js';

export { answerProbe, registerProbeRoutes, CAPTIVE_PROBE_HOSTS } from './probes.js';
export { portalView, validateUpdate, checkLogo, LOGO_MAX_BYTES, type PortalView } from './settings.js';
export { mobileconfig, MOBILECONFIG_TYPE } from './mobileconfig.js';
export { SSO_CALLBACK_PATH } from './sso.js';

const EMAIL_RE = /^[^\s@<>()",;:\\[\]]{1,64}@([a-z0-9-]{1,63}\.)+[a-z]{2,63}$/i;
const FORM_LIMIT = { rateLimit: { max: 30, timeWindow: '1 minute' } };

type Body = Record<string, unknown>;
/** The device's address as DNS sees it too (a dual-stack listener reports IPv4 as ::ffff:a.b.c.d). */
const clientIp = (req: FastifyRequest) => normalizeIp(req.ip);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

function html(reply: FastifyReply, status: number, body: string): string {
  reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store');
  return body;
}

/** The tenant a portal request belongs to, by the address it comes from; undefined when none. */
async function viewFor(ctx: GatewayContext, req: FastifyRequest): Promise<PortalView | undefined> {
  const tenant = ctx.tenants().forAddress(clientIp(req));
  return tenant && portalView(ctx, tenant);
}

async function viewById(ctx: GatewayContext, id: string): Promise<PortalView | undefined> {
  const tenant: Tenant | undefined = ctx.tenants().byId(id);
  return tenant && portalView(ctx, tenant);
}

/** Checks what the person typed against the tenant's identity mode; returns the identity or the reason it is refused. */
function checkIdentity(view: PortalView, input: string): { identity: string | null } | { error: string } {
  const value = input.trim().replace(/[\x00-\x1f\x7f]/g, '');
  if (value.length > 254) return { error: 'That is too long (254 characters at most).' };
  if (view.identityMode === 'none') return { identity: value || null };
  if (view.identityMode === 'sso') return value && !EMAIL_RE.test(value) ? { error: 'Enter an email address, or leave it empty.' } : { identity: value.toLowerCase() || null };
  if (!EMAIL_RE.test(value)) return { error: 'Enter your email address, as in name@example.com.' };
  const email = value.toLowerCase();
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const domains = view.allowedDomains;
  if ((view.identityMode === 'domain' || domains.length > 0) && !domains.includes(domain)) {
    return { error: `Addresses at ${domain} cannot join this network. Use your address at ${domains.join(' or ')}.` };
  }
  return { identity: email };
}

/** The enrollment portal, its identity modes, the downloads a device needs, and the captive portal API. */
export function registerPortal(app: FastifyInstance, ctx: GatewayContext): void {
  registerProbeRoutes(app, ctx);
  const notHere = (reply: FastifyReply, req: FastifyRequest) =>
    html(reply, 403, messagePage(undefined, 'Not available here', `This network is not set up for enrollment: the address ${clientIp(req)} is not in any organization's networks.`));

  app.get('/portal', async (req, reply) => {
    const view = await viewFor(ctx, req);
    if (!view) return notHere(reply, req);
    const { raw, handoff } = parseHandoff(req.query as Body);
    // Behind a tenant's NAT the address is shared: only the controller's client IP tells devices apart.
    const device = !behindNat(ctx, clientIp(req)) ? await ctx.store.devices.activeByIp(view.tenant.id, clientIp(req))
      : handoff.ip ? await ctx.store.devices.activeByHandoffIp(view.tenant.id, handoff.ip) : undefined;
    if (device) {
      const next = safeContinueUrl(device.handoff?.continueUrl, ctx.config().gateway.hostname);
      return html(reply, 200, donePage(view, platformOf(req.headers['user-agent']), device.identity, next));
    }
    return html(reply, 200, enrollForm(view, { csrf: reply.generateCsrf(), handoff: raw }));
  });

  app.post('/portal/enroll', { preValidation: app.csrfProtection, config: FORM_LIMIT }, async (req, reply) => {
    const view = await viewFor(ctx, req);
    if (!view) return notHere(reply, req);
    const body = (req.body ?? {}) as Body;
    const parsed = parseHandoff(body);
    const input = str(body.email);
    const checked = checkIdentity(view, input);
    if ('error' in checked) {
      return html(reply, 400, enrollForm(view, { csrf: reply.generateCsrf(), handoff: parsed.raw, email: input.slice(0, 254), error: checked.error }));
    }
    const handoff = storedHandoff(parsed, clientIp(req), behindNat(ctx, clientIp(req)));
    const userAgent = req.headers['user-agent'] ?? null;
    if (view.identityMode === 'otp') {
      const started = await startChallenge(ctx, { tenantId: view.tenant.id, orgName: brandName(view), email: checked.identity!, clientIp: clientIp(req), handoff, userAgent });
      if ('status' in started) return html(reply, started.status, enrollForm(view, { csrf: reply.generateCsrf(), handoff: parsed.raw, email: input, error: started.message }));
      return html(reply, 200, codeForm(view, { csrf: reply.generateCsrf(), challenge: started.id, email: checked.identity! }));
    }
    if (view.identityMode === 'sso') {
      try {
        const { url, state } = await beginSignIn(ctx, view, { clientIp: clientIp(req), handoff, userAgent, loginHint: checked.identity ?? undefined });
        reply.setCookie(SSO_COOKIE, state, { path: '/', secure: true, httpOnly: true, sameSite: 'lax', maxAge: 600 });
        return reply.redirect(url, 303);
      } catch (err) {
        ctx.log.error({ err: { message: (err as Error).message }, tenant: view.tenant.id, issuer: view.sso?.issuer }, 'cannot reach the identity provider');
        return html(reply, 502, messagePage(view, 'Sign-in unavailable', 'The organization sign-in cannot be reached right now. Try again in a minute; if it keeps failing, tell IT.'));
      }
    }
    const device = await enrollDevice(ctx, view, { clientIp: clientIp(req), identity: checked.identity, handoff, userAgent });
    return afterEnrollment(ctx, reply, device);
  });

  app.post('/portal/verify', { preValidation: app.csrfProtection, config: FORM_LIMIT }, async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const challenge = str(body.challenge).slice(0, 64);
    const result = await verifyChallenge(ctx, challenge, str(body.code).slice(0, 32), clientIp(req));
    const pending = await ctx.store.otp.get(challenge);
    const view = pending ? await viewById(ctx, pending.tenantId) : await viewFor(ctx, req);
    if (!view) return notHere(reply, req);
    if ('status' in result) {
      return html(reply, result.status, codeForm(view, { csrf: reply.generateCsrf(), challenge, email: pending?.email ?? '', error: result.message, locked: result.locked }));
    }
    const ch = result.challenge;
    const device = await enrollDevice(ctx, view, { clientIp: ch.clientIp, identity: ch.email, handoff: ch.handoff, userAgent: ch.userAgent });
    return afterEnrollment(ctx, reply, device);
  });

  app.post('/portal/resend', { preValidation: app.csrfProtection, config: FORM_LIMIT }, async (req, reply) => {
    const challenge = str((req.body as Body | undefined)?.challenge).slice(0, 64);
    const pending = await ctx.store.otp.get(challenge);
    const view = pending ? await viewById(ctx, pending.tenantId) : await viewFor(ctx, req);
    if (!view) return notHere(reply, req);
    const r = await resendChallenge(ctx, challenge, clientIp(req), brandName(view));
    const state = { csrf: reply.generateCsrf(), challenge, email: pending?.email ?? '' };
    if ('status' in r) return html(reply, r.status, codeForm(view, { ...state, error: r.message, locked: r.status === 404 }));
    return html(reply, 200, codeForm(view, { ...state, info: 'A new code is on its way. The earlier one no longer works.' }));
  });

  app.get(SSO_CALLBACK_PATH, async (req, reply) => {
    const query = Object.fromEntries(Object.entries(req.query as Body).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    const result = await finishSignIn(ctx, query, req.cookies[SSO_COOKIE], (id) => viewById(ctx, id));
    reply.clearCookie(SSO_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'lax' });
    if (!result.ok) return html(reply, result.status, messagePage(await viewFor(ctx, req), 'Sign-in failed', result.message));
    const view = (await viewById(ctx, result.tenantId))!;
    const device = await enrollDevice(ctx, view, { clientIp: result.clientIp, identity: result.email, handoff: result.handoff, userAgent: result.userAgent });
    return afterEnrollment(ctx, reply, device);
  });

  app.get<{ Params: { tenant: string } }>('/portal/logo/:tenant', async (req, reply) => {
    const logo = ctx.tenants().byId(req.params.tenant) && (await ctx.store.portalSettings.logo(req.params.tenant));
    if (!logo) return reply.code(404).send({ error: 'not_found', message: 'this tenant has no logo' });
    reply.type(logo.type).header('cache-control', 'public, max-age=300').header('content-security-policy', "default-src 'none'");
    return logo.data;
  });

  // The guest profile: the CA plus encrypted DNS through this gateway, for Apple devices.
  app.get('/portal/profile.mobileconfig', async (req, reply) => {
    const view = await viewFor(ctx, req);
    const c = ctx.config();
    reply.type(MOBILECONFIG_TYPE).header('content-disposition', 'attachment; filename="network.mobileconfig"').header('cache-control', 'no-store');
    return mobileconfig({
      serverName: c.gateway.hostname, port: ctx.publicHttpsPort(), serverAddress: c.gateway.address,
      organization: view ? brandName(view) : c.gateway.hostname, caDer: ctx.ca.der(), caName: ctx.ca.cert.subject.getField('CN')?.value ?? 'gatewayd CA',
    });
  });

  app.get('/portal/connect', async (req, reply) => html(reply, 200, connectPage(await viewFor(ctx, req), gatewayUrl(ctx, ''))));

  // RFC 8908 captive portal API: the URL a network announces in DHCP option 114 (RFC 8910), so
  // modern OSes find the portal without probe hijacking.
  app.get('/api/captive', async (req, reply) => {
    const enrolled = await ctx.isEnrolled(clientIp(req));
    reply.type('application/captive+json').header('cache-control', 'private, no-store');
    return { captive: !enrolled, 'user-portal-url': gatewayUrl(ctx, '/portal') };
  });

  // The CA certificate is public by nature: devices download it to trust the gateway.
  app.get('/ca.pem', async (_req, reply) => {
    reply.type('application/x-pem-file').header('content-disposition', 'attachment; filename="gateway-ca.pem"');
    return ctx.ca.certPem;
  });
  app.get('/ca.crt', async (_req, reply) => {
    reply.type('application/x-x509-ca-cert').header('content-disposition', 'attachment; filename="gateway-ca.crt"');
    return ctx.ca.der();
  });
}
