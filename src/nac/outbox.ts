import type { GatewayConfig, NasConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';
import type { AttemptRecord, Delivery, DeliveryRepository } from '../store/index.js';
import { CoaRequestError, CoaTimeoutError, RadiusCoaClient, retransmitDelay, type RadiusAttribute } from './radius.js';
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_TIMEOUT_MS, postWebhook, retryDelayMs } from './webhook.js';

export interface OutboxDeps {
  deliveries: DeliveryRepository;
  config(): GatewayConfig;
  log: Logger;
  metrics: Metrics;
  /** The tenant's current webhook secret: read at each attempt, so a rotated secret applies to queued deliveries. */
  webhookSecret(tenantId: string): Promise<string | undefined>;
  userAgent: string;
}

/** Attempts in flight at once, and at most this many to one target (a slow peer cannot hold every slot). */
const CONCURRENCY = 8;
/** Webhooks and CoA share one retry schedule (webhook.ts): about 36 h of attempts. */
const MAX_ATTEMPTS = WEBHOOK_MAX_ATTEMPTS;
const PER_TARGET = 2;
/** Re-check the table at least this often, in case a row was added behind the outbox's back. */
const MAX_SLEEP_MS = 30_000;

export function nasTarget(n: { address: string; port: number }): string {
  return n.address.includes(':') ? `[${n.address}]:${n.port}` : `${n.address}:${n.port}`;
}

/**
 * The durable outbox: delivers queued admissions to the customer's network and records every
 * attempt. Deliveries live in the store, so a restart, a crash or a peer outage only delays them.
 * Attempts run in up to CONCURRENCY slots; a freed slot is refilled at once.
 */
export class Outbox {
  private timer?: NodeJS.Timeout;
  private filling?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly inFlight = new Map<string, { target: string; done: Promise<void> }>();
  readonly coa = new RadiusCoaClient();

  constructor(private readonly deps: OutboxDeps) {}

  start(): void {
    this.wake();
  }

  /** Claims due deliveries into free slots: after new ones are queued, an attempt ends, or an admin asks for a retry. */
  wake(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    this.filling = this.fill().finally(() => {
      this.filling = undefined;
      // A wake-up that came while the pass was ending is not lost.
      if (this.again && !this.stopped) queueMicrotask(() => this.wake());
    });
  }

  /** Longer than any one attempt can take (a NAS gets timeoutMs per datagram), so a live attempt is never picked twice. */
  private leaseMs(): number {
    const total = (n: NasConfig) => Array.from({ length: n.retries + 1 }, (_, i) => retransmitDelay(n.timeoutMs, i + 1)).reduce((a, b) => a + b, 0);
    const coa = Math.max(0, ...this.deps.config().nac.coa.map(total));
    return Math.max(WEBHOOK_TIMEOUT_MS, coa) + 30_000;
  }

  private perTarget(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const f of this.inFlight.values()) counts.set(f.target, (counts.get(f.target) ?? 0) + 1);
    return counts;
  }

  private async fill(): Promise<void> {
    try {
      do {
        this.again = false;
        const free = CONCURRENCY - this.inFlight.size;
        if (free <= 0) break;
        const due = await this.deps.deliveries.claimDue(Date.now(), free, this.leaseMs(), PER_TARGET, this.perTarget());
        if (this.stopped) {
          // Stopping: what was just claimed goes back untouched, for the next start.
          await Promise.all(due.map((d) => this.deps.deliveries.handBack(d.id)));
          return;
        }
        for (const d of due) {
          const done = this.attempt(d).finally(() => {
            this.inFlight.delete(d.id);
            this.wake();
          });
          this.inFlight.set(d.id, { target: d.target, done });
        }
        if (due.length === free) this.again = true;
      } while (this.again && !this.stopped);
      const busy = [...this.perTarget()].filter(([, n]) => n >= PER_TARGET).map(([target]) => target);
      const next = await this.deps.deliveries.nextDueAt(busy);
      this.schedule(next === undefined ? MAX_SLEEP_MS : Math.min(Math.max(next - Date.now(), 0), MAX_SLEEP_MS));
    } catch (err) {
      this.deps.log.error({ err }, 'outbox pass failed; trying again shortly');
      this.schedule(5000);
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), Math.max(ms, 50));
    this.timer.unref();
  }

  /** One attempt, recorded. Never rejects: a failure to record is logged and the lease brings the delivery back. */
  private async attempt(d: Delivery): Promise<void> {
    try {
      await this.attemptAndRecord(d);
    } catch (err) {
      this.deps.log.error({ err, delivery: d.id }, 'could not record an admission attempt; it will be tried again');
    }
  }

  private async attemptAndRecord(d: Delivery): Promise<void> {
    const started = Date.now();
    let record: AttemptRecord;
    try {
      record = d.kind === 'webhook' ? await this.attemptWebhook(d) : await this.attemptCoa(d);
    } catch (err) {
      record = this.retryOrFail(d, 'error', (err as Error).message, Date.now() - started);
    }
    if (this.stopped && record.state === 'pending') {
      // Cut short by the stop (the CoA client closed under it): not the peer's fault, not an attempt.
      await this.deps.deliveries.handBack(d.id);
      return;
    }
    const { log, metrics } = this.deps;
    metrics.deliveryAttempts.inc({ kind: d.kind, outcome: record.outcome });
    const fields = { delivery: d.id, tenant: d.tenantId, kind: d.kind, target: d.target, attempt: d.attempts + 1, outcome: record.outcome, state: record.state };
    if (record.state === 'delivered') log.info(fields, 'admission delivered');
    else if (record.state === 'pending') log.warn({ ...fields, error: record.detail, nextAttemptAt: new Date(record.nextAttemptAt).toISOString() }, 'admission attempt failed; will retry');
    else log.error({ ...fields, error: record.detail }, 'admission delivery stopped');
    await this.deps.deliveries.recordAttempt(d.id, record);
  }

  private retryOrFail(d: Delivery, outcome: string, detail: string, durationMs: number, retryAfterMs?: number): AttemptRecord {
    const failures = d.attempts + 1;
    if (failures >= MAX_ATTEMPTS) return { outcome, detail: `${detail} (gave up after ${failures} attempts)`, durationMs, state: 'failed', nextAttemptAt: Date.now() };
    return { outcome, detail, durationMs, state: 'pending', nextAttemptAt: Date.now() + retryDelayMs(failures, retryAfterMs) };
  }

  private async attemptWebhook(d: Delivery): Promise<AttemptRecord> {
    const secret = await this.deps.webhookSecret(d.tenantId);
    if (!secret) return { outcome: 'error', detail: 'the tenant has no admitWebhookSecret any more', durationMs: 0, state: 'failed', nextAttemptAt: Date.now() };
    const r = await postWebhook({ url: d.target, secret, body: d.payload, deliveryId: d.id, event: 'device.admit', userAgent: this.deps.userAgent });
    if (r.outcome === 'delivered') return { outcome: 'delivered', detail: `HTTP ${r.status}`, durationMs: r.durationMs, state: 'delivered', nextAttemptAt: Date.now() };
    if (r.outcome === 'gone') return { outcome: 'gone', detail: r.error, durationMs: r.durationMs, state: 'gone', nextAttemptAt: Date.now() };
    return this.retryOrFail(d, r.status ? `http-${r.status}` : 'network', r.error, r.durationMs, r.retryAfterMs);
  }

  private nasFor(d: Delivery): NasConfig | undefined {
    return this.deps.config().nac.coa.find((n) => nasTarget(n) === d.target);
  }

  private async attemptCoa(d: Delivery): Promise<AttemptRecord> {
    const nas = this.nasFor(d);
    if (!nas) return { outcome: 'error', detail: `NAS ${d.target} is no longer in nac.coa`, durationMs: 0, state: 'failed', nextAttemptAt: Date.now() };
    const { attributes } = JSON.parse(d.payload) as { attributes: RadiusAttribute[] };
    if (attributes.length === 0) {
      return { outcome: 'error', detail: `nothing identifies the device's session to this NAS: the portal knows none of ${nas.attributes.join(', ')}`, durationMs: 0, state: 'failed', nextAttemptAt: Date.now() };
    }
    const started = Date.now();
    try {
      const r = await this.coa.send({
        address: nas.address, port: nas.port, secret: nas.secret, kind: d.kind === 'disconnect' ? 'disconnect' : 'coa',
        attributes, timeoutMs: nas.timeoutMs, retries: nas.retries,
      });
      if (r.outcome === 'ack') return { outcome: 'ack', detail: `${r.code} in ${r.rttMs} ms after ${r.attempts} datagram(s)`, durationMs: Date.now() - started, state: 'delivered', nextAttemptAt: Date.now() };
      // A NAK is the NAS's considered answer (no such session, not allowed): repeating it will not help.
      const cause = r.errorCause !== undefined ? ` Error-Cause ${r.errorCause}${r.errorCauseText ? ` ${r.errorCauseText}` : ''}` : ' (no Error-Cause)';
      return { outcome: 'nak', detail: `${r.code}${cause}${r.replyMessage ? `: ${r.replyMessage}` : ''}`, durationMs: Date.now() - started, state: 'failed', nextAttemptAt: Date.now() };
    } catch (err) {
      // A request that cannot be encoded will not encode tomorrow either.
      if (err instanceof CoaRequestError) return { outcome: 'error', detail: err.message, durationMs: 0, state: 'failed', nextAttemptAt: Date.now() };
      const timeout = err instanceof CoaTimeoutError;
      return this.retryOrFail(d, timeout ? 'timeout' : 'error', (err as Error).message, Date.now() - started);
    }
  }

  /** Stops scheduling and waits (up to waitMs) for attempts in flight; unfinished ones run after the next start. */
  async stop(waitMs = 5000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.filling;
    const settled = (ms: number) =>
      Promise.race([Promise.allSettled([...this.inFlight.values()].map((f) => f.done)), new Promise((r) => setTimeout(r, ms).unref())]);
    await settled(waitMs);
    // CoA requests still retransmitting are cut short; their deliveries are handed back, not counted.
    await this.coa.close();
    await settled(1000);
  }
}
