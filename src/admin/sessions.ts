import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayContext } from '../http/context.js';
import type { AdminSession } from '../store/index.js';

/** __Host- cookies must be Secure, Path=/ and have no Domain: the browser enforces it. */
export const SESSION_COOKIE = '__Host-gw_admin';

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

declare module 'fastify' {
  interface FastifyRequest {
    admin?: AdminSession;
  }
}

export async function startSession(ctx: GatewayContext, reply: FastifyReply, adminId: number, clientIp: string): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const ttlMs = ctx.config().admin.sessionTtlHours * 3600e3;
  await ctx.store.sessions.create(hashToken(token), adminId, Date.now() + ttlMs, clientIp);
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    secure: true,
    sameSite: 'strict',
    maxAge: Math.floor(ttlMs / 1000),
  });
}

export async function endSession(ctx: GatewayContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = req.cookies[SESSION_COOKIE];
  if (token) await ctx.store.sessions.delete(hashToken(token));
  reply.clearCookie(SESSION_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'strict' });
}

/** Looks the session up on every request, so a logout or password change takes effect at once. */
export async function currentAdmin(ctx: GatewayContext, req: FastifyRequest): Promise<AdminSession | undefined> {
  const token = req.cookies[SESSION_COOKIE];
  if (!token || token.length > 128) return undefined;
  return ctx.store.sessions.find(hashToken(token));
}
