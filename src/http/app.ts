import type { SecureContext } from 'node:tls';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import { registerAdmin } from '../admin/index.js';
import { LOGO_MAX_BYTES, answerProbe, registerPortal, registerProbeRoutes } from '../portal/index.js';
import { gatewayUrl, type GatewayContext, type OwnCertificate } from './context.js';
import { isHostname } from '../config/index.js';

const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
};

/** Errors as JSON {error, message} with the right status; never a stack trace. */
function installErrorHandling(app: FastifyInstance, ctx: GatewayContext, listener: string, notFound = true): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) ctx.log.error({ err, url: req.url }, 'request failed');
    const code =
      err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET'
        ? 'csrf'
        : status === 429 ? 'rate_limited' : status >= 500 ? 'internal' : (err.code ?? 'bad_request').toLowerCase();
    const message =
      code === 'csrf' ? 'the form is stale or came from another site (CSRF check failed); reload the page and try again'
      : status >= 500 ? 'internal error; see the gatewayd log' : err.message;
    void reply.code(status).send({ error: code, message });
  });
  if (notFound) app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ error: 'not_found', message: `no route for ${req.method} ${req.url.split('?')[0]}` });
  });
  app.addHook('onResponse', async (_req, reply) => {
    ctx.metrics.httpRequests.inc({ listener, status: `${Math.floor(reply.statusCode / 100)}xx` });
  });
}

/**
 * The HTTPS application for the gateway's own names (HTTP/2 and HTTP/1.1 by ALPN). It never
 * listens itself: the 443 listener hands it connections after peeking at their ClientHello.
 */
/** A feature that adds routes to the gateway's HTTPS application. */
export type RouteFeature = (app: FastifyInstance) => void;

export async function createGatewayApp(ctx: GatewayContext, ownCert: () => OwnCertificate, features: RouteFeature[] = []): Promise<FastifyInstance> {
  const initial = ownCert();
  const app = Fastify({
    http2: true,
    https: {
      allowHTTP1: true,
      SNICallback: (_name: string, cb: (err: Error | null, sc?: SecureContext) => void) => cb(null, ownCert().context),
      key: initial.key,
      cert: initial.cert,
    } as never,
    logger: false, // errors are logged by the error handler below; no per-request lines
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    connectionTimeout: 0,
    keepAliveTimeout: 65_000,
  }) as unknown as FastifyInstance;
  installErrorHandling(app, ctx, 'https');
  app.addHook('onSend', async (_req, reply) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) reply.header(k, v);
    reply.header('strict-transport-security', 'max-age=31536000');
  });
  await app.register(cookie);
  await app.register(formbody);
  // Uploads (the portal logo) only: one small file, no other parts worth keeping.
  await app.register(multipart, { limits: { fileSize: LOGO_MAX_BYTES, files: 1, fields: 4, parts: 5 } });
  await app.register(rateLimit, { global: false });
  await app.register(csrf, {
    cookieKey: '__Host-gw_csrf',
    cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: true, signed: false },
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/metrics', { preHandler: (req, reply) => app.requireAdmin(req, reply) }, async (req, reply) => {
    if (req.admin?.tenantId) return reply.code(403).send({ error: 'forbidden', message: 'metrics cover every tenant: they need an appliance admin' });
    reply.type(ctx.metrics.contentType);
    return ctx.metrics.text();
  });
  app.get('/', async (_req, reply) => reply.redirect('/portal', 302));
  registerPortal(app, ctx);
  registerAdmin(app, ctx);
  for (const feature of features) feature(app);
  await app.ready();
  return app;
}

/**
 * Port 80: captive probes get the portal (or their success answer once enrolled); everything
 * else is sent to https on the same host.
 */
export async function createPlainApp(ctx: GatewayContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
  }) as unknown as FastifyInstance;
  installErrorHandling(app, ctx, 'http', false);
  app.get('/healthz', async () => ({ status: 'ok' }));
  registerProbeRoutes(app, ctx);
  app.setNotFoundHandler(async (req, reply) => {
    if (await answerProbe(ctx, req, reply)) return;
    // A steered third-party name keeps its own name (and so its SNI route); anything else goes to the gateway.
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const location = isHostname(host) && host !== ctx.config().gateway.hostname ? `https://${host}${req.url}` : gatewayUrl(ctx, req.url);
    return reply.redirect(location, req.method === 'GET' || req.method === 'HEAD' ? 301 : 308);
  });
  await app.ready();
  return app;
}

/** The optional loopback-only metrics port: Prometheus text and a health check, no login. */
export async function createMetricsApp(ctx: GatewayContext): Promise<FastifyInstance> {
  const app = Fastify({ logger: false }) as unknown as FastifyInstance;
  installErrorHandling(app, ctx, 'metrics');
  app.get('/metrics', async (_req, reply) => reply.type(ctx.metrics.contentType).send(await ctx.metrics.text()));
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.ready();
  return app;
}
