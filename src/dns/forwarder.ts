import { randomInt } from 'node:crypto';
import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import type { HostPort } from '../config/index.js';
import { DnsCache, type CacheSettings, type CachedAnswer } from './cache.js';
import { tcpExchange, udpExchange, UpstreamError, type DnsMessage } from './transport.js';

export interface ForwardQuestion {
  name: string;
  type: string;
  class: string;
  /** The client asked for DNSSEC records (EDNS DO bit): cached apart, as the answers differ. */
  dnssecOk: boolean;
}

export interface ForwardResult {
  entry: CachedAnswer;
  /** Seconds left to tell the client (30 for a stale answer, RFC 8767). */
  ttl: number;
  source: 'cache' | 'upstream' | 'stale' | 'uncached';
}

export interface ForwarderSettings {
  upstreams: HostPort[];
  timeoutMs: number;
  cache: CacheSettings;
}

const STALE_TTL = 30;
const EDNS_SIZE = 1232; // the DNS flag day 2020 size: no IP fragmentation

const keyOf = (q: ForwardQuestion) => `${q.name.toLowerCase()}|${q.type}|${q.class}|${q.dnssecOk ? 1 : 0}`;

/**
 * Forwards questions to the upstream resolvers with a cache: random IDs and source ports, answers
 * checked against the question, TCP on truncation, failover in order, identical questions in
 * flight coalesced, serve-stale when every upstream fails.
 */
export class Forwarder {
  readonly cache: DnsCache;
  private readonly inflight = new Map<string, Promise<ForwardResult>>();
  upstreamQueries = 0;
  upstreamFailures = 0;

  constructor(private settings: ForwarderSettings) {
    this.cache = new DnsCache(settings.cache);
  }

  update(settings: ForwarderSettings): void {
    const upstreamsChanged = JSON.stringify(settings.upstreams) !== JSON.stringify(this.settings.upstreams);
    this.settings = settings;
    this.cache.update(settings.cache);
    if (upstreamsChanged) this.cache.clear();
  }

  async resolve(q: ForwardQuestion): Promise<ForwardResult> {
    const key = keyOf(q);
    const hit = this.cache.get(key);
    if (hit && hit.remaining > 0) {
      this.cache.hits++;
      return { entry: hit.entry, ttl: hit.remaining, source: 'cache' };
    }
    this.cache.misses++;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const p = this.fetch(q, key).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private async fetch(q: ForwardQuestion, key: string): Promise<ForwardResult> {
    let answer: DnsMessage;
    try {
      answer = await this.askUpstreams(q);
    } catch (err) {
      const stale = this.cache.get(key);
      if (stale) {
        this.cache.staleServed++;
        return { entry: stale.entry, ttl: STALE_TTL, source: 'stale' };
      }
      throw err;
    }
    const value = {
      rcode: answer.rcode ?? 'NOERROR',
      answers: answer.answers ?? [],
      authorities: answer.authorities ?? [],
      additionals: (answer.additionals ?? []).filter((a) => a.type !== 'OPT'),
    };
    const entry = this.cache.set(key, value);
    if (entry) return { entry, ttl: entry.ttl, source: 'upstream' };
    return { entry: { ...value, storedAt: Date.now(), ttl: 0 }, ttl: 0, source: 'uncached' };
  }

  /** Each upstream in order until one gives a usable answer; SERVFAIL and REFUSED count as failures. */
  private async askUpstreams(q: ForwardQuestion): Promise<DnsMessage> {
    let lastError: Error | undefined; // made only on failure: an Error's stack trace is costly
    for (const server of this.settings.upstreams) {
      const query: Packet = {
        type: 'query',
        id: randomInt(0, 65536),
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ name: q.name, type: q.type as never, class: q.class as never }],
        additionals: [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_SIZE, flags: q.dnssecOk ? dnsPacket.DNSSEC_OK : 0 } as Answer],
      };
      this.upstreamQueries++;
      try {
        let answer = await udpExchange(server, query, this.settings.timeoutMs);
        if ((answer.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) answer = await tcpExchange(server, query, this.settings.timeoutMs);
        if (answer.rcode === 'SERVFAIL' || answer.rcode === 'REFUSED' || answer.rcode === 'NOTIMP') {
          throw new UpstreamError(`${server.host}:${server.port} answered ${answer.rcode}`);
        }
        return answer;
      } catch (err) {
        this.upstreamFailures++;
        lastError = err as Error;
      }
    }
    throw lastError ?? new UpstreamError('no upstream resolver configured');
  }

  /** The first A (else AAAA) address of a name: how passthrough finds real destinations. */
  async resolveAddress(name: string): Promise<string> {
    for (const type of ['A', 'AAAA']) {
      const { entry } = await this.resolve({ name, type, class: 'IN', dnssecOk: false });
      const rr = (entry.answers as (Answer & { data?: unknown })[]).find((a) => a.type === type);
      if (rr && typeof rr.data === 'string') return rr.data;
      if (entry.rcode === 'NXDOMAIN') break;
    }
    throw new UpstreamError(`${name} has no address`);
  }
}
