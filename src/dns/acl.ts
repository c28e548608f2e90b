import { BlockList, isIP } from 'node:net';

/** Loopback and the private ranges: the default clients of an on-prem resolver. */
export const DEFAULT_CLIENT_NETWORKS = [
  '127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16',
  '::1/128', 'fc00::/7', 'fe80::/10',
];

/** Parses "addr/prefix" (or a bare address); returns an error text when it is not one. */
export function parseCidr(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | string {
  const [address, prefixText] = cidr.split('/');
  const v = isIP(address);
  if (!v) return `"${address}" is not an IP address`;
  const max = v === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max) return `"/${prefixText}" is not a prefix length from 0 to ${max}`;
  return { address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** Which clients may use the resolver: not an open resolver. */
export class ClientAcl {
  private readonly list = new BlockList();
  private readonly seen = new Map<string, boolean>(); // BlockList.check parses the address each time

  constructor(networks: string[]) {
    for (const n of networks) {
      const c = parseCidr(n);
      if (typeof c === 'string') throw new Error(c);
      this.list.addSubnet(c.address, c.prefix, c.family);
    }
  }

  allows(ip: string): boolean {
    let ok = this.seen.get(ip);
    if (ok === undefined) {
      ok = this.check(ip);
      if (this.seen.size > 10_000) this.seen.clear();
      this.seen.set(ip, ok);
    }
    return ok;
  }

  private check(ip: string): boolean {
    const v = isIP(ip);
    if (!v) return false;
    // IPv4-mapped IPv6 (dual-stack sockets) is checked as IPv4.
    if (v === 6 && ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return this.list.check(ip.slice(7), 'ipv4');
    return this.list.check(ip, v === 4 ? 'ipv4' : 'ipv6');
  }
}

/** Token bucket per client address; a client over its rate is answered no more until it slows. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private qps: number, private burst: number) {}

  update(qps: number, burst: number): void {
    this.qps = qps;
    this.burst = burst;
  }

  allow(ip: string, now = Date.now()): boolean {
    if (this.qps <= 0) return true;
    let b = this.buckets.get(ip);
    if (!b) {
      if (this.buckets.size > 100_000) this.sweep(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(ip, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.qps);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Forgets clients whose bucket has refilled: they cost nothing to recreate. */
  sweep(now = Date.now()): void {
    for (const [ip, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.qps >= this.burst) this.buckets.delete(ip);
  }
}
