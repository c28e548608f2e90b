import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { isIP, Socket } from 'node:net';
import dnsPacket, { type Packet } from 'dns-packet';
import type { HostPort } from '../config/index.js';

export interface Question {
  name: string;
  type: 'A' | 'AAAA';
}

export class UpstreamError extends Error {}

/** dns-packet decodes these fields but its typings omit them. */
type Answered = Packet & { rcode?: string };
interface Record_ { type: string; ttl?: number; data?: unknown }

function sameQuestion(query: Packet, answer: Packet): boolean {
  const q = query.questions?.[0];
  const a = answer.questions?.[0];
  return !!q && !!a && q.type === a.type && q.name.toLowerCase() === a.name.toLowerCase() && answer.id === query.id;
}

/** One query over UDP from a fresh socket (random source port) with a random ID. */
function udpExchange(server: HostPort, query: Packet, timeoutMs: number): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    const timer = setTimeout(() => done(new UpstreamError(`${server.host}:${server.port} timed out`)), timeoutMs);
    const done = (err: Error | null, packet?: Packet) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(packet!);
    };
    sock.on('error', (err) => done(err));
    sock.on('message', (msg, rinfo) => {
      if (rinfo.address !== server.host || rinfo.port !== server.port) return; // not our upstream: ignore
      let answer: Packet;
      try {
        answer = dnsPacket.decode(msg);
      } catch {
        return; // a garbled datagram is not the answer; keep waiting until the timeout
      }
      if (sameQuestion(query, answer)) done(null, answer);
    });
    sock.send(dnsPacket.encode(query), server.port, server.host);
  });
}

/** One query over TCP, used when the UDP answer came back truncated. */
function tcpExchange(server: HostPort, query: Packet, timeoutMs: number): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const sock = new Socket();
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new UpstreamError(`${server.host}:${server.port} TCP timed out`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      sock.destroy();
      reject(err);
    };
    sock.on('error', fail);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      clearTimeout(timer);
      sock.destroy();
      try {
        const answer = dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        if (sameQuestion(query, answer)) resolve(answer);
        else reject(new UpstreamError('TCP answer does not match the question'));
      } catch (err) {
        reject(new UpstreamError(`undecodable TCP answer: ${(err as Error).message}`));
      }
    });
    sock.connect(server.port, server.host, () => sock.write(dnsPacket.streamEncode(query)));
  });
}

/**
 * Asks the configured upstream resolvers directly, never the gateway's own steering: this is
 * how passthrough finds a name's real address.
 */
export class UpstreamResolver {
  private readonly cache = new Map<string, { address: string; expires: number }>();

  constructor(private upstreams: HostPort[], private timeoutMs: number) {}

  update(upstreams: HostPort[], timeoutMs: number): void {
    this.upstreams = upstreams;
    this.timeoutMs = timeoutMs;
    this.cache.clear();
  }

  /** Sends a question to each upstream in turn until one answers (failover). */
  async query(q: Question): Promise<Answered> {
    let lastError: Error = new UpstreamError('no upstream configured');
    for (const server of this.upstreams) {
      const query: Packet = {
        type: 'query',
        id: randomInt(0, 65536),
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type: q.type, name: q.name, class: 'IN' }],
      };
      try {
        const answer: Answered = await udpExchange(server, query, this.timeoutMs);
        if (answer.flags !== undefined && answer.flags & dnsPacket.TRUNCATED_RESPONSE) return await tcpExchange(server, query, this.timeoutMs);
        if (answer.rcode === 'SERVFAIL' || answer.rcode === 'REFUSED') {
          lastError = new UpstreamError(`${server.host}:${server.port} answered ${answer.rcode}`);
          continue;
        }
        return answer;
      } catch (err) {
        lastError = err as Error;
      }
    }
    throw lastError;
  }

  /** The first A (else AAAA) address of a name, cached for its TTL (at least 5 s, at most an hour). */
  async resolveAddress(name: string): Promise<string> {
    const key = name.toLowerCase();
    const hit = this.cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.address;
    for (const type of ['A', 'AAAA'] as const) {
      const answer = await this.query({ name: key, type });
      const rr = (answer.answers as Record_[] | undefined)?.find((a) => a.type === type);
      if (rr && typeof rr.data === 'string') {
        const ttl = Math.min(Math.max(rr.ttl ?? 60, 5), 3600);
        if (this.cache.size > 10000) this.cache.clear();
        this.cache.set(key, { address: rr.data, expires: Date.now() + ttl * 1000 });
        return rr.data;
      }
      if (answer.rcode === 'NXDOMAIN') break;
    }
    throw new UpstreamError(`${name} has no address`);
  }
}
