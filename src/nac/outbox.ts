import type { GatewayConfig, NasConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';
import type { AttemptRecord, Delivery, DeliveryRepository } from '../store/index.js';
import { CoaTimeoutError, RadiusCoaClient, type RadiusAttribute } from './radius.js';
import { WEBHOOK_MAX_ATTEMPTS, postWebhook, retryDelayMs } from './webhook.js';

export interface OutboxDeps {
  deliveries: DeliveryRepository;
  config(): GatewayConfig;
  log: Logger;
  metrics: Metrics;
  /** The tenant's current webhook secret: read at each attempt, so a rotated secret applies to queued deliveries. */
  webhookSecret(tenantId: string): Promise<string | undefined>;
  userAgent: string;
}

const CONCURRENCY = 8;
/** How long a claimed delivery is hidden from other passes; longer than any single attempt. */
const LEASE_MS = 60_000;
/** Re-check the table at least this often, in case a row was added behind the outbox's back. */
const MAX_SLEEP_MS = 30_000;

export function nasTarget(n: { address: string; port: number }): string {
  return n.address.includes(':') ? `[${n.address}]:${n.port}` : `${n.address}:${n.port}`;
}

/**
 * The durable outbox: delivers queued admissions to the customer's network and records every
 * attempt. Deliveries live in the store, so a restart, a crash or a peer outage only delays them.
 */
export class Outbox {
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  readonly coa = new RadiusCoaClient();

  constructor(private readonly deps: OutboxDeps) {}

  start(): void {
    this.wake();
  }

  /** Runs a pass now: called after new deliveries are queued or an admin asks for a retry. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    void this.pass();
  }

  private async pass(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        const due = await this.deps.deliveries.claimDue(Date.now(), CONCURRENCY, LEASE_MS);
        await Promise.all(due.map((d) => this.track(this.attempt(d))));
        if (due.length === CONCURRENCY) this.again = true;
      } while (this.again && !this.stopped);
      const next = await this.deps.deliveries.nextDueAt();
      this.schedule(next === undefined ? MAX_SLEEP_MS : Math.min(Math.max(next - Date.now(), 0), MAX_SLEEP_MS));
    } catch (err) {
      this.deps.log.error({ err }, 'outbox pass failed; trying again shortly');
      this.schedule(5000);
    } finally {
      this.running = false;
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), ms);
    this.timer.unref();
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  private async attempt(d: Delivery): Promise<void> {
    const started = Date.now();
    let record: AttemptRecord;
    try {
      record = d.kind === 'webhook' ? await this.attemptWebhook(d) : await this.attemptCoa(d);
    } catch (err) {
      record = this.retryOrFail(d, 'error', (err as Error).message, Date.now() - started);
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
    if (failures >= WEBHOOK_MAX_ATTEMPTS) return { outcome, detail: `${detail} (gave up after ${failures} attempts)`, durationMs, state: 'failed', nextAttemptAt: Date.now() };
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
      const timeout = err instanceof CoaTimeoutError;
      return this.retryOrFail(d, timeout ? 'timeout' : 'error', (err as Error).message, Date.now() - started);
    }
  }

  /** Stops scheduling and waits (up to waitMs) for attempts in flight; unfinished ones run after the next start. */
  async stop(waitMs = 5000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, waitMs).unref())]);
    await this.coa.close();
  }
}
