import type { Db } from './db.js';

export interface AdminSession {
  adminId: number;
  username: string;
  /** null: an appliance admin, who may act for any tenant. */
  tenantId: string | null;
  expiresAt: number;
}

/** Admin login sessions, keyed by the SHA-256 of the cookie value. */
export class SessionRepository {
  constructor(private readonly db: Db) {}

  async create(tokenHash: string, adminId: number, expiresAt: number, clientIp: string): Promise<void> {
    await this.db.run(
      'INSERT INTO admin_sessions (token_hash, admin_id, created_at, expires_at, client_ip) VALUES (?,?,?,?,?)',
      [tokenHash, adminId, Date.now(), expiresAt, clientIp],
    );
  }

  async find(tokenHash: string, now = Date.now()): Promise<AdminSession | undefined> {
    const row = await this.db.get<{ admin_id: number; username: string; tenant_id: string | null; expires_at: number }>(
      `SELECT s.admin_id, a.username, a.tenant_id, s.expires_at FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
        WHERE s.token_hash = ? AND s.expires_at > ?`,
      [tokenHash, now],
    );
    return row && { adminId: row.admin_id, username: row.username, tenantId: row.tenant_id, expiresAt: row.expires_at };
  }

  async delete(tokenHash: string): Promise<void> {
    await this.db.run('DELETE FROM admin_sessions WHERE token_hash = ?', [tokenHash]);
  }

  async deleteExpired(now = Date.now()): Promise<number> {
    return (await this.db.run('DELETE FROM admin_sessions WHERE expires_at <= ?', [now])).changes;
  }
}
