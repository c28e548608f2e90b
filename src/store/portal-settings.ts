import type { Db } from './db.js';

/** What the admin page edits for one tenant's portal. */
export interface PortalSettings {
  identityMode: string;
  allowedDomains: string[];
  webhookUrl: string | null;
  webhookSecret: string | null;
  branding: { name?: string; color?: string; welcome?: string };
  hasLogo: boolean;
  updatedAt: number;
  updatedBy: string | null;
}

export type PortalSettingsUpdate = Omit<PortalSettings, 'hasLogo' | 'updatedAt' | 'updatedBy'>;

/** Per-tenant portal settings; a tenant without a row uses the config's values. */
export class PortalSettingsRepository {
  constructor(private readonly db: Db) {}

  async get(tenantId: string): Promise<PortalSettings | undefined> {
    const r = await this.db.get<Record<string, any>>(
      `SELECT identity_mode, allowed_domains, webhook_url, webhook_secret, branding, logo IS NOT NULL AS has_logo, updated_at, updated_by
         FROM portal_settings WHERE tenant_id = ?`,
      [tenantId],
    );
    return r && {
      identityMode: r.identity_mode,
      allowedDomains: JSON.parse(r.allowed_domains),
      webhookUrl: r.webhook_url,
      webhookSecret: r.webhook_secret,
      branding: JSON.parse(r.branding),
      hasLogo: r.has_logo === 1,
      updatedAt: r.updated_at,
      updatedBy: r.updated_by,
    };
  }

  async save(tenantId: string, s: PortalSettingsUpdate, by: string): Promise<void> {
    await this.db.run(
      `INSERT INTO portal_settings (tenant_id, identity_mode, allowed_domains, webhook_url, webhook_secret, branding, updated_at, updated_by)
       VALUES (?,?,?,?,?,?,?,?)
       ON CONFLICT(tenant_id) DO UPDATE SET identity_mode = excluded.identity_mode, allowed_domains = excluded.allowed_domains,
         webhook_url = excluded.webhook_url, webhook_secret = excluded.webhook_secret, branding = excluded.branding,
         updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      [tenantId, s.identityMode, JSON.stringify(s.allowedDomains), s.webhookUrl, s.webhookSecret, JSON.stringify(s.branding), Date.now(), by],
    );
  }

  /** Stores (or with null, removes) the logo; the row must exist (save first). */
  async setLogo(tenantId: string, logo: { type: string; data: Buffer } | null, by: string): Promise<void> {
    await this.db.run('UPDATE portal_settings SET logo = ?, logo_type = ?, updated_at = ?, updated_by = ? WHERE tenant_id = ?', [
      logo?.data ?? null, logo?.type ?? null, Date.now(), by, tenantId,
    ]);
  }

  async logo(tenantId: string): Promise<{ type: string; data: Buffer } | undefined> {
    const r = await this.db.get<{ logo: Buffer | null; logo_type: string | null }>('SELECT logo, logo_type FROM portal_settings WHERE tenant_id = ?', [tenantId]);
    return r?.logo && r.logo_type ? { type: r.logo_type, data: r.logo } : undefined;
  }
}
