import type { FastifyInstance } from 'fastify';
import { gatewayUrl, type GatewayContext } from '../http/context.js';
import { esc, page } from '../http/html.js';
import { registerProbeRoutes } from './probes.js';

export { answerProbe, probeFor, registerProbeRoutes, CAPTIVE_PROBE_HOSTS } from './probes.js';

/** The enrollment portal and the CA downloads a device needs to enroll. */
export function registerPortal(app: FastifyInstance, ctx: GatewayContext): void {
  registerProbeRoutes(app, ctx);

  app.get('/portal', async (_req, reply) => {
    const host = ctx.config().gateway.hostname;
    reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
    return page(
      'Network enrollment',
      `<h1>Welcome to ${esc(host)}</h1>
       <p>This network asks devices to enroll before they use AI services.</p>
       <p>First install the gateway's certificate authority on this device:
         <a href="/ca.pem">ca.pem</a> (PEM) or <a href="/ca.crt">ca.crt</a> (DER).</p>`,
    );
  });

  // RFC 8908 captive portal API: the URL a network announces in DHCP option 114 (RFC 8910), so
  // modern OSes find the portal without probe hijacking.
  app.get('/api/captive', async (req, reply) => {
    const enrolled = await ctx.isEnrolled(req.ip);
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
