import { z } from 'zod';
import { IDENTITY_MODES, brandingSchema, emailDomain, webhookUrl, type Branding, type GatewayConfig, type IdentityMode, type PortalSeed } from '../config/index.js';
import type { GatewayContext } from '../http/context.js';
import type { PortalSettingsUpdate } from '../store/index.js';
import type { Tenant } from '../tenants/index.js';

/** A tenant's portal as it is in effect now: the admin page's saved settings, else the config's. */
export interface PortalView {
  tenant: Tenant;
  identityMode: IdentityMode;
  allowedDomains: string[];
  webhookUrl: string | null;
  webhookSecret: string | null;
  branding: Branding;
  hasLogo: boolean;
  sso?: NonNullable<PortalSeed['sso']>;
  /** Who saved the settings last (undefined: still the config's seed). */
  updatedBy?: string | null;
  updatedAt?: number;
}

export async function portalView(ctx: GatewayContext, tenant: Tenant): Promise<PortalView> {
  const saved = await ctx.store.portalSettings.get(tenant.id);
  const seed = tenant.seed;
  if (!saved) {
    return {
      tenant, identityMode: seed.identityMode, allowedDomains: seed.allowedDomains, webhookUrl: seed.admitWebhookUrl ?? null,
      webhookSecret: seed.admitWebhookSecret ?? null, branding: seed.branding, hasLogo: false, sso: seed.sso,
    };
  }
  return {
    tenant, identityMode: saved.identityMode as IdentityMode, allowedDomains: saved.allowedDomains, webhookUrl: saved.webhookUrl,
    webhookSecret: saved.webhookSecret, branding: saved.branding, hasLogo: saved.hasLogo, sso: seed.sso,
    updatedBy: saved.updatedBy, updatedAt: saved.updatedAt,
  };
}

/** What the admin page may send. The secret is write-only: absent or empty keeps the saved one. */
const updateSchema = z.strictObject({
  identityMode: z.enum(IDENTITY_MODES, { message: `must be one of ${IDENTITY_MODES.join(', ')}` }),
  allowedDomains: z.array(emailDomain).max(100),
  admitWebhookUrl: z.union([z.literal(''), webhookUrl]).optional(),
  admitWebhookSecret: z.string().optional(),
  clearWebhookSecret: z.boolean().optional(),
  branding: brandingSchema,
});

export type FieldErrors = Record<string, string>;

/** Validates an admin update against the current view; returns the settings to save or per-field errors. */
export function validateUpdate(body: unknown, current: PortalView, config: GatewayConfig): { ok: PortalSettingsUpdate } | { errors: FieldErrors } {
  const parsed = updateSchema.safeParse(body);
  const errors: FieldErrors = {};
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [head, second] = issue.path.map(String);
      const field = head === 'branding' && second ? `branding.${second}` : head === 'allowedDomains' ? 'allowedDomains' : head || 'form';
      const where = head === 'allowedDomains' && second !== undefined ? `entry ${Number(second) + 1}: ` : '';
      if (!errors[field]) errors[field] = issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : `${where}${issue.message}`;
    }
  }
  // The rules between fields are checked too, so the admin sees every problem at once.
  const raw = (typeof body === 'object' && body ? body : {}) as Record<string, unknown>;
  const mode = raw.identityMode;
  const domains = Array.isArray(raw.allowedDomains) ? raw.allowedDomains : [];
  const url = typeof raw.admitWebhookUrl === 'string' && raw.admitWebhookUrl ? raw.admitWebhookUrl : null;
  let secret = raw.clearWebhookSecret === true ? null : current.webhookSecret;
  if (typeof raw.admitWebhookSecret === 'string' && raw.admitWebhookSecret) {
    if (raw.admitWebhookSecret.length < 16) errors.admitWebhookSecret = 'must be at least 16 characters; use a long random value';
    else if (raw.admitWebhookSecret.length > 256) errors.admitWebhookSecret = 'must be at most 256 characters';
    else secret = raw.admitWebhookSecret;
  }
  if (url && !secret && !errors.admitWebhookSecret) errors.admitWebhookSecret = 'a webhook URL needs a secret, so the receiver can verify the signature';
  if (mode === 'domain' && domains.length === 0 && !errors.allowedDomains) errors.allowedDomains = 'domain mode needs at least one allowed domain';
  if (mode === 'sso' && !current.sso) errors.identityMode = 'sso needs an identity provider: add portal.sso (issuer, clientId, clientSecret) to the config first';
  if (mode === 'otp' && !config.smtp) errors.identityMode = 'otp sends codes by email: add smtp (host, port, from) to the config first';
  if (!parsed.success || Object.keys(errors).length) return { errors };
  const u = parsed.data;
  return { ok: { identityMode: u.identityMode, allowedDomains: [...new Set(u.allowedDomains)], webhookUrl: url, webhookSecret: secret, branding: u.branding } };
}

/** Logo uploads: small raster images only (an SVG can carry script). */
export const LOGO_TYPES: Record<string, Buffer> = {
  'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  'image/jpeg': Buffer.from([0xff, 0xd8, 0xff]),
  'image/gif': Buffer.from('GIF8'),
  'image/webp': Buffer.from('RIFF'),
};
export const LOGO_MAX_BYTES = 256 * 1024;

/** Checks a logo by its bytes, not its name or declared type; returns the real type or an error. */
export function checkLogo(data: Buffer): { type: string } | { error: string } {
  if (data.length === 0) return { error: 'the file is empty' };
  if (data.length > LOGO_MAX_BYTES) return { error: `the logo must be at most ${LOGO_MAX_BYTES / 1024} KiB` };
  for (const [type, magic] of Object.entries(LOGO_TYPES)) {
    if (data.subarray(0, magic.length).equals(magic) && (type !== 'image/webp' || data.subarray(8, 12).toString() === 'WEBP')) return { type };
  }
  return { error: 'the logo must be a PNG, JPEG, GIF or WebP image' };
}
