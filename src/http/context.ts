import type { GatewayConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { SecureContext } from 'node:tls';
import type { CertificateAuthority } from '../tls/index.js';
import type { TenantDirectory } from '../tenants/index.js';

/** The certificate served for the gateway's own names. */
export interface OwnCertificate {
  cert: string | Buffer;
  key: string | Buffer;
  context: SecureContext;
}

/** What every feature's routes may use. Config is a getter: it changes on reload. */
export interface GatewayContext {
  config(): GatewayConfig;
  /** The https port clients use to reach the gateway (publicPort, else the bound port). */
  publicHttpsPort(): number;
  log: Logger;
  metrics: Metrics;
  store: Store;
  ca: CertificateAuthority;
  startedAt: number;
  version: string;
  /** Whether the device at this address has enrolled (portal); false until enrollment exists. */
  isEnrolled(clientIp: string): Promise<boolean>;
  /** The tenants of the running config, and which one an address belongs to. */
  tenants(): TenantDirectory;
  /** The admission outbox: wake it after queueing deliveries so they go out at once. */
  outbox: { wake(): void };
}

/** https://<gateway.hostname>[:port]<path> */
export function gatewayUrl(ctx: GatewayContext, path: string): string {
  const port = ctx.publicHttpsPort();
  return `https://${ctx.config().gateway.hostname}${port === 443 ? '' : `:${port}`}${path}`;
}
