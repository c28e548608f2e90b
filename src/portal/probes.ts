import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { gatewayUrl, type GatewayContext } from '../http/context.js';

/** What an OS expects when it is online; enrolled devices get this instead of the portal. */
interface Success {
  status: number;
  type?: string;
  body?: string;
}

const APPLE: Success = { status: 200, type: 'text/html', body: '<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>' };
const ANDROID: Success = { status: 204 };
const MSFT: Success = { status: 200, type: 'text/plain', body: 'Microsoft Connect Test' };
const NCSI: Success = { status: 200, type: 'text/plain', body: 'Microsoft NCSI' };
const FIREFOX: Success = { status: 200, type: 'text/html', body: '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>' };
const FIREFOX_TXT: Success = { status: 200, type: 'text/plain', body: 'success\n' };
const GNOME: Success = { status: 204 };
const UBUNTU: Success = { status: 200, type: 'text/plain', body: 'NetworkManager is online\n' };

/** Hosts that exist only to detect captive portals: every path on them is a probe. */
const PROBE_HOSTS: Record<string, Success> = {
  'connectivitycheck.gstatic.com': ANDROID,
  'connectivitycheck.android.com': ANDROID,
  'clients3.google.com': ANDROID,
  'captive.apple.com': APPLE,
  'www.msftconnecttest.com': MSFT,
  'ipv6.msftconnecttest.com': MSFT,
  'www.msftncsi.com': NCSI,
  'detectportal.firefox.com': FIREFOX,
  'connectivity-check.ubuntu.com': UBUNTU,
  'nmcheck.gnome.org': GNOME,
};

/** Probe paths that count on any host (the gateway may be reached under any steered name). */
const PROBE_PATHS: Record<string, Success> = {
  '/generate_204': ANDROID,
  '/gen_204': ANDROID,
  '/hotspot-detect.html': APPLE,
  '/library/test/success.html': APPLE,
  '/connecttest.txt': MSFT,
  '/ncsi.txt': NCSI,
  '/canonical.html': FIREFOX,
  '/success.txt': FIREFOX_TXT,
  '/check_network_status.txt': GNOME,
};

/** The probe host names, for DNS steering. */
export const CAPTIVE_PROBE_HOSTS = Object.keys(PROBE_HOSTS).concat(['www.apple.com', 'www.google.com', 'dns.msftncsi.com']);

function requestHost(req: FastifyRequest): string {
  return (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
}

/** The success answer when this request is a captive probe, else undefined. */
export function probeFor(req: FastifyRequest): Success | undefined {
  const path = req.url.split('?')[0];
  return PROBE_PATHS[path] ?? PROBE_HOSTS[requestHost(req)];
}

/**
 * Answers a captive probe: the OS's own success answer for an enrolled device, else a 302 to
 * the portal so the OS shows its "sign in to network" sheet. Returns false when not a probe.
 */
export async function answerProbe(ctx: GatewayContext, req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const success = probeFor(req);
  if (!success) return false;
  reply.header('cache-control', 'no-store');
  if (await ctx.isEnrolled(req.ip)) {
    reply.code(success.status);
    if (success.type) reply.type(success.type);
    await reply.send(success.body ?? '');
  } else {
    await reply.redirect(gatewayUrl(ctx, '/portal'), 302);
  }
  return true;
}

/** Registers the probe paths on an app; probe hosts are caught by the app's catch-all. */
export function registerProbeRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  for (const path of Object.keys(PROBE_PATHS)) {
    app.get(path, async (req, reply) => {
      await answerProbe(ctx, req, reply);
    });
  }
}
