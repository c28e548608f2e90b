import { readFileSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type GatewayConfig, type HostPort } from '../config/index.js';
import { DnsServer, DnsService, registerDoh } from '../dns/index.js';
import { createGatewayApp, createMetricsApp, createPlainApp, type GatewayContext, type OwnCertificate } from '../http/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { Metrics } from '../metrics/index.js';
import { SniRouter, TlsListener, normalizeIp, type RelaySettings } from '../net/index.js';
import { BatchWriter, openStore, type DnsLookup, type FlowRecord, type Store } from '../store/index.js';
import { CertificateAuthority, LeafService } from '../tls/index.js';
import { TenantDirectory } from '../tenants/index.js';
import { Outbox } from '../nac/index.js';
import { portalView } from '../portal/index.js';
import { bootstrapAdmin } from './admin-bootstrap.js';
import { explainBindError } from './bind-errors.js';
import { VERSION } from './version.js';

export { VERSION } from './version.js';

export interface BoundAddresses {
  https: AddressInfo;
  dns?: AddressInfo;
  http?: AddressInfo;
  metrics?: AddressInfo;
}

/** Settings that only a restart can change; a reload that changes them says so. */
function restartOnly(c: GatewayConfig): string {
  return JSON.stringify([c.listen, c.dataDir]);
}

/** The running appliance: wires config, store, CA, listeners and HTTP apps together. */
export class Daemon {
  private config: GatewayConfig;
  private router!: SniRouter;
  private ownCert!: OwnCertificate;
  private tlsListener!: TlsListener;
  private gatewayApp!: FastifyInstance;
  private plainApp?: FastifyInstance;
  private metricsServer?: FastifyInstance;
  private flows!: BatchWriter<FlowRecord>;
  private lookups!: BatchWriter<DnsLookup>;
  private dns!: DnsService;
  private dnsServer?: DnsServer;
  private leaves!: LeafService;
  private stopping = false;
  private maintenance?: NodeJS.Timeout;
  private tenants: TenantDirectory;
  readonly outbox: Outbox;
  readonly ctx: GatewayContext;
  bound!: BoundAddresses;

  private constructor(
    private readonly configFile: string,
    config: GatewayConfig,
    readonly log: Logger,
    readonly store: Store,
    readonly ca: CertificateAuthority,
  ) {
    this.config = config;
    this.tenants = new TenantDirectory(config);
    const metrics = new Metrics();
    this.ctx = {
      config: () => this.config,
      publicHttpsPort: () => this.config.gateway.publicPort ?? this.bound?.https.port ?? this.config.listen.https.port,
      log,
      metrics,
      store,
      ca,
      startedAt: Date.now(),
      version: VERSION,
      isEnrolled: (ip) => store.devices.isEnrolledIp(normalizeIp(ip)),
      tenants: () => this.tenants,
      outbox: { wake: () => this.outbox.wake() },
    };
    this.outbox = new Outbox({
      deliveries: store.deliveries,
      config: () => this.config,
      log,
      metrics,
      userAgent: `gatewayd/${VERSION}`,
      webhookSecret: async (tenantId) => {
        const tenant = this.tenants.byId(tenantId);
        return tenant ? ((await portalView(this.ctx, tenant)).webhookSecret ?? undefined) : undefined;
      },
    });
  }

  static async start(configFile: string, logDestination?: Parameters<typeof createLogger>[1]): Promise<Daemon> {
    const { file, config } = loadConfig(configFile);
    const log = createLogger(config.log.level, logDestination);
    const store = await openStore(config.dataDir);
    try {
      const { ca, created } = CertificateAuthority.loadOrCreate(config.dataDir, `gatewayd CA (${config.gateway.hostname})`);
      if (created) log.info({ dir: CertificateAuthority.paths(config.dataDir).dir }, 'created the gateway CA');
      await bootstrapAdmin(store, config.dataDir, log);
      const daemon = new Daemon(file, config, log, store, ca);
      await daemon.listen();
      return daemon;
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  }

  private relaySettings(): RelaySettings {
    return { ...this.config.relay, passthroughPort: this.config.tls.passthroughPort };
  }

  private buildRouter(c: GatewayConfig): SniRouter {
    return new SniRouter({ ownNames: [c.gateway.hostname, ...c.gateway.aliases], routes: c.tls.routes });
  }

  /** The certificate for the gateway's own name: the operator's pair, else one minted by our CA. */
  private loadOwnCert(c: GatewayConfig): OwnCertificate {
    if (c.gateway.certFile && c.gateway.keyFile) {
      try {
        const pair = { cert: readFileSync(c.gateway.certFile), key: readFileSync(c.gateway.keyFile) };
        return { ...pair, context: createSecureContext(pair) };
      } catch (err) {
        throw new ConfigError([{ file: this.configFile, key: 'gateway.certFile', message: `cannot load the certificate pair: ${(err as Error).message}` }]);
      }
    }
    const leaf = this.leaves.leafFor(c.gateway.hostname, [...c.gateway.aliases, c.gateway.address]);
    return { cert: leaf.certPem, key: leaf.keyPem, context: leaf.context };
  }

  private async listen(): Promise<void> {
    const c = this.config;
    const { log, metrics } = this.ctx;
    this.leaves = new LeafService(this.ca, c.dataDir, c.tls.leafLifetimeDays);
    this.ownCert = this.loadOwnCert(c);
    this.router = this.buildRouter(c);
    this.flows = new BatchWriter('flow', this.store.flows, log);
    this.lookups = new BatchWriter('DNS lookup', this.store.dnsLookups, log);
    this.dns = new DnsService(c, { log, lookups: this.lookups, isEnrolled: this.ctx.isEnrolled, tenantOf: (ip) => this.tenants.forAddress(ip)?.id ?? null });
    this.gatewayApp = await createGatewayApp(this.ctx, () => this.ownCert, [(app) => registerDoh(app, this.dns)]);
    const tlsServer = this.gatewayApp.server as unknown as Server;
    this.tlsListener = new TlsListener({
      log,
      metrics,
      flows: this.flows,
      router: () => this.router,
      settings: () => this.relaySettings(),
      // Passthrough asks the upstreams (through the shared cache), never our own steering.
      resolve: (name) => this.dns.forwarder.resolveAddress(name),
      terminate: (socket) => tlsServer.emit('connection', socket),
    });
    metrics.sources = {
      flowsDropped: () => this.flows.dropped + this.lookups.dropped,
      leafStats: () => this.leaves.stats,
      dnsCounts: () => this.dns.counts,
      deliveries: () => this.store.deliveries.counts(),
      dnsCache: () => {
        const f = this.dns.forwarder;
        return { entries: f.cache.size, hits: f.cache.hits, misses: f.cache.misses, stale: f.cache.staleServed, upstreamQueries: f.upstreamQueries, upstreamFailures: f.upstreamFailures };
      },
    };

    const bind = async <T>(what: string, at: HostPort, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        throw explainBindError(err as NodeJS.ErrnoException, what, at);
      }
    };
    try {
      const https = await bind('https', c.listen.https, () => this.tlsListener.listen(c.listen.https));
      this.bound = { https };
      this.dnsServer = new DnsServer(this.dns, log);
      const dns = this.dnsServer;
      this.bound.dns = (await bind('dns', c.listen.dns, () => dns.listen(c.listen.dns))).udp;
      if (c.listen.http) {
        const at = c.listen.http;
        this.plainApp = await createPlainApp(this.ctx);
        await bind('http', at, () => this.plainApp!.listen({ host: at.host, port: at.port }));
        this.bound.http = this.plainApp.server.address() as AddressInfo;
      }
      if (c.listen.metrics) {
        const at = c.listen.metrics;
        this.metricsServer = await createMetricsApp(this.ctx);
        await bind('metrics', at, () => this.metricsServer!.listen({ host: at.host, port: at.port }));
        this.bound.metrics = this.metricsServer.server.address() as AddressInfo;
      }
    } catch (err) {
      await this.stop(0);
      throw err;
    }
    this.outbox.start();
    this.maintenance = setInterval(() => void this.housekeeping(), 3600e3);
    this.maintenance.unref();
    void this.housekeeping();
    for (const [listener, a] of Object.entries(this.bound)) {
      log.info({ listener, address: a.address, port: a.port }, 'listening');
    }
  }

  /** Hourly: drop flow records past retention and expired admin sessions. */
  private async housekeeping(): Promise<void> {
    try {
      const cutoff = Date.now() - this.config.retention.flowDays * 86400e3;
      const flows = await this.store.flows.pruneOlderThan(cutoff);
      const lookups = await this.store.dnsLookups.pruneOlderThan(Date.now() - this.config.retention.dnsLookupDays * 86400e3);
      const sessions = await this.store.sessions.deleteExpired();
      const codes = await this.store.otp.pruneOlderThan(Date.now() - 86400e3);
      const signIns = await this.store.ssoLogins.pruneOlderThan(Date.now() - 3600e3);
      if (flows || lookups || sessions || codes || signIns) this.ctx.log.info({ flows, lookups, sessions, codes, signIns }, 'pruned old records');
    } catch (err) {
      this.ctx.log.error({ err }, 'housekeeping failed');
    }
  }

  /** Re-reads the config; a bad file keeps the running config and says why. */
  async reload(): Promise<boolean> {
    const { log, metrics } = this.ctx;
    let next: GatewayConfig;
    try {
      next = loadConfig(this.configFile).config;
      const ownCert = this.loadOwnCert(next);
      if (restartOnly(next) !== restartOnly(this.config)) {
        log.warn('listen addresses and dataDir change only on restart; the rest of the new config is applied');
        next = { ...next, listen: this.config.listen, dataDir: this.config.dataDir };
      }
      this.ownCert = ownCert;
      // The default context serves clients that send no SNI; SNICallback reads ownCert per handshake.
      (this.gatewayApp.server as unknown as TlsServer).setSecureContext({ cert: ownCert.cert, key: ownCert.key });
    } catch (err) {
      const problems = err instanceof ConfigError ? err.message.split('\n') : [(err as Error).message];
      log.error({ problems }, 'config reload failed; the previous config stays in effect');
      metrics.configReloads.inc({ result: 'failed' });
      return false;
    }
    this.config = next;
    this.tenants = new TenantDirectory(next);
    this.router = this.buildRouter(next);
    this.dns.update(next);
    log.level = next.log.level;
    metrics.configReloads.inc({ result: 'ok' });
    log.info({ routes: next.tls.routes.length }, 'config reloaded');
    return true;
  }

  /** Stops accepting, lets open connections finish for up to drainMs, flushes records and closes the store. */
  async stop(drainMs = this.config.relay.drainTimeoutSec * 1000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.maintenance);
    const { log } = this.ctx;
    log.info({ drainMs, open: this.tlsListener?.activeConnections ?? 0 }, 'stopping: draining connections');
    await Promise.allSettled([
      this.plainApp?.close(),
      this.metricsServer?.close(),
      this.dnsServer?.close(),
      this.tlsListener?.listening ? this.tlsListener.close(drainMs) : undefined,
    ]);
    await this.gatewayApp?.close().catch(() => undefined);
    await this.outbox.stop();
    await this.flows?.close();
    await this.lookups?.close();
    await this.store.close().catch((err) => log.error({ err }, 'closing the store failed'));
    log.info('stopped');
    log.flush();
  }
}
