import { BlockList, isIP } from 'node:net';
import { parseCidr } from '../dns/acl.js';
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

interface Match {
  tenant: Tenant;
  prefix: number;
  list: BlockList;
  family: 'ipv4' | 'ipv6';
}

function plainIp(ip: string): { ip: string; family: 'ipv4' | 'ipv6' } | undefined {
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return { ip: ip.slice(7), family: 'ipv4' };
  const v = isIP(ip);
  return v ? { ip, family: v === 4 ? 'ipv4' : 'ipv6' } : undefined;
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
  private readonly cache = new Map<string, Tenant | null>();

  constructor(config: GatewayConfig) {
    this.single = !config.tenants;
    this.tenants = config.tenants
      ? config.tenants.map((t) => ({ id: t.id, name: t.name, networks: t.networks, egress: t.egress, seed: t.portal }))
      : [{ id: DEFAULT_TENANT, name: config.portal?.branding.name || config.gateway.hostname, networks: [], egress: [], seed: config.portal ?? defaultSeed() }];
    for (const tenant of this.tenants) {
      for (const cidr of [...tenant.networks, ...tenant.egress]) {
        const c = parseCidr(cidr);
        if (typeof c === 'string') continue; // the schema already refused it
        const list = new BlockList();
        list.addSubnet(c.address, c.prefix, c.family);
        this.matches.push({ tenant, prefix: c.prefix, list, family: c.family });
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
    if (this.single) return this.tenants[0];
    const hit = this.cache.get(address);
    if (hit !== undefined) return hit ?? undefined;
    const p = plainIp(address);
    const found = p ? this.matches.find((m) => m.family === p.family && m.list.check(p.ip, p.family))?.tenant : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(address, found ?? null);
    return found;
  }
}

function defaultSeed(): PortalSeed {
  return { identityMode: 'none', allowedDomains: [], branding: {} };
}
