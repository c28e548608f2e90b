import { LRUCache } from 'lru-cache';
import type { Answer } from 'dns-packet';

export interface CacheSettings {
  maxEntries: number;
  minTtl: number;
  maxTtl: number;
  negativeMaxTtl: number;
  staleSeconds: number;
}

/** An upstream answer as kept in the cache: the sections and how long they live. */
export interface CachedAnswer {
  rcode: string;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  storedAt: number;
  ttl: number; // seconds, after floor and ceiling
}

export interface CacheHit {
  entry: CachedAnswer;
  /** Seconds left; negative when the entry is stale. */
  remaining: number;
}

type WithTtl = Answer & { ttl?: number; data?: unknown };

/**
 * TTL for an answer: positive answers live as long as their shortest record (floor minTtl, ceiling
 * maxTtl); NXDOMAIN and NODATA as long as the SOA says (RFC 2308: min of its TTL and MINIMUM),
 * capped by negativeMaxTtl. A negative answer without SOA is not cached, nor are failures.
 */
export function cacheTtl(rcode: string, answers: Answer[], authorities: Answer[], s: CacheSettings): number | undefined {
  if (rcode === 'NOERROR' && answers.length > 0) {
    const min = Math.min(...(answers as WithTtl[]).map((a) => a.ttl ?? 0));
    return Math.min(Math.max(min, s.minTtl), s.maxTtl);
  }
  if (rcode === 'NXDOMAIN' || (rcode === 'NOERROR' && answers.length === 0)) {
    const soa = (authorities as WithTtl[]).find((a) => a.type === 'SOA');
    if (!soa) return undefined;
    const minimum = (soa.data as { minimum?: number } | undefined)?.minimum ?? 0;
    return Math.min(Math.max(Math.min(soa.ttl ?? 0, minimum), s.minTtl), s.negativeMaxTtl);
  }
  return undefined;
}

export class DnsCache {
  private lru: LRUCache<string, CachedAnswer>;
  hits = 0;
  misses = 0;
  staleServed = 0;

  constructor(private settings: CacheSettings) {
    this.lru = new LRUCache({ max: settings.maxEntries });
  }

  update(settings: CacheSettings): void {
    if (settings.maxEntries !== this.settings.maxEntries) this.lru = new LRUCache({ max: settings.maxEntries });
    this.settings = settings;
  }

  get size(): number {
    return this.lru.size;
  }

  /** A fresh entry, or a stale one still within staleSeconds (the caller decides whether to use it). */
  get(key: string, now = Date.now()): CacheHit | undefined {
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    const remaining = entry.ttl - Math.floor((now - entry.storedAt) / 1000);
    if (remaining <= -this.settings.staleSeconds) {
      this.lru.delete(key);
      return undefined;
    }
    return { entry, remaining };
  }

  set(key: string, value: Omit<CachedAnswer, 'storedAt' | 'ttl'>, now = Date.now()): CachedAnswer | undefined {
    const ttl = cacheTtl(value.rcode, value.answers, value.authorities, this.settings);
    if (ttl === undefined) return undefined;
    const entry = { ...value, storedAt: now, ttl };
    this.lru.set(key, entry);
    return entry;
  }

  clear(): void {
    this.lru.clear();
  }
}
