import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import type { GatewayConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';
import type { BatchWriter, DnsLookup } from '../store/index.js';
import { ClientAcl, RateLimiter } from './acl.js';
import { describeQuery, encodeAnswer, headerOnlyAnswer, syntheticSoa, withTtl, type AnswerSections, type ClientQuery } from './answers.js';
import { Forwarder } from './forwarder.js';
import { Steering } from './steering.js';

export type Transport = 'udp' | 'tcp' | 'doh';

export interface DnsClient {
  ip: string;
  transport: Transport;
}

export interface DnsServiceDeps {
  log: Logger;
  metrics: Metrics;
  lookups: BatchWriter<DnsLookup>;
  isEnrolled(ip: string): Promise<boolean>;
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
    this.limiter.update(config.dns.rateLimit.qps, config.dns.rateLimit.burst);
    this.forwarder.update({ upstreams: config.dns.upstreams, timeoutMs: config.dns.timeoutMs, cache: config.dns.cache });
  }

  /** Resolves to the wire answer, or null when the message must not be answered (dropped). */
  async answer(raw: Buffer, client: DnsClient): Promise<Buffer | null> {
    const count = (result: string) => this.deps.metrics.dnsQueries.inc({ transport: client.transport, result });
    if (!this.acl.allows(client.ip)) {
      count('refused');
      return this.refuse(raw);
    }
    if (!this.limiter.allow(client.ip)) {
      count('rate-limited');
      return client.transport === 'udp' ? null : this.refuse(raw); // UDP: drop, never amplify
    }
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
      const { sections, result } = await this.resolve(query, client);
      count(result);
      return encodeAnswer(query, sections, udp);
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

  private refuse(raw: Buffer): Buffer | null {
    try {
      const q = describeQuery(dnsPacket.decode(raw));
      if (typeof q !== 'string') return encodeAnswer(q, { rcode: 'REFUSED' }, true);
    } catch {
      // fall through to the header-only answer
    }
    return headerOnlyAnswer(raw, 'REFUSED');
  }

  private async resolve(q: ClientQuery, client: DnsClient): Promise<{ sections: AnswerSections; result: string }> {
    const name = q.question.name.toLowerCase().replace(/\.$/, '');
    const type = q.question.type;
    const decision = await this.steering.decide(name, () => this.deps.isEnrolled(client.ip));
    const gw = this.config.gateway.hostname;
    const ttl = this.config.dns.steeredTtl;
    const service = decision.kind === 'steer' || decision.kind === 'forward' ? decision.service : undefined;
    if (service) {
      this.deps.lookups.record({
        at: Date.now(), clientIp: client.ip, tenantId: null, name, qtype: type, service,
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
        };
      }
    }
  }
}
