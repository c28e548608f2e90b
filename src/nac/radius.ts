// RADIUS Dynamic Authorization client (RFC 5176): CoA-Request and Disconnect-Request.
//
// The `radius` package encodes the attributes and decodes the replies. It gets the
// authenticators of requests with a Message-Authenticator wrong (see buildRequest) and
// cannot verify their replies (see onResponse); it omits empty strings, does not check
// IPv4 text, cannot encode IPv6 text and wants a Date for Event-Timestamp, so values are
// checked first (packageValue). Sockets, identifiers and retransmission are ours.
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import radius from 'radius';

export type CoaKind = 'coa' | 'disconnect';
/** An attribute by dictionary name (see KINDS). A Buffer value is sent as-is. */
export type RadiusAttribute = [name: string, value: string | number | Buffer];

export interface CoaRequest {
  address: string; // NAS IP (v4 or v6)
  port: number; // usually 3799
  secret: string;
  kind: CoaKind;
  attributes: RadiusAttribute[];
  timeoutMs?: number; // wait after the first datagram, default 3000; doubles per retransmission
  retries?: number; // retransmissions after the first send, default 2
}

export interface CoaResponse {
  outcome: 'ack' | 'nak';
  code: string; // 'CoA-ACK' | 'CoA-NAK' | 'Disconnect-ACK' | 'Disconnect-NAK'
  errorCause?: number;
  errorCauseText?: string;
  replyMessage?: string;
  attempts: number; // datagrams sent
  rttMs: number; // from the first send to the accepted response
}

export class CoaTimeoutError extends Error {
  override name = 'CoaTimeoutError';
  constructor(readonly nas: string, readonly attempts: number, code: string) {
    super(`no valid response from NAS ${nas} to ${code} after ${attempts} attempt${attempts === 1 ? '' : 's'}`);
  }
}

export interface CoaLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Wait after the n-th datagram (1-based): timeoutMs, then doubling (RFC 5080 section 2.2.1), at
 * most 8 times timeoutMs, so a busy NAS is not hammered at a fixed rate.
 */
export function retransmitDelay(timeoutMs: number, attempt: number): number {
  return timeoutMs * Math.min(2 ** (attempt - 1), 8);
}

/** A request that can never be sent as given (bad attribute, value or NAS settings): retrying will not help. */
export class CoaRequestError extends Error {
  override name = 'CoaRequestError';
}

/** RFC 5176 section 3.5 Error-Cause values. */
export const ERROR_CAUSES: Readonly<Record<number, string>> = {
  201: 'Residual-Session-Context-Removed', 202: 'Invalid-EAP-Packet',
  401: 'Unsupported-Attribute', 402: 'Missing-Attribute', 403: 'NAS-Identification-Mismatch',
  404: 'Invalid-Request', 405: 'Unsupported-Service', 406: 'Unsupported-Extension',
  407: 'Invalid-Attribute-Value', 501: 'Administratively-Prohibited', 502: 'Request-Not-Routable',
  503: 'Session-Context-Not-Found', 504: 'Session-Context-Not-Removable',
  505: 'Other-Proxy-Processing-Error', 506: 'Resources-Unavailable', 507: 'Request-Initiated',
  508: 'Multiple-Session-Selection-Unsupported',
};

type Kind = 'string' | 'octets' | 'integer' | 'date' | 'ipaddr' | 'ipv6addr' | 'cisco';
/** What a CoA/Disconnect request may carry, by kind of value; numbers come from the package. */
const KINDS: Readonly<Record<Kind, readonly string[]>> = {
  string: ['User-Name', 'Filter-Id', 'Reply-Message', 'Called-Station-Id', 'Calling-Station-Id', 'NAS-Identifier', 'Acct-Session-Id', 'Acct-Multi-Session-Id', 'NAS-Port-Id'],
  octets: ['State', 'Class', 'Proxy-State', 'Chargeable-User-Identity'],
  integer: ['NAS-Port', 'Service-Type', 'Session-Timeout', 'Idle-Timeout', 'NAS-Port-Type'],
  date: ['Event-Timestamp'], // seconds since the epoch
  ipaddr: ['NAS-IP-Address', 'Framed-IP-Address'],
  ipv6addr: ['NAS-IPv6-Address', 'Framed-IPv6-Address'],
  cisco: ['Cisco-AVPair'], // vendor 9, attribute 1
};
const KIND_OF = new Map(Object.entries(KINDS).flatMap(([kind, names]) => names.map((name) => [name, kind as Kind] as const)));

const CODES = {
  coa: { ack: 44, nak: 45, name: 'CoA-Request' },
  disconnect: { ack: 41, nak: 42, name: 'Disconnect-Request' },
} as const;
const RESPONSE_NAMES: Record<number, string> = { 41: 'Disconnect-ACK', 42: 'Disconnect-NAK', 44: 'CoA-ACK', 45: 'CoA-NAK' };

const HEADER_LEN = 20;
const MAX_PACKET = 4096; // RFC 2865 section 3
const MESSAGE_AUTHENTICATOR = 80;
const ERROR_CAUSE = 101;
const MAX_QUEUED_PER_NAS = 1024; // beyond the 256 identifiers in flight

interface Outstanding {
  nas: string; // "address:port" for messages
  family: 'udp4' | 'udp6';
  address: string;
  port: number;
  kind: CoaKind;
  secret: Buffer;
  encoded: Buffer; // by the package, without Message-Authenticator
  timeoutMs: number;
  retries: number;
  id: number;
  datagram: Buffer; // identical on every retransmission (RFC 5080 2.2.1)
  attempts: number;
  startedAt: number;
  timer?: NodeJS.Timeout;
  resolve(res: CoaResponse): void;
  reject(err: Error): void;
}

interface NasState {
  inFlight: Map<number, Outstanding>; // by identifier
  queued: Outstanding[]; // waiting for a free identifier
  nextId: number;
}

const noLog: CoaLogger = { debug() {}, warn() {} };

export class RadiusCoaClient {
  private readonly log: CoaLogger;
  private readonly sockets = new Map<'udp4' | 'udp6', dgram.Socket>();
  private readonly nases = new Map<string, NasState>();
  private closed = false;

  constructor(opts: { log?: CoaLogger } = {}) {
    this.log = opts.log ?? noLog;
  }

  async send(req: CoaRequest): Promise<CoaResponse> {
    if (this.closed) throw new Error('RADIUS CoA client is closed');
    let family: number;
    let encoded: Buffer;
    let timeoutMs: number;
    let retries: number;
    try {
      ({ family, encoded, timeoutMs, retries } = this.encodeRequest(req));
    } catch (err) {
      throw new CoaRequestError((err as Error).message);
    }
    return this.sendEncoded(req, family, encoded, timeoutMs, retries, nasKey(req.address, req.port));
  }

  /** Checks and encodes a request; throws on anything that can never be sent. */
  private encodeRequest(req: CoaRequest): { family: number; encoded: Buffer; timeoutMs: number; retries: number } {
    const family = isIP(req.address ?? '');
    if (!family) throw new Error(`NAS address must be an IP address, got '${req.address}'`);
    if (!Number.isInteger(req.port) || req.port < 1 || req.port > 65535) throw new Error(`invalid NAS port ${req.port}`);
    if (typeof req.secret !== 'string' || req.secret.length === 0) throw new Error('RADIUS shared secret must be a non-empty string');
    if (!(req.kind in CODES)) throw new Error(`invalid CoA kind '${req.kind}'`);
    const timeoutMs = req.timeoutMs ?? 3000;
    const retries = req.retries ?? 2;
    if (!(timeoutMs > 0)) throw new Error(`invalid timeoutMs ${req.timeoutMs}`);
    if (!Number.isInteger(retries) || retries < 0) throw new Error(`invalid retries ${req.retries}`);
    const attributes = req.attributes.map(toPackage);
    const size = attributes.reduce((sum, a) => sum + a.size, HEADER_LEN + 18);
    if (size > MAX_PACKET) throw new Error(`RADIUS request would exceed ${MAX_PACKET} octets`);
    // Identifier and Request Authenticator are set by buildRequest.
    const encoded = radius.encode({ code: CODES[req.kind].name, identifier: 0, secret: req.secret,
      attributes: attributes.map((a) => a.attribute), add_message_authenticator: false });
    if (encoded.length + 18 !== size) throw new Error('RADIUS attributes were not encoded as given');
    return { family, encoded, timeoutMs, retries };
  }

  private sendEncoded(req: CoaRequest, family: number, encoded: Buffer, timeoutMs: number, retries: number, key: string): Promise<CoaResponse> {
    let nas = this.nases.get(key);
    if (!nas) this.nases.set(key, (nas = { inFlight: new Map(), queued: [], nextId: randomInt(256) }));
    const nasName = family === 6 ? `[${req.address}]:${req.port}` : `${req.address}:${req.port}`;
    if (nas.queued.length >= MAX_QUEUED_PER_NAS) {
      throw new Error(`too many CoA requests for NAS ${nasName}: 256 in flight and ${nas.queued.length} queued`);
    }
    return new Promise<CoaResponse>((resolve, reject) => {
      const o: Outstanding = {
        nas: nasName, family: family === 6 ? 'udp6' : 'udp4', address: req.address, port: req.port,
        kind: req.kind, secret: Buffer.from(req.secret, 'utf8'), encoded, timeoutMs, retries,
        id: -1, datagram: Buffer.alloc(0), attempts: 0, startedAt: 0, resolve, reject,
      };
      // FIFO: a fresh request may not overtake queued ones.
      if (nas.queued.length === 0 && nas.inFlight.size < 256) this.start(nas, o);
      else nas.queued.push(o);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new Error('RADIUS CoA client closed');
    for (const nas of this.nases.values()) {
      for (const o of [...nas.inFlight.values(), ...nas.queued]) {
        clearTimeout(o.timer);
        o.reject(err);
      }
    }
    this.nases.clear();
    const sockets = [...this.sockets.values()];
    this.sockets.clear();
    await Promise.all(sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }

  /** Gives o a free identifier (the caller checked there is one), builds and sends it. */
  private start(nas: NasState, o: Outstanding): void {
    while (nas.inFlight.has(nas.nextId)) nas.nextId = (nas.nextId + 1) & 0xff;
    o.id = nas.nextId;
    nas.nextId = (nas.nextId + 1) & 0xff; // rotate so a late reply rarely meets a reused ID
    o.datagram = buildRequest(o.encoded, o.id, o.secret);
    o.startedAt = performance.now();
    nas.inFlight.set(o.id, o);
    this.transmit(o);
  }

  private transmit(o: Outstanding): void {
    o.attempts++;
    this.log.debug({ nas: o.nas, id: o.id, kind: o.kind, attempt: o.attempts }, o.attempts === 1 ? 'sending RADIUS CoA request' : 'retransmitting RADIUS CoA request');
    this.socket(o.family).send(o.datagram, o.port, o.address, (err) => {
      // The attempt counts anyway; the timer decides what happens next.
      if (err) this.log.debug({ nas: o.nas, id: o.id, err: err.message }, 'RADIUS CoA send failed');
    });
    o.timer = setTimeout(() => {
      if (o.attempts <= o.retries) return this.transmit(o);
      this.finish(o);
      this.log.warn({ nas: o.nas, id: o.id, kind: o.kind, attempts: o.attempts }, 'RADIUS CoA request timed out');
      o.reject(new CoaTimeoutError(o.nas, o.attempts, CODES[o.kind].name));
    }, retransmitDelay(o.timeoutMs, o.attempts));
  }

  /** Frees o's identifier and hands it to the next queued request. */
  private finish(o: Outstanding): void {
    clearTimeout(o.timer);
    const nas = this.nases.get(nasKey(o.address, o.port));
    if (!nas || nas.inFlight.get(o.id) !== o) return;
    nas.inFlight.delete(o.id);
    const next = nas.queued.shift();
    if (next) this.start(nas, next);
  }

  private socket(family: 'udp4' | 'udp6'): dgram.Socket {
    let s = this.sockets.get(family);
    if (s) return s;
    s = dgram.createSocket({ type: family, ipv6Only: family === 'udp6' });
    const sock = s;
    sock.on('message', (msg, rinfo) => {
      try {
        this.onResponse(msg, rinfo);
      } catch (err) {
        this.log.debug({ from: `${rinfo.address}:${rinfo.port}`, err: (err as Error).message }, 'dropped RADIUS datagram');
      }
    });
    sock.on('error', (err) => {
      // Outstanding requests time out; the next send opens a fresh socket.
      this.log.warn({ family, err: err.message }, 'RADIUS CoA socket error');
      if (this.sockets.get(family) === sock) this.sockets.delete(family);
      try {
        sock.close();
      } catch {
        // already closed
      }
    });
    sock.bind(0);
    sock.unref(); // pending request timers keep the process alive, an idle socket must not
    this.sockets.set(family, sock);
    return sock;
  }

  private onResponse(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const drop = (reason: string, id?: number) =>
      this.log.debug({ from: `${rinfo.address}:${rinfo.port}`, id, reason }, 'dropped RADIUS datagram');
    if (msg.length < HEADER_LEN) return drop('shorter than a RADIUS header');
    const length = msg.readUInt16BE(2);
    if (length < HEADER_LEN || length > msg.length || length > MAX_PACKET) return drop('bad length field');
    const pkt = msg.subarray(0, length); // octets past Length are padding (RFC 2865 3)
    const code = pkt[0];
    const id = pkt[1];
    const nas = this.nases.get(nasKey(rinfo.address, rinfo.port));
    const o = nas?.inFlight.get(id);
    if (!o) return drop('no outstanding request from this address, port and identifier', id);
    const codes = CODES[o.kind];
    if (code !== codes.ack && code !== codes.nak) return drop(`unexpected code ${code}`, id);
    const attrs = parseAttributes(pkt);
    if (!attrs) return drop('malformed attributes', id);
    const requestAuth = o.datagram.subarray(4, 20);

    // Checked here, not by the package's verify_response: it re-verifies the request's
    // Message-Authenticator in the wrong order too (and throws) and compares digests as text.
    // RFC 5176 2.3: MD5(Code|Identifier|Length|Request Authenticator|Attributes|Secret)
    const expected = createHash('md5').update(pkt.subarray(0, 4)).update(requestAuth).update(pkt.subarray(HEADER_LEN)).update(o.secret).digest();
    if (!timingSafeEqual(expected, pkt.subarray(4, 20))) return drop('bad Response Authenticator', id);
    const mas = attrs.filter((a) => a.type === MESSAGE_AUTHENTICATOR);
    if (mas.length > 1 || (mas.length === 1 && !messageAuthenticatorOk(pkt, mas[0], requestAuth, o.secret))) {
      return drop('bad Message-Authenticator', id);
    }

    this.finish(o);
    const res: CoaResponse = {
      outcome: code === codes.ack ? 'ack' : 'nak',
      code: RESPONSE_NAMES[code],
      attempts: o.attempts,
      rttMs: performance.now() - o.startedAt,
    };
    // By number: the package names Error-Cause values its own way.
    const cause = attrs.find((a) => a.type === ERROR_CAUSE && a.value.length === 4);
    if (cause) {
      res.errorCause = cause.value.readUInt32BE(0);
      res.errorCauseText = ERROR_CAUSES[res.errorCause];
    }
    // The package decodes the values; it throws on any malformed one (a 2-octet integer,
    // say), which is no reason to drop an authenticated reply.
    let values: Record<string, unknown> = {};
    try {
      values = radius.decode_without_secret({ packet: pkt }).attributes;
    } catch (err) {
      this.log.debug({ nas: o.nas, id, err: (err as Error).message }, 'RADIUS CoA response attributes not decoded');
    }
    const message = values['Reply-Message'] as string | string[] | undefined;
    if (message !== undefined) res.replyMessage = [message].flat().join('\n');
    this.log.debug({ nas: o.nas, id, code: res.code, errorCause: res.errorCause, attempts: o.attempts }, 'RADIUS CoA response');
    o.resolve(res);
  }
}

/**
 * The package's packet with a Message-Authenticator put first, then both authenticators
 * in RFC 5176 order. The package's own add_message_authenticator computes the Request
 * Authenticator first and the Message-Authenticator over it, which a NAS rejects.
 */
function buildRequest(encoded: Buffer, id: number, secret: Buffer): Buffer {
  const ma = [Buffer.from([MESSAGE_AUTHENTICATOR, 18]), Buffer.alloc(16)];
  const pkt = Buffer.concat([encoded.subarray(0, HEADER_LEN), ...ma, encoded.subarray(HEADER_LEN)]);
  pkt.writeUInt8(id, 1);
  pkt.writeUInt16BE(pkt.length, 2);
  pkt.fill(0, 4, HEADER_LEN);
  // RFC 5176 3.3: the Message-Authenticator is computed first, with both the Request
  // Authenticator and its own value zeroed...
  createHmac('md5', secret).update(pkt).digest().copy(pkt, HEADER_LEN + 2);
  // ...then the Request Authenticator (2.3) covers the final Message-Authenticator.
  createHash('md5').update(pkt).update(secret).digest().copy(pkt, 4);
  return pkt;
}

interface RawAttribute { type: number; offset: number; value: Buffer } // offset of the value in the packet

/** Here, not by the package: it silently cuts short a last attribute longer than the packet. */
function parseAttributes(pkt: Buffer): RawAttribute[] | undefined {
  const out: RawAttribute[] = [];
  for (let off = HEADER_LEN; off < pkt.length; ) {
    const len = off + 2 <= pkt.length ? pkt[off + 1] : 0;
    if (len < 2 || off + len > pkt.length) return undefined;
    out.push({ type: pkt[off], offset: off + 2, value: pkt.subarray(off + 2, off + len) });
    off += len;
  }
  return out;
}

/** RFC 5176 3.3: HMAC-MD5 over the response with the Request Authenticator in its header. */
function messageAuthenticatorOk(pkt: Buffer, ma: RawAttribute, requestAuth: Buffer, secret: Buffer): boolean {
  if (ma.value.length !== 16) return false;
  const copy = Buffer.from(pkt);
  requestAuth.copy(copy, 4);
  copy.fill(0, ma.offset, ma.offset + 16);
  return timingSafeEqual(createHmac('md5', secret).update(copy).digest(), ma.value);
}

/** Checks an attribute and puts it in the package's form; size is its encoded length. */
function toPackage([name, value]: RadiusAttribute): { attribute: unknown[]; size: number } {
  if (name === 'Message-Authenticator') throw new Error('Message-Authenticator is added automatically; do not pass it');
  const kind = KIND_OF.get(name);
  if (!kind) throw new Error(`unknown RADIUS attribute '${name}'`);
  const [v, length] = Buffer.isBuffer(value) ? [value, value.length] : packageValue(name, kind, value);
  const max = kind === 'cisco' ? 247 : 253; // 255 minus the headers
  if (length === 0 || length > max) throw new Error(`RADIUS attribute '${name}' must be 1..${max} octets, got ${length}`);
  // No Cisco dictionary in the package: vendor and attribute by number, with a Buffer value.
  if (kind === 'cisco') return { attribute: ['Vendor-Specific', 9, [[1, v]]], size: length + 8 };
  // The package's dictionaries predate RFC 6911: Framed-IPv6-Address by number.
  return { attribute: [name === 'Framed-IPv6-Address' ? 168 : name, v], size: length + 2 };
}

/** A checked value as the package encodes it, and its length in octets. */
function packageValue(name: string, kind: Kind, value: string | number): [string | number | Date | Buffer, number] {
  const bad = () => new Error(`invalid value for RADIUS attribute '${name}' (${kind}): ${JSON.stringify(value)}`);
  switch (kind) {
    case 'string':
    case 'octets':
    case 'cisco': // the package wants Buffers for octets and for attributes not in its dictionary
      if (typeof value !== 'string') throw bad();
      return [kind === 'string' ? value : Buffer.from(value, 'utf8'), Buffer.byteLength(value, 'utf8')];
    case 'integer':
    case 'date': {
      const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) throw bad();
      return [kind === 'date' ? new Date(n * 1000) : n, 4];
    }
    case 'ipaddr':
    case 'ipv6addr': // the package checks no IPv4 text and takes IPv6 only as 16 octets
      if (typeof value !== 'string' || isIP(value) !== (kind === 'ipaddr' ? 4 : 6)) throw bad();
      return kind === 'ipaddr' ? [value, 4] : [ipv6Bytes(value), 16];
  }
}

/** 16 octets of a textual IPv6 address (already validated by isIP). */
function ipv6Bytes(addr: string): Buffer {
  let s = addr.split('%')[0];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** Identifies a NAS by address bytes and port, so '::1' and '0:0::1' are the same NAS. */
function nasKey(address: string, port: number): string {
  const bytes = isIP(address) === 6 ? ipv6Bytes(address).toString('hex') : address;
  return `${bytes}|${port}`;
}
