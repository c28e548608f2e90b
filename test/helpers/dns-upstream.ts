import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import type { Teardown } from './daemon.js';

/**
 * A small authoritative DNS server on a loopback UDP port, standing in for the real resolver a
 * passthrough looks names up in. Names not in `records` get NXDOMAIN.
 */
export async function startDnsUpstream(t: Teardown, records: Record<string, string>): Promise<{ port: number; queries: string[] }> {
  const sock = dgram.createSocket('udp4');
  const queries: string[] = [];
  sock.on('message', (msg, rinfo) => {
    let q: dnsPacket.Packet;
    try {
      q = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const question = q.questions![0];
    queries.push(`${question.name} ${question.type}`);
    const address = records[question.name.toLowerCase()];
    const answers = address && question.type === 'A' ? [{ type: 'A' as const, name: question.name, ttl: 60, data: address }] : [];
    const reply = dnsPacket.encode({
      type: 'response',
      id: q.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (address ? 0 : 3), // rcode 3 = NXDOMAIN
      questions: q.questions,
      answers,
    });
    sock.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  t.teardown(() => sock.close());
  return { port: sock.address().port, queries };
}
