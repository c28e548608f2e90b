import type { HostPort, SniRoute } from '../config/index.js';

/** What the 443 listener does with one connection. */
export type RouteDecision =
  | { kind: 'terminate' }
  | { kind: 'intercept'; sni: string }
  | { kind: 'passthrough'; sni: string; to: HostPort | null }; // to null: resolve sni upstream

/** Says whether a connection to an AI service should be intercepted; filled by content inspection. */
export type InterceptPolicy = (sni: string, clientIp: string) => boolean;

export interface RouterOptions {
  ownNames: string[];
  routes: SniRoute[];
  intercept?: InterceptPolicy;
}

/** Decides terminate | intercept | passthrough from the SNI; static routes come before DNS. */
export class SniRouter {
  private readonly own: Set<string>;
  private readonly exact = new Map<string, HostPort>();
  private readonly wildcards: { suffix: string; to: HostPort }[] = [];

  constructor(private readonly opts: RouterOptions) {
    this.own = new Set(opts.ownNames.map((n) => n.toLowerCase()));
    for (const r of opts.routes) {
      if (r.sni.startsWith('*.')) this.wildcards.push({ suffix: r.sni.slice(1), to: r.to });
      else this.exact.set(r.sni, r.to);
    }
    this.wildcards.sort((a, b) => b.suffix.length - a.suffix.length); // most specific first
  }

  decide(sni: string | null, clientIp: string): RouteDecision {
    if (sni === null || this.own.has(sni)) return { kind: 'terminate' };
    const staticTo = this.exact.get(sni) ?? this.wildcards.find((w) => sni.endsWith(w.suffix))?.to;
    if (staticTo) return { kind: 'passthrough', sni, to: staticTo };
    if (this.opts.intercept?.(sni, clientIp)) return { kind: 'intercept', sni };
    return { kind: 'passthrough', sni, to: null };
  }
}
