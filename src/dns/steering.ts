import { isIP } from 'node:net';
import type { GatewayConfig } from '../config/index.js';
import { CAPTIVE_PROBE_HOSTS } from '../portal/probes.js';
import { AiCatalog } from './catalog.js';

/** The canaries that turn off Firefox's own DoH and iCloud Private Relay: answered NXDOMAIN. */
export const CANARIES = new Set(['use-application-dns.net', 'mask.icloud.com', 'mask-h2.icloud.com']);

export type SteeringDecision =
  | { kind: 'nxdomain'; reason: 'canary' }
  | { kind: 'local'; addresses: string[]; reason: 'hosts' | 'gateway' }
  | { kind: 'steer'; reason: 'captive' | 'ai'; service?: string }
  | { kind: 'forward'; service?: string };

/** Per-query steering rules, rebuilt from the config on every reload. */
export class Steering {
  readonly catalog: AiCatalog;
  private readonly probeHosts = new Set(CAPTIVE_PROBE_HOSTS);
  private readonly hosts: Map<string, string[]>;

  constructor(private readonly c: GatewayConfig) {
    this.catalog = new AiCatalog(c.dns.aiServices);
    this.hosts = new Map(Object.entries(c.dns.hosts));
  }

  get address(): string {
    return this.c.gateway.address;
  }

  isProbeHost(name: string): boolean {
    return this.c.dns.captive && this.probeHosts.has(name);
  }

  /** True when no rule touches the name and it is no AI name: the cache may answer it directly. */
  isPlain(name: string): boolean {
    return !CANARIES.has(name) && !this.hosts.has(name) && name !== this.c.gateway.hostname && !this.isProbeHost(name) && this.catalog.match(name) === undefined;
  }

  /**
   * Decides for one name. `enrolled` is asked only for captive-probe names, the one rule that
   * depends on who is asking, so ordinary lookups never touch the store.
   */
  async decide(name: string, enrolled: () => Promise<boolean>): Promise<SteeringDecision> {
    if (CANARIES.has(name)) return { kind: 'nxdomain', reason: 'canary' };
    const local = this.hosts.get(name);
    if (local) return { kind: 'local', addresses: local, reason: 'hosts' };
    if (name === this.c.gateway.hostname) return { kind: 'local', addresses: [this.c.gateway.address], reason: 'gateway' };
    if (this.isProbeHost(name) && !(await enrolled())) return { kind: 'steer', reason: 'captive' };
    const service = this.catalog.match(name);
    if (service && this.c.dns.steerAi) return { kind: 'steer', reason: 'ai', service };
    return { kind: 'forward', service };
  }

  /** Addresses of a family for a local or steered name. */
  static ofType(addresses: string[], type: string): string[] {
    const family = type === 'A' ? 4 : type === 'AAAA' ? 6 : 0;
    return addresses.filter((a) => isIP(a) === family);
  }
}
