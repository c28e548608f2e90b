import { isIP } from 'node:net';
import { z } from 'zod';
import { parseCidr } from '../dns/acl.js';

/** Config keys of tenants, the enrollment portal, OTP mail and NAC admission. */

export const IDENTITY_MODES = ['sso', 'otp', 'domain', 'none'] as const;
export type IdentityMode = (typeof IDENTITY_MODES)[number];

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const emailDomain = z
  .string()
  .transform((s) => s.trim().toLowerCase().replace(/^@/, ''))
  .refine((s) => DOMAIN_RE.test(s), { message: 'must be an email domain such as example.com' });

/** http(s) URL with a host and no credentials in it. */
export const webhookUrl = z.string().refine(
  (s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !!u.hostname && !u.username && !u.password;
    } catch {
      return false;
    }
  },
  { message: 'must be an http:// or https:// URL without user:password in it' },
);

const network = z.string().refine((c) => typeof parseCidr(c) !== 'string', { message: 'must be an address or network such as 10.0.0.0/8 or fd00::/8' });

const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, { message: 'must be a color as #rrggbb' });

export const brandingSchema = z
  .strictObject({
    name: z.string().trim().max(80).optional(),
    color: color.optional(),
    welcome: z.string().trim().max(1000).optional(),
  })
  .prefault({});

const ssoSchema = z.strictObject({
  issuer: z.url({ message: 'must be the identity provider URL, as in https://login.example.com/realms/corp' }),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)).default(['openid', 'email', 'profile']),
  /** Accept an ID token whose email_verified claim is false (some providers never set it). */
  allowUnverifiedEmail: z.boolean().default(false),
});

export const portalSchema = z
  .strictObject({
    identityMode: z.enum(IDENTITY_MODES).default('none'),
    allowedDomains: z.array(emailDomain).default([]),
    admitWebhookUrl: webhookUrl.optional(),
    admitWebhookSecret: z.string().min(16, { message: 'must be at least 16 characters; use a long random value' }).optional(),
    branding: brandingSchema,
    sso: ssoSchema.optional(),
  })
  .refine((p) => !p.admitWebhookUrl || !!p.admitWebhookSecret, { message: 'admitWebhookUrl needs admitWebhookSecret: the receiver must be able to verify the signature' })
  .refine((p) => p.identityMode !== 'sso' || !!p.sso, { message: 'identityMode sso needs the sso block (issuer, clientId, clientSecret)' })
  .refine((p) => p.identityMode !== 'domain' || p.allowedDomains.length > 0, { message: 'identityMode domain needs at least one allowedDomains entry' });

export type PortalSeed = z.output<typeof portalSchema>;
export type Branding = z.output<typeof brandingSchema>;

export const tenantSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, { message: 'must be lowercase letters, digits and dashes, as in acme-corp' }),
  name: z.string().trim().min(1).max(120),
  /** The client networks of this organization (on-prem: the LANs whose devices it owns). */
  networks: z.array(network).default([]),
  /** Public addresses the organization's traffic arrives from (a hosted or shared gateway). */
  egress: z.array(network).default([]),
  portal: portalSchema.prefault({}),
});

export const otpSchema = z
  .strictObject({
    length: z.number().int().min(6).max(10).default(6),
    ttlMinutes: z.number().min(0.1).max(60).default(10),
    maxAttempts: z.number().int().min(1).max(20).default(5),
    resendSeconds: z.number().int().min(10).max(3600).default(60),
    /** Codes one address (or one client) may be sent per hour: keeps the portal from being a mail cannon. */
    maxPerHour: z.number().int().min(1).max(100).default(5),
  })
  .prefault({});

export const smtpSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(587),
  /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
  secure: z.boolean().default(false),
  requireTls: z.boolean().default(false),
  user: z.string().optional(),
  pass: z.string().optional(),
  from: z.string().min(3),
});

const COA_ATTRIBUTES = ['Framed-IP-Address', 'Acct-Session-Id', 'User-Name', 'Calling-Station-Id', 'Called-Station-Id', 'NAS-IP-Address', 'NAS-Identifier', 'Cisco-AVPair'] as const;
export type CoaAttributeName = (typeof COA_ATTRIBUTES)[number];

export const nacSchema = z
  .strictObject({
    coa: z
      .array(
        z.strictObject({
          address: z.string().refine((s) => isIP(s) !== 0, { message: 'must be the NAS IP address' }),
          port: z.number().int().min(1).max(65535).default(3799),
          secret: z.string().min(1),
          tenant: z.string().optional(),
          /** coa: CoA-Request (re-authorize); disconnect: Disconnect-Request (the device reconnects and is re-evaluated). */
          kind: z.enum(['coa', 'disconnect']).default('coa'),
          attributes: z.array(z.enum(COA_ATTRIBUTES)).min(1).default(['Framed-IP-Address', 'Acct-Session-Id']),
          timeoutMs: z.number().int().min(100).max(30000).default(3000),
          retries: z.number().int().min(0).max(10).default(2),
        }),
      )
      .default([])
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((n, i) => {
          const key = `${n.address}:${n.port}`;
          if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: `NAS ${key} is listed twice; one entry per NAS (tenant: unset serves every tenant)` });
          seen.add(key);
        });
      }),
  })
  .prefault({});

export type NasConfig = z.output<typeof nacSchema>['coa'][number];
export type TenantConfig = z.output<typeof tenantSchema>;
