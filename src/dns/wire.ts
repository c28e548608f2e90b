/**
 * Just enough DNS wire-format reading for the cache-hit fast path: the question of a plain query
 * and the TTL positions of an answer. Anything unusual returns undefined and takes the full
 * dns-packet path instead, so this never has to be complete, only right for what it accepts.
 */

export interface WireQuestion {
  /** Lower-cased name without the trailing dot. */
  name: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question: bytes 12..end are copied into the answer. */
  end: number;
  rd: boolean;
  edns: boolean;
  dnssecOk: boolean;
  udpLimit: number;
}

export function readQuestion(b: Buffer): WireQuestion | undefined {
  if (b.length < 17 || b.length > 512) return undefined;
  const flags = b.readUInt16BE(2);
  if (flags & 0xf800) return undefined; // a response, or an opcode other than QUERY
  if (b.readUInt16BE(4) !== 1 || b.readUInt16BE(6) !== 0 || b.readUInt16BE(8) !== 0) return undefined;
  const arcount = b.readUInt16BE(10);
  if (arcount > 1) return undefined;
  let pos = 12;
  let name = '';
  for (;;) {
    if (pos >= b.length) return undefined;
    const len = b[pos];
    if (len === 0) break;
    if (len > 63 || pos + 1 + len > b.length) return undefined; // also rejects compression pointers
    for (let i = pos + 1; i <= pos + len; i++) {
      const c = b[i];
      const folded = c | 0x20; // A-Z onto a-z: letters, digits, hyphen and underscore only
      if (!((folded >= 0x61 && folded <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f)) return undefined;
    }
    name += (name ? '.' : '') + b.toString('latin1', pos + 1, pos + 1 + len);
    pos += 1 + len;
  }
  pos += 1;
  if (pos + 4 > b.length || name === '') return undefined;
  const qtype = b.readUInt16BE(pos);
  const qclass = b.readUInt16BE(pos + 2);
  const end = pos + 4;
  let edns = false;
  let dnssecOk = false;
  let udpLimit = 512;
  if (arcount === 1) {
    // Only an OPT record with an empty root name and no options is accepted here.
    if (end + 11 !== b.length || b[end] !== 0 || b.readUInt16BE(end + 1) !== 41 || b.readUInt16BE(end + 9) !== 0) return undefined;
    edns = true;
    udpLimit = Math.min(Math.max(b.readUInt16BE(end + 3), 512), 4096);
    dnssecOk = (b.readUInt16BE(end + 7) & 0x8000) !== 0;
  } else if (end !== b.length) return undefined;
  return { name: name.toLowerCase(), qtype, qclass, end, rd: (flags & 0x0100) !== 0, edns, dnssecOk, udpLimit };
}

function skipName(b: Buffer, pos: number): number {
  for (;;) {
    if (pos >= b.length) return -1;
    const len = b[pos];
    if (len === 0) return pos + 1;
    if ((len & 0xc0) === 0xc0) return pos + 2;
    if (len > 63) return -1;
    pos += 1 + len;
  }
}

/** Offsets of every TTL field in an encoded answer (OPT excluded), or undefined if it cannot be walked. */
export function ttlOffsets(b: Buffer): number[] | undefined {
  if (b.length < 12) return undefined;
  const qd = b.readUInt16BE(4);
  const rrs = b.readUInt16BE(6) + b.readUInt16BE(8) + b.readUInt16BE(10);
  let pos = 12;
  for (let i = 0; i < qd; i++) {
    pos = skipName(b, pos);
    if (pos < 0) return undefined;
    pos += 4;
  }
  const out: number[] = [];
  for (let i = 0; i < rrs; i++) {
    pos = skipName(b, pos);
    if (pos < 0 || pos + 10 > b.length) return undefined;
    const type = b.readUInt16BE(pos);
    if (type !== 41) out.push(pos + 4);
    pos += 10 + b.readUInt16BE(pos + 8);
  }
  return pos === b.length ? out : undefined;
}
