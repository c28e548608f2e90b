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

  /**
   * Opens a challenge unless the hourly limits are reached, as one step: parallel requests cannot
   * all pass the check before any of them is counted.
   */
  async reserve(c: Omit<OtpChallenge, 'sends' | 'attempts' | 'state'>, limits: { perEmail: number; perClient: number; since: number }): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const sum = async (where: string, params: unknown[]) =>
        (await tx.get<{ n: number }>(`SELECT COALESCE(SUM(sends), 0) AS n FROM otp_challenges WHERE ${where} AND created_at >= ?`, [...params, limits.since]))!.n;
      if ((await sum('tenant_id = ? AND email = ?', [c.tenantId, c.email])) >= limits.perEmail) return false;
      if ((await sum('client_ip = ?', [c.clientIp])) >= limits.perClient) return false;
      await tx.run(
        `INSERT INTO otp_challenges (id, tenant_id, email, code_hash, client_ip, handoff, user_agent, created_at, expires_at, last_sent_at)
         VALUES (?,?,?,?,?,?,?,?,?,?)`,
        [c.id, c.tenantId, c.email, c.codeHash, c.clientIp, c.handoff ? JSON.stringify(c.handoff) : null, c.userAgent, c.createdAt, c.expiresAt, c.lastSentAt],
      );
      return true;
    });
  }

  /** The mail could not be sent: the challenge is closed and does not count towards the limits. */
  async unsent(id: string): Promise<void> {
    await this.db.run(`UPDATE otp_challenges SET state = 'locked', sends = 0 WHERE id = ?`, [id]);
  }

  /**
   * Claims the right to send another code for an open challenge: false while throttled, or when
   * the address or the client has had its codes for the hour (counting every challenge).
   */
  async claimResend(id: string, now: number, notBefore: number, limits: { perEmail: number; perClient: number; since: number }): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const ch = await tx.get<{ tenant_id: string; email: string; client_ip: string }>('SELECT tenant_id, email, client_ip FROM otp_challenges WHERE id = ?', [id]);
      if (!ch) return false;
      const sum = async (where: string, params: unknown[]) =>
        (await tx.get<{ n: number }>(`SELECT COALESCE(SUM(sends), 0) AS n FROM otp_challenges WHERE ${where} AND created_at >= ?`, [...params, limits.since]))!.n;
      if ((await sum('tenant_id = ? AND email = ?', [ch.tenant_id, ch.email])) >= limits.perEmail) return false;
      if ((await sum('client_ip = ?', [ch.client_ip])) >= limits.perClient) return false;
      const { changes } = await tx.run(
        `UPDATE otp_challenges SET sends = sends + 1, last_sent_at = ? WHERE id = ? AND state = 'open' AND last_sent_at <= ?`,
        [now, id, notBefore],
      );
      return changes === 1;
    });
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

  /** The new code went out: it replaces the old one. */
  async resent(id: string, codeHash: string, expiresAt: number): Promise<void> {
    await this.db.run('UPDATE otp_challenges SET code_hash = ?, expires_at = ? WHERE id = ?', [codeHash, expiresAt, id]);
  }

  /** The resend's mail failed: give the send back. */
  async resendFailed(id: string): Promise<void> {
    await this.db.run('UPDATE otp_challenges SET sends = sends - 1 WHERE id = ? AND sends > 0', [id]);
  }

  async pruneOlderThan(cutoffMs: number): Promise<number> {
    return (await this.db.run('DELETE FROM otp_challenges WHERE created_at < ?', [cutoffMs])).changes;
  }
}
