import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IDENTITY_MODES } from '../config/index.js';
import type { GatewayContext } from '../http/context.js';
import { esc, page } from '../http/html.js';
import { postWebhook } from '../nac/index.js';
import { checkLogo, portalView, validateUpdate, type PortalView } from '../portal/index.js';
import { PORTAL_ADMIN_SCRIPT } from './portal-admin-script.js';
import { httpError, isApplianceAdmin, peerError, tenantOf } from './scope.js';

/** The Enrollment Portal admin page (/portal-admin.html) and the JSON API it edits through. */

function settingsJson(ctx: GatewayContext, v: PortalView) {
  return {
    tenant: { id: v.tenant.id, name: v.tenant.name },
    identityMode: v.identityMode,
    allowedDomains: v.allowedDomains,
    admitWebhookUrl: v.webhookUrl ?? '',
    admitWebhookSecretSet: !!v.webhookSecret, // write-only: never sent back
    branding: v.branding,
    hasLogo: v.hasLogo,
    ssoConfigured: !!v.sso,
    smtpConfigured: !!ctx.config().smtp,
    updatedBy: v.updatedBy ?? null,
    updatedAt: v.updatedAt ?? null,
  };
}

function field(name: string, label: string, control: string, hint = ''): string {
  return `<div class="field"><label for="${name}">${label}</label>${control}
    ${hint ? `<span class="muted">${hint}</span>` : ''}<p class="error" data-error-for="${name}" role="alert" hidden></p></div>`;
}

function renderPage(ctx: GatewayContext, req: FastifyRequest, csrf: string, v: PortalView): string {
  const tenants = isApplianceAdmin(req) && !ctx.tenants().single
    ? `<form method="get">Tenant <select name="tenant">${ctx.tenants().list().map((t) => `<option value="${esc(t.id)}"${t.id === v.tenant.id ? ' selected' : ''}>${esc(t.name)}</option>`).join('')}</select> <button type="submit">Switch</button></form>`
    : '';
  const modes = IDENTITY_MODES.map((m) => `<option value="${m}"${m === v.identityMode ? ' selected' : ''}>${m}</option>`).join('');
  return page(
    'Enrollment Portal',
    `<meta name="csrf-token" content="${esc(csrf)}"><meta name="tenant" content="${esc(v.tenant.id)}">
     <style>.field{display:grid;gap:.25rem;margin-bottom:.9rem}.field input,.field select,.field textarea{font:inherit;padding:.4rem}
       fieldset{margin:1rem 0;border:1px solid #8886;border-radius:6px} #status{min-height:1.5em}</style>
     <p><a href="/admin/portal">← Admin</a> · Portal: <a href="/portal">/portal</a></p>
     <h2>Enrollment Portal · ${esc(v.tenant.name)}</h2>${tenants}
     <form id="settings" novalidate>
       <fieldset><legend>Identity</legend>
       ${field('identityMode', 'Identity mode', `<select id="identityMode" name="identityMode">${modes}</select>`,
         'sso: your identity provider · otp: emailed code · domain: an email on the allowed domains · none: any input (monitoring only)')}
       ${field('allowedDomains', 'Allowed domains', `<textarea id="allowedDomains" name="allowedDomains" rows="3">${esc(v.allowedDomains.join('\n'))}</textarea>`, 'One per line, as in example.com')}
       </fieldset>
       <fieldset><legend>Admit webhook</legend>
       ${field('admitWebhookUrl', 'Webhook URL', `<input id="admitWebhookUrl" name="admitWebhookUrl" type="url" value="${esc(v.webhookUrl ?? '')}" placeholder="https://nac.example.com/admit">`)}
       ${field('admitWebhookSecret', 'Webhook secret', `<input id="admitWebhookSecret" name="admitWebhookSecret" type="password" autocomplete="new-password"
          placeholder="${v.webhookSecret ? 'saved; type a new one to replace it' : 'at least 16 characters'}">`,
         `${v.webhookSecret ? '<span id="secret-state">A secret is saved. It is never shown again.</span> <label><input type="checkbox" name="clearWebhookSecret"> remove it</label>' : 'No secret saved.'}`)}
       <p><button type="button" id="test-webhook">Send test webhook</button> <span id="test-result" role="status"></span></p>
       </fieldset>
       <fieldset><legend>Branding</legend>
       ${field('branding.name', 'Name shown on the portal', `<input id="branding.name" name="branding.name" value="${esc(v.branding.name ?? '')}" maxlength="80" placeholder="${esc(v.tenant.name)}">`)}
       ${field('branding.color', 'Accent color', `<input id="branding.color" name="branding.color" value="${esc(v.branding.color ?? '')}" placeholder="#2457c5">`, 'As #rrggbb')}
       ${field('branding.welcome', 'Welcome text', `<textarea id="branding.welcome" name="branding.welcome" rows="3" maxlength="1000">${esc(v.branding.welcome ?? '')}</textarea>`)}
       </fieldset>
       <button type="submit">Save</button> <span id="status" role="status"></span>
     </form>
     <form id="logo-form" novalidate><fieldset><legend>Logo</legend>
       ${v.hasLogo ? `<p><img src="/portal/logo/${esc(v.tenant.id)}?v=${v.updatedAt ?? 0}" alt="current logo" style="max-height:48px"></p>` : '<p class="muted">No logo.</p>'}
       ${field('logo', 'Logo image', '<input id="logo" name="logo" type="file" accept="image/png,image/jpeg,image/gif,image/webp">', 'PNG, JPEG, GIF or WebP, at most 256 KiB')}
       <button type="submit">Upload logo</button>${v.hasLogo ? ' <button type="button" id="remove-logo">Remove logo</button>' : ''} <span id="logo-status" role="status"></span>
     </fieldset></form>
     <script src="/admin/assets/portal-admin.js"></script>`,
  );
}

export function registerPortalAdmin(app: FastifyInstance, ctx: GatewayContext): void {
  const auth = { preHandler: (req: FastifyRequest, reply: FastifyReply) => app.requireAdmin(req, reply) };
  const write = { ...auth, preValidation: app.csrfProtection };
  const viewOf = (req: FastifyRequest) => portalView(ctx, tenantOf(ctx, req));
  const ensureRow = async (v: PortalView, by: string) => {
    if (v.updatedAt === undefined) {
      await ctx.store.portalSettings.save(v.tenant.id, { identityMode: v.identityMode, allowedDomains: v.allowedDomains, webhookUrl: v.webhookUrl, webhookSecret: v.webhookSecret, branding: v.branding }, by);
    }
  };

  app.get('/portal-admin.html', auth, async (req, reply) => {
    const v = await viewOf(req);
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return renderPage(ctx, req, reply.generateCsrf(), v);
  });

  app.get('/admin/assets/portal-admin.js', async (_req, reply) => {
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache');
    return PORTAL_ADMIN_SCRIPT;
  });

  app.get('/admin/api/portal', auth, async (req) => settingsJson(ctx, await viewOf(req)));

  app.put('/admin/api/portal', write, async (req, reply) => {
    const current = await viewOf(req);
    const result = validateUpdate(req.body, current, ctx.config());
    if ('errors' in result) {
      return reply.code(400).send({ error: 'invalid', message: `please correct: ${Object.keys(result.errors).join(', ')}`, fields: result.errors });
    }
    await ctx.store.portalSettings.save(current.tenant.id, result.ok, req.admin!.username);
    // Admissions still waiting go where the customer now wants them (never to the old URL with the new secret).
    if (result.ok.webhookUrl !== current.webhookUrl) await ctx.store.deliveries.retargetWebhooks(current.tenant.id, result.ok.webhookUrl);
    ctx.log.info({ tenant: current.tenant.id, by: req.admin!.username, identityMode: result.ok.identityMode, webhook: !!result.ok.webhookUrl }, 'portal settings changed');
    return settingsJson(ctx, await viewOf(req));
  });

  app.post('/admin/api/portal/logo', write, async (req, reply) => {
    const bad = (status: number, message: string) => reply.code(status).send({ error: 'invalid', message, fields: { logo: message } });
    if (!req.isMultipart()) return bad(415, 'send the logo as multipart/form-data in a field named logo');
    let data: Buffer;
    try {
      const file = await req.file();
      if (!file || file.fieldname !== 'logo') return bad(400, 'no file in a field named logo');
      data = await file.toBuffer();
    } catch (err) {
      if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') return bad(413, 'the logo must be at most 256 KiB');
      return bad(400, `the upload is not valid multipart/form-data: ${(err as Error).message}`);
    }
    const checked = checkLogo(data);
    if ('error' in checked) return bad(checked.error.includes('KiB') ? 413 : 415, checked.error);
    const v = await viewOf(req);
    await ensureRow(v, req.admin!.username);
    await ctx.store.portalSettings.setLogo(v.tenant.id, { type: checked.type, data }, req.admin!.username);
    ctx.log.info({ tenant: v.tenant.id, by: req.admin!.username, type: checked.type, bytes: data.length }, 'portal logo changed');
    return settingsJson(ctx, await viewOf(req));
  });

  app.delete('/admin/api/portal/logo', write, async (req) => {
    const v = await viewOf(req);
    await ensureRow(v, req.admin!.username);
    await ctx.store.portalSettings.setLogo(v.tenant.id, null, req.admin!.username);
    return settingsJson(ctx, await viewOf(req));
  });

  // A signed request to the saved webhook, outside the outbox: the admin sees the receiver's answer at once.
  app.post('/admin/api/portal/test-webhook', write, async (req) => {
    const v = await viewOf(req);
    if (!v.webhookUrl || !v.webhookSecret) throw httpError(400, 'bad_request', 'save a webhook URL and secret first');
    const body = JSON.stringify({ event: 'webhook.test', org: v.tenant.id, at: Date.now() });
    const r = await postWebhook({ url: v.webhookUrl, secret: v.webhookSecret, body, deliveryId: `test-${Date.now()}`, event: 'webhook.test', userAgent: `gatewayd/${ctx.version}` });
    ctx.log.info({ tenant: v.tenant.id, by: req.admin!.username, outcome: r.outcome }, 'test webhook sent');
    return { ...r, ...('error' in r ? { error: peerError(req, r.error) } : {}), url: v.webhookUrl };
  });
}
