import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayContext } from '../http/context.js';
import { esc } from '../http/html.js';

/** One section of the admin shell; features add theirs with addAdminSection(). */
export interface AdminSection {
  id: string;
  title: string;
  /** 'tenant': also shown to tenant admins, and must show their tenant's data only. Default 'appliance'. */
  scope?: 'appliance' | 'tenant';
  render(ctx: GatewayContext, req: FastifyRequest, reply: FastifyReply): Promise<string>;
}

const sections: AdminSection[] = [];

export function addAdminSection(section: AdminSection): void {
  if (!sections.some((s) => s.id === section.id)) sections.push(section);
}

/** The sections an admin may open: all for an appliance admin, tenant-scoped ones for a tenant admin. */
export function adminSections(req?: FastifyRequest): readonly AdminSection[] {
  if (req?.admin && req.admin.tenantId !== null) return sections.filter((s) => s.scope === 'tenant');
  return sections;
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

addAdminSection({
  id: 'overview',
  title: 'Overview',
  async render(ctx) {
    const c = ctx.config();
    const uptime = Math.round((Date.now() - ctx.startedAt) / 1000);
    return `<h2>Overview</h2>
      <table>
        <tr><th>Gateway name</th><td>${esc(c.gateway.hostname)}</td></tr>
        <tr><th>Steering address</th><td>${esc(c.gateway.address)}</td></tr>
        <tr><th>Version</th><td>${esc(ctx.version)}</td></tr>
        <tr><th>Uptime</th><td>${uptime} s</td></tr>
        <tr><th>Static SNI routes</th><td>${c.tls.routes.length}</td></tr>
        <tr><th>DNS upstreams</th><td>${esc(c.dns.upstreams.map((u) => `${u.host}:${u.port}`).join(', '))}</td></tr>
      </table>`;
  },
});

addAdminSection({
  id: 'traffic',
  title: 'Traffic',
  async render(ctx) {
    const flows = await ctx.store.flows.recent({ limit: 100 });
    const rows = flows
      .map(
        (f) => `<tr><td>${esc(new Date(f.startedAt).toISOString())}</td><td>${esc(f.clientIp)}</td><td>${esc(f.sni ?? '(none)')}</td>
          <td>${esc(f.route)}</td><td>${esc(f.destination ?? '')}</td><td>${formatBytes(f.bytesUp)}</td><td>${formatBytes(f.bytesDown)}</td>
          <td>${f.durationMs} ms</td><td>${esc(f.outcome)}</td></tr>`,
      )
      .join('');
    return `<h2>Traffic</h2><p class="muted">The last 100 connections on the TLS listener. JSON: <a href="/admin/api/flows">/admin/api/flows</a>.</p>
      <table><tr><th>Time</th><th>Client</th><th>SNI</th><th>Route</th><th>Destination</th><th>Up</th><th>Down</th><th>Duration</th><th>Outcome</th></tr>${rows}</table>`;
  },
});

addAdminSection({
  id: 'certificates',
  title: 'Certificates',
  async render(ctx) {
    const cert = ctx.ca.cert;
    return `<h2>Gateway CA</h2>
      <table>
        <tr><th>Subject</th><td>${esc(cert.subject.getField('CN')?.value)}</td></tr>
        <tr><th>Valid until</th><td>${esc(cert.validity.notAfter.toISOString())}</td></tr>
        <tr><th>SHA-256</th><td><code>${esc(ctx.ca.fingerprint.match(/../g)!.join(':').toUpperCase())}</code></td></tr>
      </table>
      <p>Download: <a href="/ca.pem">PEM</a> · <a href="/ca.crt">DER</a></p>`;
  },
});

addAdminSection({
  id: 'dns',
  title: 'DNS',
  async render(ctx) {
    const d = ctx.config().dns;
    const lookups = await ctx.store.dnsLookups.recent(100);
    const rows = lookups
      .map((l) => `<tr><td>${esc(new Date(l.at).toISOString())}</td><td>${esc(l.clientIp)}</td><td>${esc(l.name)}</td><td>${esc(l.qtype)}</td>
        <td>${esc(l.service)}</td><td>${esc(l.transport)}</td><td>${l.steered ? 'steered' : 'forwarded'}</td></tr>`)
      .join('');
    return `<h2>DNS</h2>
      <table>
        <tr><th>Captive steering</th><td>${d.captive ? 'on' : 'off'}</td></tr>
        <tr><th>AI steering (inline)</th><td>${d.steerAi ? 'on' : 'off'}</td></tr>
        <tr><th>Upstreams</th><td>${esc(d.upstreams.map((u) => `${u.host}:${u.port}`).join(', '))}</td></tr>
        <tr><th>Allowed client networks</th><td>${esc(d.allowNetworks.join(', '))}</td></tr>
      </table>
      <h3>Recent AI-service lookups</h3>
      <table><tr><th>Time</th><th>Client</th><th>Name</th><th>Type</th><th>Service</th><th>Via</th><th>Answer</th></tr>${rows}</table>`;
  },
});
