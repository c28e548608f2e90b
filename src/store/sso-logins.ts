import type { Db } from './db.js';

export interface SsoLogin {
  state: string;
  tenantId: string;
  codeVerifier: string;
  nonce: string;
  clientIp: string;
  handoff: Record<string, string> | null;
  userAgent: string | null;
  createdAt: number;
}

/** Sign-ins in flight to the identity provider: the PKCE verifier and nonce wait here for the callback. */
export class SsoLoginRepository {
  constructor(private readonly db: Db) {}

  async create(l: SsoLogin): Promise<void> {
    await this.db.run(
      'INSERT INTO sso_logins (state, tenant_id, code_verifier, nonce, client_ip, handoff, user_agent, created_at) VALUES (?,?,?,?,?,?,?,?)',
      [l.state, l.tenantId, l.codeVerifier, l.nonce, l.clientIp, l.handoff ? JSON.stringify(l.handoff) : null, l.userAgent, l.createdAt],
    );
  }

  /** Returns and deletes the login: a state value works once. */
  async take(state: string): Promise<SsoLogin | undefined> {
    return this.db.transaction(async (tx) => {
      const r = await tx.get<Record<string, any>>('SELECT * FROM sso_logins WHERE state = ?', [state]);
      if (!r) return undefined;
      await tx.run('DELETE FROM sso_logins WHERE state = ?', [state]);
      return {
        state: r.state, tenantId: r.tenant_id, codeVerifier: r.code_verifier, nonce: r.nonce, clientIp: r.client_ip,
        handoff: r.handoff ? JSON.parse(r.handoff) : null, userAgent: r.user_agent, createdAt: r.created_at,
      };
    });
  }

  async pruneOlderThan(cutoffMs: number): Promise<number> {
    return (await this.db.run('DELETE FROM sso_logins WHERE created_at < ?', [cutoffMs])).changes;
  }
}
