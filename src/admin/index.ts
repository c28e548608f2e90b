import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayContext } from '../http/context.js';
import { esc, page } from '../http/html.js';
import { DUMMY_HASH, verifyPassword } from './passwords.js';
import { adminSections } from './sections.js';
import { currentAdmin, endSession, startSession } from './sessions.js';
import { requireAppliance } from './scope.js';
import { registerEnrollmentAdmin } from './enrollment.js';
import { registerPortalAdmin } from './portal-admin.js';

export { hashPassword, validatePassword, validateUsername } from './passwords.js';
export { addAdminSection, type AdminSection } from './sections.js';
export { currentAdmin } from './sessions.js';

function loginPage(csrf: string, next: string, error?: string): string {
  return page(
    'gatewayd admin',
    `<h1>Sign in</h1>
     <form class="card" method="post" action="/admin/login">
       <input type="hidden" name="_csrf" value="${esc(csrf)}">
       <input type="hidden" name="next" value="${esc(next)}">
       <label>Username <input name="username" autocomplete="username" required autofocus></label>
       <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
       ${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
       <button type="submit">Sign in</button>
     </form>`,
  );
}

/** Only same-site relative paths are allowed after login: no open redirect. */
function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(admin(\/[A-Za-z0-9/_.-]*)?|portal-admin\.html)(\?[A-Za-z0-9=&_.-]*)?$/.test(value) ? value : '/admin';
}

export function registerAdmin(app: FastifyInstance, ctx: GatewayContext): void {
  /** preHandler for admin pages (redirect to login) and admin APIs (401 JSON). */
  const requireAdmin = async (req: FastifyRequest, reply: FastifyReply) => {
    req.admin = await currentAdmin(ctx, req);
    if (req.admin) return;
    if (req.url.startsWith('/admin/api/') || req.url === '/metrics' || req.method !== 'GET') {
      return reply.code(401).send({ error: 'unauthorized', message: 'sign in as an admin first' });
    }
    return reply.redirect(`/admin/login?next=${encodeURIComponent(req.url)}`, 303);
  };
  app.decorate('requireAdmin', requireAdmin);

  app.get('/admin/login', async (req, reply) => {
    const next = safeNext((req.query as Record<string, unknown>).next);
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return loginPage(reply.generateCsrf(), next);
  });

  app.post(
    '/admin/login',
    {
      preValidation: app.csrfProtection,
      config: { rateLimit: { max: 10, timeWindow: '1 minute' } },
    },
    async (req, reply) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const username = typeof body.username === 'string' ? body.username.trim() : '';
      const password = typeof body.password === 'string' ? body.password : '';
      const next = safeNext(body.next);
      const admin = username ? await ctx.store.admins.byUsername(username) : undefined;
      // Verify against a dummy hash when the user is unknown: same time either way.
      const ok = (await verifyPassword(password, admin?.passwordHash ?? DUMMY_HASH)) && !!admin;
      if (!ok) {
        ctx.log.warn({ username, client: req.ip }, 'admin login failed');
        reply.code(401).type('text/html; charset=utf-8');
        return loginPage(reply.generateCsrf(), next, 'Wrong username or password.');
      }
      await startSession(ctx, reply, admin.id, req.ip);
      ctx.log.info({ username: admin.username, client: req.ip }, 'admin signed in');
      return reply.redirect(next, 303);
    },
  );

  app.post('/admin/logout', { preValidation: app.csrfProtection }, async (req, reply) => {
    await endSession(ctx, req, reply);
    return reply.redirect('/admin/login', 303);
  });

  app.get('/admin', { preHandler: requireAdmin }, async (req, reply) => reply.redirect(`/admin/${adminSections(req)[0].id}`, 302));

  app.get<{ Params: { section: string } }>('/admin/:section', { preHandler: requireAdmin }, async (req, reply) => {
    const section = adminSections(req).find((s) => s.id === req.params.section);
    if (!section) return reply.code(404).send({ error: 'not_found', message: `no admin section "${req.params.section}"` });
    const nav = adminSections(req)
      .map((s) => `<a href="/admin/${esc(s.id)}"${s === section ? ' aria-current="page"' : ''}>${esc(s.title)}</a>`)
      .join('');
    const logout = `<span>${esc(req.admin!.username)}${req.admin!.tenantId ? ` (${esc(req.admin!.tenantId)})` : ''}</span>
      <form method="post" action="/admin/logout" style="margin:0"><input type="hidden" name="_csrf" value="${esc(reply.generateCsrf())}"><button type="submit">Sign out</button></form>`;
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return page('gatewayd admin', `<nav class="sections">${nav}</nav>${await section.render(ctx, req, reply)}`, logout);
  });

  app.get('/admin/api/flows', { preHandler: requireAdmin }, async (req) => {
    requireAppliance(req);
    const q = req.query as Record<string, string | undefined>;
    const limit = q.limit === undefined ? 100 : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw Object.assign(new Error('limit must be an integer from 1 to 1000'), { statusCode: 400, code: 'bad_request' });
    }
    return { flows: await ctx.store.flows.recent({ limit, sni: q.sni }) };
  });

  registerEnrollmentAdmin(app, ctx);
  registerPortalAdmin(app, ctx);
}

declare module 'fastify' {
  interface FastifyInstance {
    requireAdmin(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  }
}
