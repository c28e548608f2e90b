import dnsPacket, { type Answer, type Packet, type Question } from 'dns-packet';

export const RCODE: Record<string, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };
const EDNS_SIZE = 1232;

export interface ClientQuery {
  packet: Packet;
  question: Question;
  /** The client sent EDNS0 (OPT): answer with OPT too. */
  edns: boolean;
  dnssecOk: boolean;
  /** Largest UDP answer the client takes: 512 without EDNS, else what it advertised (512-4096). */
  udpLimit: number;
}

type Opt = Answer & { udpPayloadSize?: number; flags?: number };

export function describeQuery(packet: Packet): ClientQuery | string {
  if (packet.type !== 'query') return 'not a query';
  if ((packet.questions?.length ?? 0) !== 1) return 'a query must have exactly one question';
  const opt = (packet.additionals ?? []).find((a) => a.type === 'OPT') as Opt | undefined;
  const size = opt?.udpPayloadSize ?? 512;
  return {
    packet,
    question: packet.questions![0],
    edns: !!opt,
    dnssecOk: !!opt && ((opt.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0,
    udpLimit: opt ? Math.min(Math.max(size, 512), 4096) : 512,
  };
}

export interface AnswerSections {
  rcode: string;
  answers?: Answer[];
  authorities?: Answer[];
  additionals?: Answer[];
  authoritative?: boolean;
}

/** Encodes the answer to a client query; over UDP, an answer too large gets TC set and no records. */
export function encodeAnswer(q: ClientQuery, s: AnswerSections, udp: boolean): Buffer {
  const rd = (q.packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
  const base = {
    type: 'response' as const,
    id: q.packet.id,
    flags: rd | dnsPacket.RECURSION_AVAILABLE | (s.authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (RCODE[s.rcode] ?? 2),
    questions: [q.question],
  };
  const opt: Answer[] = q.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_SIZE, flags: q.dnssecOk ? dnsPacket.DNSSEC_OK : 0 } as Answer] : [];
  const full = dnsPacket.encode({ ...base, answers: s.answers ?? [], authorities: s.authorities ?? [], additionals: [...(s.additionals ?? []), ...opt] });
  if (!udp || full.length <= q.udpLimit) return full;
  return dnsPacket.encode({ ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE, additionals: opt });
}

/** An error answer built from the raw header when the packet could not be decoded. */
export function headerOnlyAnswer(raw: Buffer, rcode: 'FORMERR' | 'REFUSED' | 'SERVFAIL'): Buffer | null {
  if (raw.length < 12 || raw[2] & 0x80) return null; // too short to answer, or itself a response: never reply
  const out = Buffer.alloc(12);
  raw.copy(out, 0, 0, 2); // id
  out[2] = 0x80 | (raw[2] & 0x79); // QR, opcode and RD kept
  out[3] = 0x80 | RCODE[rcode]; // RA + rcode
  return out;
}

/** TTL-adjusted copies of cached records. */
export function withTtl(records: Answer[], ttl: number): Answer[] {
  return records.map((r) => ({ ...r, ttl }) as Answer);
}

/** A synthetic SOA, so steered NODATA and NXDOMAIN answers are cached by clients for `ttl` (RFC 2308). */
export function syntheticSoa(zone: string, gatewayName: string, ttl: number): Answer {
  return {
    type: 'SOA',
    name: zone,
    ttl,
    data: { mname: gatewayName, rname: `hostmaster.${gatewayName}`, serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: ttl },
  } as Answer;
}
