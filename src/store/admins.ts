import type { Db } from './db.js';

export interface Admin {
  id: number;
  username: string;
  passwordHash: string;
  /** null: an appliance admin; otherwise the one tenant this admin manages. */
  tenantId: string | null;
}

export class AdminRepository {
  constructor(private readonly db: Db) {}

  async count(): Promise<number> {
    return (await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM admins'))!.n;
  }

  async byUsername(username: string): Promise<Admin | undefined> {
    const row = await this.db.get<{ id: number; username: string; password_hash: string; tenant_id: string | null }>(
      'SELECT id, username, password_hash, tenant_id FROM admins WHERE username = ?',
      [username],
    );
    return row && { id: row.id, username: row.username, passwordHash: row.password_hash, tenantId: row.tenant_id };
  }

  /**
   * Creates the admin, or replaces the password of an existing one. Returns whether it was new.
   * `scope`: a tenant id, null for an appliance admin, undefined to keep an existing admin's
   * (a new one then manages the appliance).
   */
  async upsert(username: string, passwordHash: string, scope?: string | null): Promise<boolean> {
    const now = Date.now();
    const existing = await this.byUsername(username);
    if (existing) {
      const tenantId = scope === undefined ? existing.tenantId : scope;
      await this.db.run('UPDATE admins SET password_hash = ?, tenant_id = ?, updated_at = ? WHERE id = ?', [passwordHash, tenantId, now, existing.id]);
      await this.db.run('DELETE FROM admin_sessions WHERE admin_id = ?', [existing.id]);
      return false;
    }
    await this.db.run('INSERT INTO admins (username, password_hash, tenant_id, created_at, updated_at) VALUES (?,?,?,?,?)', [
      username, passwordHash, scope ?? null, now, now,
    ]);
    return true;
  }
}
