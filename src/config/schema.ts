import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_CLIENT_NETWORKS, parseCidr } from '../dns/acl.js';
import { nacSchema, otpSchema, portalSchema, smtpSchema, tenantSchema } from './enrollment-schema.js';

/** "host:port", "[v6]:port" or ":port"; port 0 asks the kernel for a free one (tests). */
export interface HostPort {
  host: string;
  port: number;
}

const HOSTNAME_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export function isHostname(value: string): boolean {
  return HOSTNAME_RE.test(value);
}

export function parseHostPort(value: string, defaultPort?: number): HostPort | string {
  let host: string;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (v6) {
    host = v6[1];
    portText = v6[2];
    if (isIP(host) !== 6) return `"${host}" is not an IPv6 address`;
  } else {
    const idx = value.lastIndexOf(':');
    if (idx >= 0 && value.indexOf(':') !== idx) return 'an IPv6 address needs brackets, as in [::1]:53';
    host = idx >= 0 ? value.slice(0, idx) : value;
    portText = idx >= 0 ? value.slice(idx + 1) : undefined;
    if (host === '') host = '0.0.0.0';
    if (!isIP(host) && !isHostname(host)) return `"${host}" is neither an IP address nor a host name`;
  }
  if (portText === undefined) {
    if (defaultPort === undefined) return 'a port is required, as in 0.0.0.0:443';
    return { host, port: defaultPort };
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) return `port "${portText}" is not a number from 0 to 65535`;
  return { host, port };
}

function hostPort(defaultPort?: number) {
  return z.string().transform((value, ctx) => {
    const parsed = parseHostPort(value.trim(), defaultPort);
    if (typeof parsed === 'string') {
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    }
    return parsed;
  });
}

const hostname = z
  .string()
  .transform((s) => s.trim().toLowerCase().replace(/\.$/, ''))
  .refine(isHostname, { message: 'must be a DNS host name such as gw.example.test' });

const sniPattern = z
  .string()
  .transform((s) => s.trim().toLowerCase().replace(/\.$/, ''))
  .refine((s) => isHostname(s.startsWith('*.') ? s.slice(2) : s), {
    message: 'must be a host name or *.suffix, as in *.example.test',
  });

const ip = z.string().refine((s) => isIP(s) !== 0, { message: 'must be an IPv4 or IPv6 address' });

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);

export const configSchema = z
  .strictObject({
    gateway: z
      .strictObject({
        hostname,
        /** More names the gateway answers for itself (a DoH name, a short name); same certificate. */
        aliases: z.array(hostname).default([]),
        address: ip,
        publicPort: z.number().int().min(1).max(65535).optional(),
        certFile: z.string().min(1).optional(),
        keyFile: z.string().min(1).optional(),
      })
      .refine((g) => !g.certFile === !g.keyFile, {
        message: 'certFile and keyFile go together: set both or neither',
      }),
    listen: z.strictObject({
      https: hostPort(),
      http: hostPort().nullable().default(null),
      dns: hostPort(),
      metrics: hostPort()
        .refine((hp) => hp.host === 'localhost' || /^127\.|^::1$/.test(hp.host), {
          message: 'the metrics port serves without a login, so it must be on loopback (127.0.0.1 or [::1])',
        })
        .nullable()
        .default(null),
    }),
    dataDir: z.string().min(1),
    tls: z
      .strictObject({
        routes: z.array(z.strictObject({ sni: sniPattern, to: hostPort(443) })).default([]),
        leafLifetimeDays: z.number().int().min(1).max(397).default(30),
        passthroughPort: z.number().int().min(1).max(65535).default(443),
      })
      .prefault({}),
    dns: z.strictObject({
      upstreams: z.array(hostPort(53)).min(1, { message: 'at least one upstream resolver is needed' }),
      timeoutMs: z.number().int().min(100).max(30000).default(2000),
      captive: z.boolean().default(false),
      steerAi: z.boolean().default(false),
      aiServices: z.array(z.strictObject({ name: z.string().min(1).max(100), domains: z.array(hostname).min(1) })).default([]),
      hosts: z.record(hostname, z.union([ip, z.array(ip).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]))).default({}),
      allowNetworks: z
        .array(z.string().refine((c) => typeof parseCidr(c) !== 'string', { message: 'must be a network such as 10.0.0.0/8 or fd00::/8' }))
        .default(DEFAULT_CLIENT_NETWORKS),
      rateLimit: z
        .strictObject({
          qps: z.number().min(0).max(1_000_000).default(200),
          burst: z.number().int().min(1).max(1_000_000).default(400),
        })
        .prefault({}),
      steeredTtl: z.number().int().min(0).max(86400).default(60),
      cache: z
        .strictObject({
          maxEntries: z.number().int().min(1).max(10_000_000).default(50000),
          minTtl: z.number().int().min(0).max(3600).default(5),
          maxTtl: z.number().int().min(1).max(604800).default(3600),
          negativeMaxTtl: z.number().int().min(0).max(86400).default(900),
          staleSeconds: z.number().int().min(0).max(604800).default(86400),
        })
        .prefault({})
        .refine((c) => c.minTtl <= c.maxTtl, { message: 'minTtl must not exceed maxTtl' }),
    }),
    relay: z
      .strictObject({
        helloTimeoutMs: z.number().int().min(100).max(60000).default(10000),
        maxHelloBytes: z.number().int().min(1024).max(65536).default(16384),
        connectTimeoutMs: z.number().int().min(100).max(60000).default(5000),
        idleTimeoutSec: z.number().int().min(5).max(86400).default(300),
        drainTimeoutSec: z.number().int().min(0).max(600).default(15),
      })
      .prefault({}),
    admin: z
      .strictObject({
        sessionTtlHours: z.number().min(0.1).max(720).default(12),
      })
      .prefault({}),
    retention: z
      .strictObject({
        flowDays: z.number().int().min(1).max(3650).default(30),
        dnsLookupDays: z.number().int().min(1).max(3650).default(30),
      })
      .prefault({}),
    log: z.strictObject({ level: logLevel.default('info') }).prefault({}),
    /** Organizations served by this appliance; without the block there is one, "default". */
    tenants: z.array(tenantSchema).optional(),
    /** The portal of a single-tenant appliance (with tenants, each tenant has its own). */
    portal: portalSchema.optional(),
    otp: otpSchema,
    smtp: smtpSchema.optional(),
    nac: nacSchema,
  })
  .superRefine((c, ctx) => {
    if (c.tenants && c.portal) {
      ctx.addIssue({ code: 'custom', path: ['portal'], message: 'with a tenants block, put portal: inside each tenant' });
    }
    const ids = new Set<string>();
    c.tenants?.forEach((t, i) => {
      if (ids.has(t.id)) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'id'], message: `tenant id "${t.id}" is used twice` });
      ids.add(t.id);
    });
    const known = c.tenants ? ids : new Set(['default']);
    c.nac.coa.forEach((n, i) => {
      if (n.tenant !== undefined && !known.has(n.tenant)) {
        ctx.addIssue({ code: 'custom', path: ['nac', 'coa', i, 'tenant'], message: `no tenant "${n.tenant}" (known: ${[...known].join(', ')})` });
      }
    });
    const otpInUse = (c.tenants?.map((t) => t.portal) ?? [c.portal]).some((p) => p?.identityMode === 'otp');
    if (otpInUse && !c.smtp) ctx.addIssue({ code: 'custom', path: ['smtp'], message: 'identityMode otp sends codes by email: configure smtp (host, port, from)' });
  });

export type GatewayConfig = z.output<typeof configSchema>;
export type SniRoute = GatewayConfig['tls']['routes'][number];
export type { IdentityMode, NasConfig, PortalSeed, TenantConfig, Branding, CoaAttributeName } from './enrollment-schema.js';
export { IDENTITY_MODES, emailDomain, webhookUrl, brandingSchema } from './enrollment-schema.js';
