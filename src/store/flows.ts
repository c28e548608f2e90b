import type { Db } from './db.js';

export interface FlowRecord {
  startedAt: number;
  clientIp: string;
  clientPort: number;
  sni: string | null;
  route: string;
  destination: string | null;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
  outcome: string;
}

export interface FlowQuery {
  limit?: number;
  sni?: string;
}

export class FlowRepository {
  constructor(private readonly db: Db) {}

  /** Writes many records in one transaction: one fsync for a whole batch. */
  async insertMany(records: FlowRecord[]): Promise<void> {
    await this.db.insertRows(
      'flows',
      ['started_at', 'client_ip', 'client_port', 'sni', 'route', 'destination', 'bytes_up', 'bytes_down', 'duration_ms', 'outcome'],
      records.map((r) => [r.startedAt, r.clientIp, r.clientPort, r.sni, r.route, r.destination, r.bytesUp, r.bytesDown, r.durationMs, r.outcome]),
    );
  }

  async recent(q: FlowQuery = {}): Promise<FlowRecord[]> {
    const limit = Math.min(Math.max(q.limit ?? 100, 1), 1000);
    const rows = await this.db.all<Record<string, unknown>>(
      `SELECT started_at, client_ip, client_port, sni, route, destination, bytes_up, bytes_down, duration_ms, outcome
         FROM flows ${q.sni ? 'WHERE sni = ?' : ''} ORDER BY id DESC LIMIT ?`,
      q.sni ? [q.sni, limit] : [limit],
    );
    return rows.map((r) => ({
      startedAt: r.started_at as number,
      clientIp: r.client_ip as string,
      clientPort: r.client_port as number,
      sni: r.sni as string | null,
      route: r.route as string,
      destination: r.destination as string | null,
      bytesUp: r.bytes_up as number,
      bytesDown: r.bytes_down as number,
      durationMs: r.duration_ms as number,
      outcome: r.outcome as string,
    }));
  }

  async pruneOlderThan(cutoffMs: number): Promise<number> {
    return (await this.db.run('DELETE FROM flows WHERE started_at < ?', [cutoffMs])).changes;
  }
}
