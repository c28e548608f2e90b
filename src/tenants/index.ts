import { BlockList } from 'node:net';
import { parseCidr } from '../dns/index.js';
import { normalizeIp } from '../net/index.js';
import type { GatewayConfig, PortalSeed } from '../config/index.js';

/** An organization served by the appliance. Every device, setting and delivery belongs to one. */
export interface Tenant {
  id: string;
  name: string;
  /** Client networks and egress addresses that identify the tenant's devices. */
  networks: string[];
  egress: string[];
  /** Portal settings from the config: they seed the stored settings the admin page edits. */
  seed: PortalSeed;
}

export const DEFAULT_TENANT = 'default';

/**
 * How an address was attributed. 'egress': a NAT address, shared by many devices, so the
 * gateway cannot see the device's own address; 'network': the device's own address;
 * 'default': a single-tenant appliance, where devices are reached directly.
 */
export type MatchedBy = 'network' | 'egress' | 'default';

export interface TenantMatch {
  tenant: Tenant;
  by: MatchedBy;
}

interface Match extends TenantMatch {
  prefix: number;
  list: BlockList;
  family: 'ipv4' | 'ipv6';
}

/**
 * The tenants of the running config and which one an address belongs to. Without a tenants
 * block every address belongs to the one "default" tenant; with one, the most specific network
 * wins and an address outside all of them belongs to no tenant.
 */
export class TenantDirectory {
  readonly single: boolean;
  private readonly tenants: Tenant[];
  private readonly matches: Match[] = [];
  private readonly cache = new Map<string, TenantMatch | null>();

  constructor(config: GatewayConfig) {
    this.single = !config.tenants;
    this.tenants = config.tenants
      ? config.tenants.map((t) => ({ id: t.id, name: t.name, networks: t.networks, egress: t.egress, seed: t.portal }))
      : [{ id: DEFAULT_TENANT, name: config.portal?.branding.name || config.gateway.hostname, networks: [], egress: [], seed: config.portal ?? defaultSeed() }];
    for (const tenant of this.tenants) {
      for (const [by, cidrs] of [['network', tenant.networks], ['egress', tenant.egress]] as const) {
        for (const cidr of cidrs) {
          const c = parseCidr(cidr);
          if (typeof c === 'string') continue; // the schema already refused it
          const list = new BlockList();
          list.addSubnet(c.address, c.prefix, c.family);
          this.matches.push({ tenant, by, prefix: c.prefix, list, family: c.family });
        }
      }
    }
    this.matches.sort((a, b) => b.prefix - a.prefix);
  }

  list(): readonly Tenant[] {
    return this.tenants;
  }

  byId(id: string): Tenant | undefined {
    return this.tenants.find((t) => t.id === id);
  }

  /** The tenant a client address belongs to, or undefined when it is in none of their networks. */
  forAddress(address: string): Tenant | undefined {
    return this.match(address)?.tenant;
  }

  /** The tenant and how the address matched it (its own network, or a shared egress address). */
  match(address: string): TenantMatch | undefined {
    if (this.single) return { tenant: this.tenants[0], by: 'default' };
    const hit = this.cache.get(address);
    if (hit !== undefined) return hit ?? undefined;
    const ip = normalizeIp(address);
    const family = ip.includes(':') ? 'ipv6' : 'ipv4';
    const found = this.matches.find((m) => m.family === family && m.list.check(ip, family));
    const result = found ? { tenant: found.tenant, by: found.by } : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(address, result ?? null);
    return result;
  }
}

function defaultSeed(): PortalSeed {
  return { identityMode: 'none', allowedDomains: [], branding: {} };
}
