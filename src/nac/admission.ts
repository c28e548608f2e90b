import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { CoaAttributeName, GatewayConfig, NasConfig } from '../config/index.js';
import type { Device, NewDelivery } from '../store/index.js';
import type { RadiusAttribute } from './radius.js';
import type { AdmitEvent } from './webhook.js';
import { nasTarget } from './outbox.js';

/** What the Wi-Fi controller told the portal about the device (see portal/handoff.ts). */
export interface Handoff {
  mac?: string;
  ip?: string;
  ap?: string;
  ssid?: string;
  sessionId?: string;
  nasId?: string;
  nasIp?: string;
}

/** The hash that names a device to the customer's NAC: stable per tenant and MAC (else address). */
export function deviceKey(tenantId: string, mac: string | null, ip: string): string {
  return createHash('sha256').update(`${tenantId}\n${mac ?? ip}`).digest('hex');
}

/** The device's address as the NAS knows it: what the controller said, else where it came from. */
export function framedIp(device: Pick<Device, 'clientIp' | 'handoff'>): string {
  const ip = (device.handoff as Handoff | null)?.ip ?? device.clientIp;
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

function macDashes(mac: string): string {
  return mac.toUpperCase().replace(/:/g, '-'); // RFC 3580 Calling-Station-Id format
}

/** RADIUS strings hold at most 253 octets (247 in a vendor attribute); cut on a character boundary. */
function fitOctets(value: string, max: number): string {
  let out = value;
  while (Buffer.byteLength(out) > max) out = out.slice(0, -1);
  return out;
}

/** The identifying attributes a NAS asked for, from what is known of the device; unknown ones are left out. */
export function coaAttributes(names: CoaAttributeName[], device: Device): RadiusAttribute[] {
  const h = (device.handoff ?? {}) as Handoff;
  const ip = framedIp(device);
  const out: RadiusAttribute[] = [];
  for (const name of names) {
    let value: string | undefined;
    switch (name) {
      case 'Framed-IP-Address': value = isIP(ip) === 4 ? ip : undefined; break;
      case 'Acct-Session-Id': value = h.sessionId; break;
      case 'User-Name': value = device.identity ?? device.mac ?? undefined; break;
      case 'Calling-Station-Id': value = device.mac ? macDashes(device.mac) : undefined; break;
      case 'Called-Station-Id': value = h.ap ? `${macDashes(h.ap)}${h.ssid ? `:${h.ssid}` : ''}` : undefined; break;
      case 'NAS-IP-Address': value = h.nasIp && isIP(h.nasIp) === 4 ? h.nasIp : undefined; break;
      case 'NAS-Identifier': value = h.nasId; break;
      case 'Cisco-AVPair': value = h.sessionId ? `audit-session-id=${h.sessionId}` : undefined; break;
    }
    if (value !== undefined) out.push([name, fitOctets(value, name === 'Cisco-AVPair' ? 247 : 253)]);
  }
  return out;
}

/** NAS entries that serve a tenant: its own, plus those not tied to any tenant. */
export function nasFor(config: GatewayConfig, tenantId: string): NasConfig[] {
  return config.nac.coa.filter((n) => n.tenant === undefined || n.tenant === tenantId);
}

/** The outbox entries that admit a newly enrolled device: the webhook (if set) and one per NAS. */
export function admissionDeliveries(config: GatewayConfig, device: Device, webhookUrl: string | null): NewDelivery[] {
  const out: NewDelivery[] = [];
  if (webhookUrl) {
    const event: AdmitEvent = {
      event: 'device.admit',
      org: device.tenantId,
      deviceKey: device.deviceKey ?? deviceKey(device.tenantId, device.mac, device.clientIp),
      framedIp: framedIp(device),
      action: 'coa-reauthorize',
      at: device.enrolledAt,
    };
    const body = JSON.stringify(event);
    out.push({ id: randomUUID(), tenantId: device.tenantId, deviceId: device.id, kind: 'webhook', target: webhookUrl, payload: body });
  }
  for (const nas of nasFor(config, device.tenantId)) {
    out.push({
      id: randomUUID(),
      tenantId: device.tenantId,
      deviceId: device.id,
      kind: nas.kind,
      target: nasTarget(nas),
      payload: JSON.stringify({ attributes: coaAttributes(nas.attributes, device) }),
    });
  }
  return out;
}
