import type { FastifyReply } from 'fastify';
import { gatewayUrl, type GatewayContext } from '../http/context.js';
import { admissionDeliveries, deviceKey } from '../nac/index.js';
import type { Device } from '../store/index.js';
import { safeContinueUrl } from './handoff.js';
import type { PortalView } from './settings.js';

/** Whether the address is one of its tenant's egress NATs: many devices behind one address. */
export function behindNat(ctx: GatewayContext, address: string): boolean {
  return ctx.tenants().match(address)?.by === 'egress';
}

export interface Enrollment {
  clientIp: string;
  identity: string | null;
  handoff: Record<string, string> | null;
  userAgent: string | null;
}

/**
 * Records the device and queues its admission (webhook, CoA) in the same transaction, then
 * wakes the outbox so the customer's network hears about it at once.
 */
export async function enrollDevice(ctx: GatewayContext, view: PortalView, e: Enrollment): Promise<Device> {
  const mac = e.handoff?.mac ?? null;
  const replaces = !behindNat(ctx, e.clientIp) ? { clientIp: e.clientIp } : e.handoff?.ip ? { handoffIp: e.handoff.ip } : { nothing: true as const };
  const device = await ctx.store.devices.enroll(
    {
      tenantId: view.tenant.id,
      clientIp: e.clientIp,
      mac,
      identity: e.identity,
      identityMode: view.identityMode,
      deviceKey: deviceKey(view.tenant.id, mac, e.clientIp),
      handoff: e.handoff,
      userAgent: e.userAgent?.slice(0, 512) ?? null,
    },
    (d) => admissionDeliveries(ctx.config(), d, view.webhookUrl),
    replaces,
  );
  ctx.metrics.enrollments.inc({ mode: view.identityMode });
  ctx.log.info({ tenant: view.tenant.id, device: device.id, client: e.clientIp, mac, identity: e.identity, mode: view.identityMode }, 'device enrolled');
  ctx.outbox.wake();
  return device;
}

/** After enrollment: on to the controller's continue URL when it is safe, else the portal's done page. */
export function afterEnrollment(ctx: GatewayContext, reply: FastifyReply, device: Device): FastifyReply {
  const next = safeContinueUrl(device.handoff?.continueUrl, ctx.config().gateway.hostname);
  if (device.handoff?.continueUrl && !next) ctx.log.warn({ device: device.id, continueUrl: device.handoff.continueUrl.slice(0, 200) }, 'ignored an unsafe continue URL');
  return reply.redirect(next ?? gatewayUrl(ctx, '/portal'), 303);
}
