import type { Db, Queryable } from './db.js';

export type DeliveryKind = 'webhook' | 'coa' | 'disconnect';
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'gone' | 'cancelled';

/** One message to a peer (admit webhook or RADIUS CoA) in the durable outbox. */
export interface Delivery {
  id: string;
  tenantId: string;
  deviceId: number | null;
  kind: DeliveryKind;
  target: string;
  payload: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  lastResult: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

export type NewDelivery = Pick<Delivery, 'id' | 'tenantId' | 'deviceId' | 'kind' | 'target' | 'payload'>;

export interface DeliveryAttempt {
  at: number;
  outcome: string;
  detail: string | null;
  durationMs: number;
}

/** The outcome of one attempt, and what the outbox decided to do next. */
export interface AttemptRecord {
  outcome: string;
  detail: string | null;
  durationMs: number;
  state: DeliveryState;
  nextAttemptAt: number;
}

const COLUMNS = 'id, tenant_id, device_id, kind, target, payload, state, attempts, next_attempt_at, last_error, last_result, created_at, updated_at, finished_at';

function toDelivery(r: Record<string, any>): Delivery {
  return {
    id: r.id, tenantId: r.tenant_id, deviceId: r.device_id, kind: r.kind, target: r.target, payload: r.payload,
    state: r.state, attempts: r.attempts, nextAttemptAt: r.next_attempt_at, lastError: r.last_error, lastResult: r.last_result,
    createdAt: r.created_at, updatedAt: r.updated_at, finishedAt: r.finished_at,
  };
}

export async function insertDelivery(db: Queryable, d: NewDelivery, now = Date.now()): Promise<void> {
  await db.run(
    `INSERT INTO deliveries (id, tenant_id, device_id, kind, target, payload, state, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?,?,?,?,?,?, 'pending', 0, ?, ?, ?)`,
    [d.id, d.tenantId, d.deviceId, d.kind, d.target, d.payload, now, now, now],
  );
}

/** The outbox table: what is due, what happened on each attempt, and what admins see. */
export class DeliveryRepository {
  constructor(private readonly db: Db) {}

  async add(d: NewDelivery): Promise<void> {
    await insertDelivery(this.db, d);
  }

  /**
   * Pending deliveries due by `now`, oldest first, at most `perTarget` minus what is already in
   * flight to each target (so one target's backlog cannot crowd out the others), pushed `leaseMs`
   * into the future so that a slow attempt is not picked twice. A crash during an attempt leaves
   * the lease to expire: the delivery is tried again after a restart (at least once; receivers
   * de-duplicate by id).
   */
  async claimDue(now: number, limit: number, leaseMs: number, perTarget: number, inFlight: ReadonlyMap<string, number>): Promise<Delivery[]> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.all<Record<string, any>>(
        `SELECT * FROM (SELECT ${COLUMNS}, ROW_NUMBER() OVER (PARTITION BY target ORDER BY next_attempt_at) AS rank
           FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ?)
         WHERE rank <= ? ORDER BY next_attempt_at LIMIT ?`,
        [now, perTarget, limit + inFlight.size * perTarget],
      );
      const picked = rows.filter((r) => r.rank <= perTarget - (inFlight.get(r.target) ?? 0)).slice(0, limit).map(toDelivery);
      for (const d of picked) await tx.run('UPDATE deliveries SET next_attempt_at = ? WHERE id = ?', [now + leaseMs, d.id]);
      return picked;
    });
  }

  /** When the next delivery falls due, leaving out targets that have no free slot. */
  async nextDueAt(busyTargets: string[] = []): Promise<number | undefined> {
    const row = await this.db.get<{ t: number | null }>(
      `SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE state = 'pending' AND target NOT IN (${busyTargets.map(() => '?').join(',')})`,
      busyTargets,
    );
    return row?.t ?? undefined;
  }

  /** Gives a claimed delivery back, unattempted (the daemon is stopping). */
  async handBack(id: string): Promise<void> {
    await this.db.run(`UPDATE deliveries SET next_attempt_at = ? WHERE id = ? AND state = 'pending'`, [Date.now(), id]);
  }

  /** Records an attempt; a delivery cancelled meanwhile (its device removed) stays cancelled. */
  async recordAttempt(id: string, a: AttemptRecord, now = Date.now()): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run('INSERT INTO delivery_attempts (delivery_id, at, outcome, detail, duration_ms) VALUES (?,?,?,?,?)', [id, now, a.outcome, a.detail, a.durationMs]);
      await tx.run(
        `UPDATE deliveries SET attempts = attempts + 1, state = ?, next_attempt_at = ?, last_result = ?, last_error = ?, updated_at = ?,
           finished_at = CASE WHEN ? = 'pending' THEN NULL ELSE ? END WHERE id = ? AND state != 'cancelled'`,
        [a.state, a.nextAttemptAt, a.outcome, a.state === 'delivered' ? null : a.detail, now, a.state, now, id],
      );
    });
  }

  /** Points a tenant's waiting webhook deliveries at a new URL (null: cancels them). */
  async retargetWebhooks(tenantId: string, url: string | null): Promise<number> {
    const now = Date.now();
    const { changes } = url
      ? await this.db.run(`UPDATE deliveries SET target = ?, updated_at = ? WHERE tenant_id = ? AND kind = 'webhook' AND state = 'pending' AND target != ?`, [url, now, tenantId, url])
      : await this.db.run(`UPDATE deliveries SET state = 'cancelled', last_error = 'the webhook URL was removed', finished_at = ?, updated_at = ? WHERE tenant_id = ? AND kind = 'webhook' AND state = 'pending'`, [now, now, tenantId]);
    return changes;
  }

  async get(id: string, tenantId?: string): Promise<Delivery | undefined> {
    const row = await this.db.get<Record<string, any>>(
      `SELECT ${COLUMNS} FROM deliveries WHERE id = ? ${tenantId !== undefined ? 'AND tenant_id = ?' : ''}`,
      tenantId !== undefined ? [id, tenantId] : [id],
    );
    return row && toDelivery(row);
  }

  async attempts(id: string): Promise<DeliveryAttempt[]> {
    const rows = await this.db.all<Record<string, any>>('SELECT at, outcome, detail, duration_ms FROM delivery_attempts WHERE delivery_id = ? ORDER BY id', [id]);
    return rows.map((r) => ({ at: r.at, outcome: r.outcome, detail: r.detail, durationMs: r.duration_ms }));
  }

  async list(opts: { tenantId?: string; state?: DeliveryState; limit?: number }): Promise<Delivery[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (opts.tenantId !== undefined) {
      where.push('tenant_id = ?');
      params.push(opts.tenantId);
    }
    if (opts.state) {
      where.push('state = ?');
      params.push(opts.state);
    }
    params.push(Math.min(Math.max(opts.limit ?? 200, 1), 5000));
    const rows = await this.db.all<Record<string, any>>(
      `SELECT ${COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id LIMIT ?`,
      params,
    );
    return rows.map(toDelivery);
  }

  /**
   * Puts a finished (or waiting) delivery back in line for an immediate attempt, a webhook at the
   * tenant's current URL (`webhookUrl`). Refused, in the same statement, for a cancelled delivery
   * and for one whose device is no longer enrolled: it would admit a device that was removed.
   */
  async retryNow(id: string, tenantId: string | undefined, webhookUrl: string | null): Promise<'ok' | 'not-found' | 'cancelled' | 'device-removed' | 'no-webhook'> {
    const d = await this.get(id, tenantId);
    if (!d) return 'not-found';
    if (d.kind === 'webhook' && !webhookUrl) return 'no-webhook';
    const now = Date.now();
    const { changes } = await this.db.run(
      `UPDATE deliveries SET state = 'pending', target = CASE WHEN kind = 'webhook' THEN ? ELSE target END, next_attempt_at = ?, finished_at = NULL, updated_at = ?
        WHERE id = ? AND state != 'cancelled'
          AND NOT EXISTS (SELECT 1 FROM devices WHERE devices.id = deliveries.device_id AND devices.removed_at IS NOT NULL)`,
      [webhookUrl, now, now, id],
    );
    if (changes === 1) return 'ok';
    return (await this.get(id))?.state === 'cancelled' ? 'cancelled' : 'device-removed';
  }

  async counts(): Promise<Record<DeliveryState, number>> {
    const rows = await this.db.all<{ state: DeliveryState; n: number }>('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state');
    const out = { pending: 0, delivered: 0, failed: 0, gone: 0, cancelled: 0 };
    for (const r of rows) out[r.state] = r.n;
    return out;
  }
}

/** Cancels the waiting deliveries of devices that are no longer enrolled (inside the removing transaction). */
export async function cancelForDevices(db: Queryable, where: string, params: unknown[], reason: string, now = Date.now()): Promise<void> {
  await db.run(
    `UPDATE deliveries SET state = 'cancelled', last_error = ?, finished_at = ?, updated_at = ?
      WHERE state = 'pending' AND device_id IN (SELECT id FROM devices WHERE ${where})`,
    [reason, now, now, ...params],
  );
}
