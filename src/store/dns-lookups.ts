import type { Db } from './db.js';

export interface DnsLookup {
  at: number;
  clientIp: string;
  tenantId: string | null;
  name: string;
  qtype: string;
  service: string;
  transport: string;
  steered: boolean;
}

/** Lookups of AI-service names: who asked for which service, and when. */
export class DnsLookupRepository {
  constructor(private readonly db: Db) {}

  async insertMany(records: DnsLookup[]): Promise<void> {
    await this.db.insertRows(
      'dns_lookups',
      ['at', 'client_ip', 'tenant_id', 'name', 'qtype', 'service', 'transport', 'steered'],
      records.map((r) => [r.at, r.clientIp, r.tenantId, r.name, r.qtype, r.service, r.transport, r.steered ? 1 : 0]),
    );
  }

  async recent(limit = 100): Promise<DnsLookup[]> {
    const rows = await this.db.all<Record<string, unknown>>(
      'SELECT at, client_ip, tenant_id, name, qtype, service, transport, steered FROM dns_lookups ORDER BY id DESC LIMIT ?',
      [Math.min(Math.max(limit, 1), 1000)],
    );
    return rows.map((r) => ({
      at: r.at as number,
      clientIp: r.client_ip as string,
      tenantId: r.tenant_id as string | null,
      name: r.name as string,
      qtype: r.qtype as string,
      service: r.service as string,
      transport: r.transport as string,
      steered: r.steered === 1,
    }));
  }

  async pruneOlderThan(cutoffMs: number): Promise<number> {
    return (await this.db.run('DELETE FROM dns_lookups WHERE at < ?', [cutoffMs])).changes;
  }
}
