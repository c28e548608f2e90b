import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** Values read only when Prometheus scrapes, set by the daemon once the parts exist. */
export interface MetricSources {
  flowsDropped(): number;
  leafStats(): { memoryHits: number; diskHits: number; minted: number };
  dnsCounts(): Map<string, number>;
  dnsCache(): { entries: number; hits: number; misses: number; stale: number; upstreamQueries: number; upstreamFailures: number };
  deliveries(): Promise<Record<string, number>>;
}

/** The daemon's Prometheus metrics, one registry per daemon so tests can run several. */
export class Metrics {
  readonly registry = new Registry();
  sources: MetricSources = { flowsDropped: () => 0, leafStats: () => ({ memoryHits: 0, diskHits: 0, minted: 0 }),
    dnsCounts: () => new Map(),
    dnsCache: () => ({ entries: 0, hits: 0, misses: 0, stale: 0, upstreamQueries: 0, upstreamFailures: 0 }),
    deliveries: async () => ({}),
  };
  readonly connections = new Counter({
    name: 'gatewayd_tls_connections_total',
    help: 'Connections accepted on the TLS listener, by route and outcome',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly activeConnections = new Gauge({
    name: 'gatewayd_tls_active_connections',
    help: 'Connections currently open on the TLS listener',
    registers: [this.registry],
  });
  readonly relayedBytes = new Counter({
    name: 'gatewayd_relayed_bytes_total',
    help: 'Bytes relayed by passthrough, by direction',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'gatewayd_http_requests_total',
    help: 'HTTP requests answered, by listener and status class',
    labelNames: ['listener', 'status'] as const,
    registers: [this.registry],
  });
  readonly flowsDropped: Gauge = new Gauge({
    name: 'gatewayd_flow_records_dropped',
    help: 'Flow records dropped because the store could not keep up',
    registers: [this.registry],
    collect: (): void => this.flowsDropped.set(this.sources.flowsDropped()),
  });
  readonly leafCerts: Gauge<"source"> = new Gauge({
    name: 'gatewayd_leaf_certificates',
    help: 'Leaf certificate lookups since start, by source',
    labelNames: ['source'] as const,
    registers: [this.registry],
    collect: (): void => {
      const s = this.sources.leafStats();
      this.leafCerts.set({ source: 'memory' }, s.memoryHits);
      this.leafCerts.set({ source: 'disk' }, s.diskHits);
      this.leafCerts.set({ source: 'minted' }, s.minted);
    },
  });
  readonly dnsQueries: Counter<'transport' | 'result'> = new Counter({
    name: 'gatewayd_dns_queries_total',
    help: 'DNS queries answered, by transport and result (cache, upstream, stale, steered-*, local, blocked, refused, ...)',
    labelNames: ['transport', 'result'] as const,
    registers: [this.registry],
    collect: (): void => {
      this.dnsQueries.reset();
      for (const [key, n] of this.sources.dnsCounts()) {
        const [transport, result] = key.split('|');
        this.dnsQueries.inc({ transport, result }, n);
      }
    },
  });
  readonly dnsCache: Gauge<'stat'> = new Gauge({
    name: 'gatewayd_dns_cache',
    help: 'DNS cache and upstream figures since start: entries, hits, misses, stale answers served, upstream queries and failures',
    labelNames: ['stat'] as const,
    registers: [this.registry],
    collect: (): void => {
      for (const [stat, v] of Object.entries(this.sources.dnsCache())) this.dnsCache.set({ stat }, v);
    },
  });
  readonly deliveryAttempts = new Counter({
    name: 'gatewayd_admission_attempts_total',
    help: 'Admission deliveries attempted (admit webhook, RADIUS CoA), by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly deliveries: Gauge<'state'> = new Gauge({
    name: 'gatewayd_admission_deliveries',
    help: 'Admission deliveries in the outbox, by state (pending ones are waiting to be sent or retried)',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: async (): Promise<void> => {
      for (const [state, n] of Object.entries(await this.sources.deliveries())) this.deliveries.set({ state }, n);
    },
  });
  readonly enrollments = new Counter({
    name: 'gatewayd_enrollments_total',
    help: 'Devices enrolled through the portal, by identity mode',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });
  readonly configReloads = new Counter({
    name: 'gatewayd_config_reloads_total',
    help: 'Config reloads on SIGHUP, by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gatewayd_' });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
