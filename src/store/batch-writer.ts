import type { Logger } from '../log/index.js';

export interface BatchSink<T> {
  insertMany(records: T[]): Promise<void>;
}

/**
 * Collects records (flows, DNS lookups) and writes them in batches, off the hot path. The queue is
 * bounded: when the store cannot keep up, the oldest records are dropped and counted, never the
 * traffic they describe.
 */
export class BatchWriter<T> {
  private queue: T[] = [];
  private timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  dropped = 0;
  written = 0;

  constructor(
    private readonly what: string,
    private readonly sink: BatchSink<T>,
    private readonly log: Logger,
    private readonly opts = { intervalMs: 1000, batchSize: 500, maxQueue: 20000 },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.intervalMs);
    this.timer.unref();
  }

  record(r: T): void {
    this.queue.push(r);
    if (this.queue.length > this.opts.maxQueue) {
      this.queue.shift();
      this.dropped++;
    }
    if (this.queue.length >= this.opts.batchSize) void this.flush();
  }

  /** Writes everything queued so far; safe to call at any time. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.opts.batchSize);
        try {
          await this.sink.insertMany(batch);
          this.written += batch.length;
        } catch (err) {
          this.queue.unshift(...batch); // keep them for the next try
          this.log.error({ err, pending: this.queue.length }, `cannot write ${this.what} records; will retry`);
          break;
        }
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
