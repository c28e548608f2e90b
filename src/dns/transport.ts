import dgram from 'node:dgram';
import { isIP, Socket } from 'node:net';
import dnsPacket, { type Packet } from 'dns-packet';
import type { HostPort } from '../config/index.js';

export class UpstreamError extends Error {}

/** dns-packet decodes these fields but its typings omit them. */
export type DnsMessage = Packet & { rcode?: string };

function sameQuestion(query: Packet, answer: Packet): boolean {
  const q = query.questions?.[0];
  const a = answer.questions?.[0];
  return answer.id === query.id && !!q && !!a && q.type === a.type && q.class === a.class && q.name.toLowerCase() === a.name.toLowerCase();
}

/**
 * One query over UDP from a fresh socket, so the kernel picks a random source port; replies
 * from elsewhere, undecodable ones and ones for another question are ignored (anti-spoofing).
 */
export function udpExchange(server: HostPort, query: Packet, timeoutMs: number): Promise<DnsMessage> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    const timer = setTimeout(() => done(new UpstreamError(`${server.host}:${server.port} timed out`)), timeoutMs);
    let finished = false;
    const done = (err: Error | null, packet?: DnsMessage) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(packet!);
    };
    sock.on('error', (err) => done(new UpstreamError(`${server.host}:${server.port}: ${err.message}`)));
    sock.on('message', (msg, rinfo) => {
      if (rinfo.port !== server.port || rinfo.address !== server.host) return;
      let answer: DnsMessage;
      try {
        answer = dnsPacket.decode(msg) as DnsMessage;
      } catch {
        return;
      }
      if (sameQuestion(query, answer)) done(null, answer);
    });
    sock.send(dnsPacket.encode(query), server.port, server.host);
  });
}

/** One query over TCP (RFC 7766 length prefix), used when the UDP answer was truncated. */
export function tcpExchange(server: HostPort, query: Packet, timeoutMs: number): Promise<DnsMessage> {
  return new Promise((resolve, reject) => {
    const sock = new Socket();
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new UpstreamError(`${server.host}:${server.port} TCP timed out`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      sock.destroy();
      reject(err);
    };
    sock.on('error', (err) => fail(new UpstreamError(`${server.host}:${server.port} TCP: ${err.message}`)));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      clearTimeout(timer);
      sock.destroy();
      try {
        const answer = dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))) as DnsMessage;
        if (sameQuestion(query, answer)) resolve(answer);
        else reject(new UpstreamError('TCP answer does not match the question'));
      } catch (err) {
        reject(new UpstreamError(`undecodable TCP answer: ${(err as Error).message}`));
      }
    });
    sock.connect(server.port, server.host, () => sock.write(dnsPacket.streamEncode(query)));
  });
}
