import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import type { GatewayConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { BatchWriter, DnsLookup } from '../store/index.js';
import { ClientAcl, RateLimiter } from './acl.js';
import { describeQuery, encodeAnswer, headerOnlyAnswer, syntheticSoa, withTtl, type AnswerSections, type ClientQuery } from './answers.js';
import { Forwarder } from './forwarder.js';
import { LRUCache } from 'lru-cache';
import { Steering } from './steering.js';
import { readQuestion, ttlOffsets, type WireQuestion } from './wire.js';

export type Transport = 'udp' | 'tcp' | 'doh';

export interface DnsClient {
  ip: string;
  transport: Transport;
}

/** A cached answer ready to send: patch ID, RD, question case and TTLs, and it goes out. */
interface Template {
  wire: Buffer;
  ttls: number[];
  storedAt: number;
  ttl: number;
}

export interface DnsServiceDeps {
  log: Logger;
  lookups: BatchWriter<DnsLookup>;
  isEnrolled(ip: string): Promise<boolean>;
  /** The tenant a client address belongs to, recorded with AI-name lookups. */
  tenantOf?(ip: string): string | null;
}

/**
 * Answers one DNS message from one client, whatever the transport: access and rate checks,
 * steering, then the cached upstream answer. Never throws: bad input gets FORMERR where a reply
 * is possible, and nothing at all where it is not.
 */
export class DnsService {
  readonly forwarder: Forwarder;
  private steering!: Steering;
  private acl!: ClientAcl;
  private readonly limiter: RateLimiter;
  private config!: GatewayConfig;
  private templates!: LRUCache<string, Template>;
  /** Answers by "transport|result", read by the metrics scrape (cheaper than a labelled inc per query). */
  readonly counts = new Map<string, number>();

  constructor(config: GatewayConfig, private readonly deps: DnsServiceDeps) {
    this.forwarder = new Forwarder({ upstreams: config.dns.upstreams, timeoutMs: config.dns.timeoutMs, cache: config.dns.cache });
    this.limiter = new RateLimiter(config.dns.rateLimit.qps, config.dns.rateLimit.burst);
    this.update(config);
    setInterval(() => this.limiter.sweep(), 60_000).unref();
  }

  update(config: GatewayConfig): void {
    this.config = config;
    this.steering = new Steering(config);
    this.acl = new ClientAcl(config.dns.allowNetworks);
    this.templates = new LRUCache({ max: config.dns.cache.maxEntries }); // steering may have changed
    this.limiter.update(config.dns.rateLimit.qps, config.dns.rateLimit.burst);
    this.forwarder.update({ upstreams: config.dns.upstreams, timeoutMs: config.dns.timeoutMs, cache: config.dns.cache });
  }

  private count(transport: Transport, result: string): void {
    const key = `${transport}|${result}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /**
   * The wire answer, or null when the message must not be answered (dropped). Cache hits come
   * back at once; anything that needs work comes back as a promise.
   */
  answer(raw: Buffer, client: DnsClient): Buffer | null | Promise<Buffer | null> {
    const count = (result: string) => this.count(client.transport, result);
    if (!this.acl.allows(client.ip)) {
      count('refused');
      return this.refuse(raw);
    }
    if (!this.limiter.allow(client.ip)) {
      count('rate-limited');
      return client.transport === 'udp' ? null : this.refuse(raw); // UDP: drop, never amplify
    }
    const wq = readQuestion(raw);
    const fast = wq && this.fromTemplate(raw, wq, client);
    if (fast) {
      this.forwarder.cache.hits++;
      count('cache');
      return fast;
    }
    return this.answerSlowly(raw, client, wq);
  }

  private async answerSlowly(raw: Buffer, client: DnsClient, wq: WireQuestion | undefined): Promise<Buffer | null> {
    const count = (result: string) => this.count(client.transport, result);
    let packet: Packet;
    try {
      packet = dnsPacket.decode(raw);
    } catch {
      count('formerr');
      return headerOnlyAnswer(raw, 'FORMERR');
    }
    const query = describeQuery(packet);
    if (typeof query === 'string') {
      count('formerr');
      return packet.type === 'query' ? headerOnlyAnswer(raw, 'FORMERR') : null;
    }
    const udp = client.transport === 'udp';
    try {
      const { sections, result, entry } = await this.resolve(query, client);
      count(result);
      const wire = encodeAnswer(query, sections, udp);
      if (entry && wq) this.remember(wq, wire, entry);
      return wire;
    } catch (err) {
      this.deps.log.debug({ err: (err as Error).message, name: query.question.name }, 'DNS answer failed');
      count('servfail');
      try {
        return encodeAnswer(query, { rcode: 'SERVFAIL' }, udp);
      } catch {
        return headerOnlyAnswer(raw, 'SERVFAIL');
      }
    }
  }

  private templateKey(q: WireQuestion): string {
    return `${q.name}|${q.qtype}|${q.qclass}|${q.dnssecOk ? 1 : 0}|${q.edns ? 1 : 0}`;
  }

  /** The cache-hit fast path: a fresh cached answer for a plain name, without decoding or encoding. */
  private fromTemplate(raw: Buffer, q: WireQuestion, client: DnsClient): Buffer | undefined {
    // Only plain names get templates (see remember), and templates are dropped on reload.
    const t = this.templates.get(this.templateKey(q));
    if (!t) return undefined;
    const remaining = t.ttl - Math.floor((Date.now() - t.storedAt) / 1000);
    if (remaining <= 0 || (client.transport === 'udp' && t.wire.length > q.udpLimit)) return undefined;
    const out = Buffer.allocUnsafe(t.wire.length);
    t.wire.copy(out);
    out[0] = raw[0];
    out[1] = raw[1];
    if (q.rd) out[2] |= 0x01;
    raw.copy(out, 12, 12, q.end); // the question exactly as the client wrote it (0x20 case kept)
    for (const off of t.ttls) out.writeUInt32BE(remaining, off);
    return out;
  }

  private remember(q: WireQuestion, wire: Buffer, entry: { storedAt: number; ttl: number }): void {
    if (wire[2] & 0x02 || !this.steering.isPlain(q.name)) return; // truncated, or a name a rule may answer otherwise
    const ttls = ttlOffsets(wire);
    if (!ttls) return;
    const copy = Buffer.from(wire);
    copy[2] &= ~0x01; // RD is set per query
    this.templates.set(this.templateKey(q), { wire: copy, ttls, storedAt: entry.storedAt, ttl: entry.ttl });
  }

  private refuse(raw: Buffer): Buffer | null {
    try {
      const q = describeQuery(dnsPacket.decode(raw));
      if (typeof q !== 'string') return encodeAnswer(q, { rcode: 'REFUSED' }, true);
    } catch {
      // fall through to the header-only answer
    }
    return headerOnlyAnswer(raw, 'REFUSED');
  }

  /** The answer's sections; `entry` is set when it is a fresh cached upstream answer (a template may be made). */
  private async resolve(q: ClientQuery, client: DnsClient): Promise<{ sections: AnswerSections; result: string; entry?: { storedAt: number; ttl: number } }> {
    const name = q.question.name.toLowerCase().replace(/\.$/, '');
    const type = q.question.type;
    const decision = await this.steering.decide(name, () => this.deps.isEnrolled(client.ip));
    const gw = this.config.gateway.hostname;
    const ttl = this.config.dns.steeredTtl;
    const service = decision.kind === 'steer' || decision.kind === 'forward' ? decision.service : undefined;
    if (service) {
      this.deps.lookups.record({
        at: Date.now(), clientIp: client.ip, tenantId: this.deps.tenantOf?.(client.ip) ?? null, name, qtype: type, service,
        transport: client.transport, steered: decision.kind === 'steer',
      });
    }
    switch (decision.kind) {
      case 'nxdomain':
        return { sections: { rcode: 'NXDOMAIN', authorities: [syntheticSoa(name, gw, ttl)], authoritative: true }, result: 'blocked' };
      case 'local':
      case 'steer': {
        // Steered names answer only A/AAAA with the gateway; HTTPS/SVCB and the rest get NODATA,
        // so no ECH hint or IPv6 address leads the client around the gateway.
        const addresses = decision.kind === 'local' ? decision.addresses : [this.steering.address];
        const matching = (type as string) === 'ANY' ? addresses : Steering.ofType(addresses, type);
        const answers = matching.map((data) => ({ type: data.includes(':') ? 'AAAA' : 'A', name: q.question.name, ttl, data }) as Answer);
        return {
          sections: answers.length
            ? { rcode: 'NOERROR', answers, authoritative: true }
            : { rcode: 'NOERROR', authorities: [syntheticSoa(name, gw, ttl)], authoritative: true },
          result: decision.kind === 'steer' ? `steered-${decision.reason}` : 'local',
        };
      }
      case 'forward': {
        const r = await this.forwarder.resolve({ name: q.question.name, type, class: q.question.class ?? 'IN', dnssecOk: q.dnssecOk });
        const e = r.entry;
        return {
          sections: {
            rcode: e.rcode,
            answers: withTtl(e.answers, r.ttl),
            authorities: withTtl(e.authorities, r.ttl),
            additionals: withTtl(e.additionals, r.ttl),
          },
          result: r.source,
          entry: r.source === 'cache' || r.source === 'upstream' ? e : undefined,
        };
      }
    }
  }
}
