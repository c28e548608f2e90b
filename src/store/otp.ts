import type { Db } from './db.js';

export interface OtpChallenge {
  id: string;
  tenantId: string;
  email: string;
  codeHash: string;
  clientIp: string;
  handoff: Record<string, string> | null;
  userAgent: string | null;
  createdAt: number;
  expiresAt: number;
  lastSentAt: number;
  sends: number;
  attempts: number;
  state: 'open' | 'used' | 'locked';
}

/** One-time codes sent by the portal. Only a hash of each code is kept. */
export class OtpRepository {
  constructor(private readonly db: Db) {}

  async create(c: Omit<OtpChallenge, 'sends' | 'attempts' | 'state'>): Promise<void> {
    await this.db.run(
      `INSERT INTO otp_challenges (id, tenant_id, email, code_hash, client_ip, handoff, user_agent, created_at, expires_at, last_sent_at)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
      [c.id, c.tenantId, c.email, c.codeHash, c.clientIp, c.handoff ? JSON.stringify(c.handoff) : null, c.userAgent, c.createdAt, c.expiresAt, c.lastSentAt],
    );
  }

  async get(id: string): Promise<OtpChallenge | undefined> {
    const r = await this.db.get<Record<string, any>>('SELECT * FROM otp_challenges WHERE id = ?', [id]);
    return r && {
      id: r.id, tenantId: r.tenant_id, email: r.email, codeHash: r.code_hash, clientIp: r.client_ip,
      handoff: r.handoff ? JSON.parse(r.handoff) : null, userAgent: r.user_agent, createdAt: r.created_at,
      expiresAt: r.expires_at, lastSentAt: r.last_sent_at, sends: r.sends, attempts: r.attempts, state: r.state,
    };
  }

  /** Counts a wrong code; locks the challenge when it reaches maxAttempts. Returns the new count. */
  async failAttempt(id: string, maxAttempts: number): Promise<number> {
    await this.db.run(
      `UPDATE otp_challenges SET attempts = attempts + 1, state = CASE WHEN attempts + 1 >= ? THEN 'locked' ELSE state END WHERE id = ? AND state = 'open'`,
      [maxAttempts, id],
    );
    return (await this.db.get<{ attempts: number }>('SELECT attempts FROM otp_challenges WHERE id = ?', [id]))?.attempts ?? maxAttempts;
  }

  /** Marks the challenge used; false when it was not open any more (used twice, or locked meanwhile). */
  async consume(id: string): Promise<boolean> {
    return (await this.db.run(`UPDATE otp_challenges SET state = 'used' WHERE id = ? AND state = 'open'`, [id])).changes === 1;
  }

  async resent(id: string, codeHash: string, now: number, expiresAt: number): Promise<void> {
    await this.db.run('UPDATE otp_challenges SET code_hash = ?, last_sent_at = ?, expires_at = ?, sends = sends + 1 WHERE id = ?', [codeHash, now, expiresAt, id]);
  }

  /** Codes sent to an address, or to a client, since a time: the hourly send limit. */
  async sentSince(since: number, by: { tenantId: string; email: string } | { clientIp: string }): Promise<number> {
    const row = 'email' in by
      ? await this.db.get<{ n: number }>('SELECT COALESCE(SUM(sends), 0) AS n FROM otp_challenges WHERE tenant_id = ? AND email = ? AND created_at >= ?', [by.tenantId, by.email, since])
      : await this.db.get<{ n: number }>('SELECT COALESCE(SUM(sends), 0) AS n FROM otp_challenges WHERE client_ip = ? AND created_at >= ?', [by.clientIp, since]);
    return row?.n ?? 0;
  }

  async pruneOlderThan(cutoffMs: number): Promise<number> {
    return (await this.db.run('DELETE FROM otp_challenges WHERE created_at < ?', [cutoffMs])).changes;
  }
}
