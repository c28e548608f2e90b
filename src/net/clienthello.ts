/**
 * TLS ClientHello parsing, enough to route: SNI, ALPN and whether ECH is offered.
 * Works on the raw bytes of the first TLS records, which may carry the hello in fragments.
 */

export type HelloParse =
  | { status: 'incomplete' }
  | { status: 'invalid'; reason: string }
  | { status: 'ok'; sni: string | null; alpn: string[]; ech: boolean };

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0x0000;
const EXT_ALPN = 0x0010;
const EXT_ECH = 0xfe0d;
const HOST_RE = /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/;

class Reader {
  constructor(private readonly buf: Buffer, public pos = 0, private readonly end = buf.length) {}
  left(): number {
    return this.end - this.pos;
  }
  need(n: number): void {
    if (this.left() < n) throw new HelloError('truncated ClientHello');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  sub(n: number): Reader {
    this.need(n);
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }
}

class HelloError extends Error {}

/** Reassembles the handshake message from the leading TLS records; null when more bytes are needed. */
function handshakeBytes(data: Buffer): Buffer | null | string {
  const parts: Buffer[] = [];
  let have = 0;
  let want = -1;
  let pos = 0;
  while (true) {
    if (data.length - pos < 5) return null;
    if (data[pos] !== RECORD_HANDSHAKE) return pos === 0 ? 'not a TLS handshake record' : 'ClientHello interrupted by a non-handshake record';
    if (data[pos + 1] !== 0x03) return 'unknown TLS record version';
    const len = data.readUInt16BE(pos + 3);
    if (len === 0 || len > 16384) return 'TLS record length out of range';
    if (data.length - pos - 5 < len) return null;
    const fragment = data.subarray(pos + 5, pos + 5 + len);
    parts.push(fragment);
    have += fragment.length;
    pos += 5 + len;
    if (want < 0 && have >= 4) {
      const head = Buffer.concat(parts);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) return 'first handshake message is not a ClientHello';
      want = 4 + head.readUIntBE(1, 3);
    }
    if (want >= 0 && have >= want) return Buffer.concat(parts).subarray(0, want);
  }
}

export function parseClientHello(data: Buffer): HelloParse {
  const hs = handshakeBytes(data);
  if (hs === null) return { status: 'incomplete' };
  if (typeof hs === 'string') return { status: 'invalid', reason: hs };
  try {
    const r = new Reader(hs, 4);
    r.u16(); // legacy_version
    r.bytes(32); // random
    r.bytes(r.u8()); // session id
    const suites = r.u16();
    if (suites === 0 || suites % 2) throw new HelloError('bad cipher suite list');
    r.bytes(suites);
    r.bytes(r.u8()); // compression methods
    let sni: string | null = null;
    let alpn: string[] = [];
    let ech = false;
    if (r.left() > 0) {
      const exts = r.sub(r.u16());
      const seen = new Set<number>();
      while (exts.left() > 0) {
        const type = exts.u16();
        const body = exts.sub(exts.u16());
        if (seen.has(type)) throw new HelloError(`duplicate extension ${type}`);
        seen.add(type);
        if (type === EXT_SERVER_NAME) sni = parseServerName(body);
        else if (type === EXT_ALPN) alpn = parseAlpn(body);
        else if (type === EXT_ECH) ech = true;
      }
    }
    return { status: 'ok', sni, alpn, ech };
  } catch (err) {
    if (err instanceof HelloError) return { status: 'invalid', reason: err.message };
    throw err;
  }
}

function parseServerName(body: Reader): string | null {
  const list = body.sub(body.u16());
  while (list.left() > 0) {
    const nameType = list.u8();
    const name = list.bytes(list.u16());
    if (nameType !== 0) continue;
    const host = name.toString('latin1').toLowerCase();
    if (host.length === 0 || host.length > 253 || !HOST_RE.test(host)) throw new HelloError('server name is not a valid host name');
    return host.replace(/\.$/, '');
  }
  return null;
}

function parseAlpn(body: Reader): string[] {
  const list = body.sub(body.u16());
  const out: string[] = [];
  while (list.left() > 0) out.push(list.bytes(list.u8()).toString('latin1'));
  return out;
}
