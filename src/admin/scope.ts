import type { FastifyRequest } from 'fastify';
import type { GatewayContext } from '../http/context.js';
import type { Tenant } from '../tenants/index.js';

/** An error the error handler turns into {error, message} with this status. */
export function httpError(statusCode: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { statusCode, code });
}

/** Whether the signed-in admin manages the whole appliance (not one tenant). */
export function isApplianceAdmin(req: FastifyRequest): boolean {
  return !!req.admin && req.admin.tenantId === null;
}

/**
 * The tenant an admin request acts on. A tenant admin always gets their own tenant and is
 * refused another one; an appliance admin picks one with ?tenant= (default: the first).
 */
export function tenantOf(ctx: GatewayContext, req: FastifyRequest): Tenant {
  const requested = (req.query as Record<string, unknown>).tenant;
  const own = req.admin?.tenantId ?? null;
  const dir = ctx.tenants();
  if (own !== null) {
    if (typeof requested === 'string' && requested !== '' && requested !== own) throw httpError(403, 'forbidden', `this admin manages tenant "${own}" only`);
    const tenant = dir.byId(own);
    if (!tenant) throw httpError(403, 'forbidden', `tenant "${own}" of this admin is not in the config`);
    return tenant;
  }
  if (typeof requested === 'string' && requested !== '') {
    const tenant = dir.byId(requested);
    if (!tenant) throw httpError(404, 'not_found', `no tenant "${requested}"`);
    return tenant;
  }
  return dir.list()[0];
}

/** The tenant filter for list queries: undefined (all) only for an appliance admin who asked for no tenant. */
export function tenantFilter(ctx: GatewayContext, req: FastifyRequest): string | undefined {
  const requested = (req.query as Record<string, unknown>).tenant;
  if (isApplianceAdmin(req) && (typeof requested !== 'string' || requested === '')) return undefined;
  return tenantOf(ctx, req).id;
}

/**
 * What a peer answered, as an admin may see it. A tenant admin picks the webhook URL, which can
 * point anywhere the appliance reaches: they see the status, never the body of a foreign answer.
 */
export function peerError(req: FastifyRequest, error: string | null): string | null {
  if (error === null || isApplianceAdmin(req)) return error;
  const status = /^HTTP \d{3}/.exec(error);
  return status ? status[0] : error;
}

/** Refuses tenant admins: appliance-wide data (all traffic, metrics) is for appliance admins only. */
export function requireAppliance(req: FastifyRequest): void {
  if (!isApplianceAdmin(req)) throw httpError(403, 'forbidden', 'this needs an appliance admin; tenant admins see their own tenant only');
}
