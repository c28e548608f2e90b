import { isIP } from 'node:net';
import type { Handoff } from '../nac/index.js';

/**
 * Wi-Fi controllers send the device's details to an external captive portal in the query
 * string, each under its own names. These are the names the portal understands, per field.
 */
const ALIASES: Record<keyof Handoff | 'continueUrl', string[]> = {
  mac: ['client_mac', 'mac', 'usermac', 'id', 'clientmac'], // Meraki/Ruckus, Aruba/Coova, FortiGate, UniFi
  ip: ['client_ip', 'ip', 'uip', 'userip', 'clientip'], //     Meraki, Aruba/Coova, Ruckus, FortiGate
  ap: ['ap_mac', 'ap', 'apmac', 'apname'], //                  Meraki, UniFi, FortiGate, Aruba
  ssid: ['ssid', 'essid'], //                                  UniFi/Ruckus/FortiGate, Aruba
  sessionId: ['sessionid', 'session_id', 'audit_session_id', 'magic'], // Coova, Cisco, FortiGate
  nasId: ['nasid', 'called'], //                               Coova
  nasIp: ['sip', 'switchip', 'uamip', 'apip'], //              Ruckus, Aruba, Coova, FortiGate
  continueUrl: ['continue_url', 'url', 'userurl', 'redir', 'redirect', 'orig_url'], // Meraki, Aruba/UniFi/Ruckus, Coova, FortiGate
};

/** Every query parameter name the portal carries through its forms. */
export const HANDOFF_PARAMS = Object.values(ALIASES).flat();

const MAC_RE = /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

export function normalizeMac(value: string): string | undefined {
  const m = MAC_RE.exec(value.trim().replace(/\./g, ''));
  return m ? m.slice(1).join(':').toLowerCase() : undefined;
}

/** A continue URL we may send a browser to: absolute http(s), a real host, no credentials, no tricks. */
export function safeContinueUrl(value: string | undefined, ownHost?: string): string | undefined {
  if (!value || value.length > 2048 || /[\s\x00-\x1f\x7f\\]/.test(value)) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (!u.hostname || u.username || u.password) return undefined;
  if (!/^[a-z0-9.-]+$/i.test(u.hostname) && !isIP(u.hostname.replace(/^\[|\]$/g, ''))) return undefined;
  // Back to our own portal would only loop.
  if (ownHost && u.hostname.toLowerCase() === ownHost && u.pathname.startsWith('/portal')) return undefined;
  return u.href;
}

export interface ParsedHandoff {
  /** Normalized fields, as stored with the device. */
  handoff: Handoff;
  /** The continue URL as the controller sent it (checked only when used). */
  continueUrl?: string;
  /** The recognized raw parameters, carried through the portal's forms unchanged. */
  raw: Record<string, string>;
}

/** Reads the controller's parameters from a query string or form body; unusable values are dropped. */
export function parseHandoff(params: Record<string, unknown>): ParsedHandoff {
  const raw: Record<string, string> = {};
  for (const name of HANDOFF_PARAMS) {
    const v = params[name];
    if (typeof v === 'string' && v.length > 0 && v.length <= 2048) raw[name] = v;
  }
  const first = (field: keyof typeof ALIASES) => ALIASES[field].map((n) => raw[n]).find((v) => v !== undefined);
  const handoff: Handoff = {};
  const mac = first('mac');
  if (mac && normalizeMac(mac)) handoff.mac = normalizeMac(mac);
  const ip = first('ip');
  if (ip && isIP(ip)) handoff.ip = ip;
  const ap = first('ap');
  if (ap) handoff.ap = normalizeMac(ap) ?? ap.slice(0, 64);
  for (const field of ['ssid', 'sessionId', 'nasId'] as const) {
    const v = first(field);
    if (v && /^[\x20-\x7e]{1,253}$/.test(v)) handoff[field] = v;
  }
  const nasIp = first('nasIp');
  if (nasIp && isIP(nasIp)) handoff.nasIp = nasIp;
  return { handoff, continueUrl: first('continueUrl'), raw };
}

/**
 * The stored form of a hand-off: normalized fields plus the continue URL, or null when empty.
 * The controller's client IP is the client's own word: it is used for admission only when the
 * gateway cannot see the device's address (it came through a tenant's egress NAT). Otherwise a
 * different value is kept as `reportedIp`, for admins, and the address seen is what counts.
 */
export function storedHandoff(p: ParsedHandoff, sourceIp: string, behindNat: boolean): Record<string, string> | null {
  const out: Record<string, string> = { ...(p.handoff as Record<string, string>) };
  if (out.ip && out.ip !== sourceIp && !behindNat) {
    out.reportedIp = out.ip;
    delete out.ip;
  }
  if (p.continueUrl) out.continueUrl = p.continueUrl;
  return Object.keys(out).length ? out : null;
}
