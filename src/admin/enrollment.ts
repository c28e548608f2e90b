import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isHostname } from '../config/index.js';
import type { GatewayContext } from '../http/context.js';
import { esc } from '../http/html.js';
import { MOBILECONFIG_TYPE, mobileconfig, portalView } from '../portal/index.js';
import type { Delivery, DeliveryState } from '../store/index.js';
import { addAdminSection } from './sections.js';
import { httpError, isApplianceAdmin, peerError, tenantFilter, tenantOf } from './scope.js';

/** Admin views of enrollment: devices, admission deliveries, and the DNS Redirector profile. */

const time = (ms: number | null) => (ms ? esc(new Date(ms).toISOString().replace('T', ' ').slice(0, 19)) : '');
const STATES: DeliveryState[] = ['pending', 'delivered', 'failed', 'gone', 'cancelled'];

/** For an appliance admin with several tenants: a picker that reloads the section for one tenant. */
function tenantPicker(ctx: GatewayContext, req: FastifyRequest, current: string | undefined): string {
  if (!isApplianceAdmin(req) || ctx.tenants().single) return '';
  const options = ctx.tenants().list().map((t) => `<option value="${esc(t.id)}"${t.id === current ? ' selected' : ''}>${esc(t.name)}</option>`).join('');
  return `<form method="get" style="margin:.5rem 0">Tenant <select name="tenant"><option value="">all</option>${options}</select>
    <button type="submit">Show</button></form>`;
}

function postButton(action: string, csrf: string, label: string): string {
  return `<form method="post" action="${esc(action)}" style="margin:0"><input type="hidden" name="_csrf" value="${esc(csrf)}"><button type="submit">${esc(label)}</button></form>`;
}

addAdminSection({
  id: 'devices',
  title: 'Devices',
  scope: 'tenant',
  async render(ctx, req, reply) {
    const tenant = tenantFilter(ctx, req);
    const devices = await ctx.store.devices.list({ tenantId: tenant, limit: 500 });
    const csrf = reply.generateCsrf();
    const rows = devices.map((d) => `<tr data-device="${d.id}"><td>${time(d.enrolledAt)}</td><td>${esc(d.tenantId)}</td><td>${esc(d.clientIp)}</td>
        <td>${esc(d.mac ?? '')}</td><td>${esc(d.identity ?? '')}</td><td>${esc(d.identityMode ?? '')}</td>
        <td>${esc([d.handoff?.ssid, d.handoff?.ap].filter(Boolean).join(' / '))}</td>
        <td>${postButton(`/admin/devices/${d.id}/remove${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`, csrf, 'Remove')}</td></tr>`).join('');
    return `<h2>Enrolled devices</h2>${tenantPicker(ctx, req, tenant)}
      <p class="muted">${devices.length} device(s). A removed device meets the portal again. JSON: <a href="/admin/api/devices">/admin/api/devices</a>.</p>
      <table><tr><th>Enrolled</th><th>Tenant</th><th>Address</th><th>MAC</th><th>Identity</th><th>Mode</th><th>SSID / AP</th><th></th></tr>${rows}</table>`;
  },
});

addAdminSection({
  id: 'admission',
  title: 'Admission',
  scope: 'tenant',
  async render(ctx, req, reply) {
    const tenant = tenantFilter(ctx, req);
    const q = (req.query as Record<string, string>).state;
    const state = STATES.includes(q as DeliveryState) ? (q as DeliveryState) : undefined;
    const list = await ctx.store.deliveries.list({ tenantId: tenant, state, limit: 300 });
    const csrf = reply.generateCsrf();
    const rows = list.map((d) => `<tr data-delivery="${esc(d.id)}" data-state="${d.state}"><td>${time(d.createdAt)}</td><td>${esc(d.tenantId)}</td><td>${esc(d.kind)}</td>
        <td>${esc(d.target)}</td><td class="state">${esc(d.state)}</td><td>${d.attempts}</td><td>${esc(d.lastResult ?? '')}</td><td>${esc(peerError(req, d.lastError) ?? '')}</td>
        <td>${d.state === 'pending' ? time(d.nextAttemptAt) : ''}</td>
        <td>${d.state === 'delivered' || d.state === 'cancelled' ? '' : postButton(`/admin/admission/${encodeURIComponent(d.id)}/retry${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`, csrf, 'Retry now')}</td></tr>`).join('');
    return `<h2>Admission deliveries</h2>${tenantPicker(ctx, req, tenant)}
      <p class="muted">Admit webhooks and RADIUS CoA requests sent when a device enrolls, retried with backoff until the peer answers.
        Filter: ${['all', ...STATES].map((s) => `<a href="?state=${s === 'all' ? '' : s}${tenant ? `&tenant=${encodeURIComponent(tenant)}` : ''}">${s}</a>`).join(' · ')}.
        JSON: <a href="/admin/api/deliveries">/admin/api/deliveries</a>.</p>
      <table><tr><th>Queued</th><th>Tenant</th><th>Kind</th><th>Target</th><th>State</th><th>Attempts</th><th>Last result</th><th>Last error</th><th>Next attempt</th><th></th></tr>${rows}</table>`;
  },
});

/** The server name for the DNS profile: the name the admin reached us by, when it is a host name. */
function serverNameFrom(ctx: GatewayContext, req: FastifyRequest): { name: string; port: number } {
  const host = (req.headers[':authority'] as string | undefined) ?? req.headers.host ?? '';
  const m = /^([^:]+)(?::(\d+))?$/.exec(host);
  if (m && isHostname(m[1])) return { name: m[1].toLowerCase(), port: m[2] ? Number(m[2]) : 443 };
  return { name: ctx.config().gateway.hostname, port: ctx.publicHttpsPort() };
}

addAdminSection({
  id: 'dns-redirector',
  title: 'DNS Redirector',
  scope: 'tenant',
  async render(ctx, req) {
    const { name, port } = serverNameFrom(ctx, req);
    const url = `https://${name}${port === 443 ? '' : `:${port}`}/dns-query`;
    return `<h2>DNS Redirector</h2>
      <p>Devices that install this profile trust the gateway CA and send all DNS to <code>${esc(url)}</code> over HTTPS
        (RFC 8484), so AI services are steered here even off the captive network's DHCP DNS.</p>
      <p><a href="/admin/api/dns-profile.mobileconfig">Download the profile (.mobileconfig)</a> for Apple devices (iOS, iPadOS, macOS),
        to hand out or push with an MDM. Guests get the same profile from the portal.</p>
      <p class="muted">The server name is the one you used to open this page (${esc(name)}); open the admin page by the name devices use.</p>`;
  },
});

addAdminSection({
  id: 'portal',
  title: 'Enrollment Portal',
  scope: 'tenant',
  async render() {
    return `<h2>Enrollment Portal</h2><p><a href="/portal-admin.html">Open the portal settings</a>: identity mode, allowed domains, admit webhook and branding.</p>`;
  },
});

function deliveryJson(req: FastifyRequest, d: Delivery) {
  const { payload, ...rest } = d;
  return { ...rest, lastError: peerError(req, d.lastError), payload: d.kind === 'webhook' ? JSON.parse(payload) : JSON.parse(payload).attributes };
}

export function registerEnrollmentAdmin(app: FastifyInstance, ctx: GatewayContext): void {
  const auth = { preHandler: (req: FastifyRequest, reply: FastifyReply) => app.requireAdmin(req, reply) };
  const form = { ...auth, preValidation: app.csrfProtection };
  const back = (section: string, req: FastifyRequest) => {
    const tenant = (req.query as Record<string, string>).tenant;
    return `/admin/${section}${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`;
  };

  app.get('/admin/api/devices', auth, async (req) => ({ devices: await ctx.store.devices.list({ tenantId: tenantFilter(ctx, req), includeRemoved: (req.query as Record<string, string>).removed === '1' }) }));

  app.post<{ Params: { id: string } }>('/admin/devices/:id/remove', form, async (req, reply) => {
    const id = Number(req.params.id);
    const scope = isApplianceAdmin(req) ? undefined : tenantOf(ctx, req).id;
    if (!Number.isInteger(id) || !(await ctx.store.devices.remove(id, req.admin!.username, scope))) throw httpError(404, 'not_found', `no enrolled device ${req.params.id} here`);
    ctx.log.info({ device: id, by: req.admin!.username }, 'device removed by an admin');
    return reply.redirect(back('devices', req), 303);
  });

  app.get('/admin/api/deliveries', auth, async (req) => {
    const state = (req.query as Record<string, string>).state;
    if (state && !STATES.includes(state as DeliveryState)) throw httpError(400, 'bad_request', `state must be one of ${STATES.join(', ')}`);
    return { deliveries: (await ctx.store.deliveries.list({ tenantId: tenantFilter(ctx, req), state: state as DeliveryState | undefined })).map((d) => deliveryJson(req, d)) };
  });

  app.get<{ Params: { id: string } }>('/admin/api/deliveries/:id', auth, async (req) => {
    const d = await ctx.store.deliveries.get(req.params.id, isApplianceAdmin(req) ? undefined : tenantOf(ctx, req).id);
    if (!d) throw httpError(404, 'not_found', `no delivery ${req.params.id} here`);
    const attemptLog = (await ctx.store.deliveries.attempts(d.id)).map((a) => ({ ...a, detail: peerError(req, a.detail) }));
    return { ...deliveryJson(req, d), attemptLog };
  });

  app.post<{ Params: { id: string } }>('/admin/admission/:id/retry', form, async (req, reply) => {
    const scope = isApplianceAdmin(req) ? undefined : tenantOf(ctx, req).id;
    const d = await ctx.store.deliveries.get(req.params.id, scope);
    const tenant = d && ctx.tenants().byId(d.tenantId);
    // A webhook is retried at the tenant's current URL: never the old URL with the current secret.
    const url = tenant ? (await portalView(ctx, tenant)).webhookUrl : null;
    const result = d ? await ctx.store.deliveries.retryNow(d.id, scope, url) : 'not-found';
    if (result === 'not-found') throw httpError(404, 'not_found', `no delivery ${req.params.id} here`);
    if (result === 'cancelled') throw httpError(409, 'cancelled', 'this delivery was cancelled (its device was removed or enrolled again, or the webhook URL was removed)');
    if (result === 'device-removed') throw httpError(409, 'device_removed', 'the device of this delivery is no longer enrolled; retrying would admit a removed device');
    if (result === 'no-webhook') throw httpError(409, 'no_webhook', 'the tenant has no webhook URL any more');
    ctx.log.info({ delivery: req.params.id, by: req.admin!.username }, 'delivery retry requested by an admin');
    ctx.outbox.wake();
    return reply.redirect(back('admission', req), 303);
  });

  app.get('/admin/api/dns-profile.mobileconfig', auth, async (req, reply) => {
    const { name, port } = serverNameFrom(ctx, req);
    reply.type(MOBILECONFIG_TYPE).header('content-disposition', `attachment; filename="${name}-dns.mobileconfig"`).header('cache-control', 'no-store');
    return mobileconfig({
      serverName: name, port, serverAddress: ctx.config().gateway.address, organization: tenantOf(ctx, req).name,
      caDer: ctx.ca.der(), caName: ctx.ca.cert.subject.getField('CN')?.value ?? 'gatewayd CA',
    });
  });
}
