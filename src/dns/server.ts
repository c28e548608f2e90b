import dgram from 'node:dgram';
import { createServer, isIP, type AddressInfo, type Server, type Socket } from 'node:net';
import type { HostPort } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { normalizeIp } from '../net/index.js';
import type { DnsService } from './service.js';

const TCP_IDLE_MS = 10_000; // RFC 7766 suggests seconds, not minutes
const TCP_MAX_PENDING = 64; // pipelined queries in flight per connection

/** DNS over UDP and TCP on one address (RFC 1035, RFC 7766 pipelining). */
export class DnsServer {
  private udp?: dgram.Socket;
  private tcp?: Server;
  private readonly tcpSockets = new Set<Socket>();

  constructor(private readonly service: DnsService, private readonly log: Logger) {}

  /**
   * Binds UDP and TCP on the same port. With port 0 (tests) the kernel picks the UDP port and TCP
   * follows; if that TCP port happens to be taken, both are retried on another port.
   */
  async listen(at: HostPort): Promise<{ udp: AddressInfo; tcp: AddressInfo }> {
    for (let attempt = 1; ; attempt++) {
      const udp = await this.bindUdp(at);
      try {
        const tcp = await this.listenTcp(udp.address().port, at.host);
        this.udp = udp;
        this.tcp = tcp;
        return { udp: udp.address(), tcp: tcp.address() as AddressInfo };
      } catch (err) {
        udp.close();
        if (at.port !== 0 || attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  private async bindUdp(at: HostPort): Promise<dgram.Socket> {
    const family = isIP(at.host) === 6 ? 'udp6' : 'udp4';
    // Replies go to the literal address a query came from: no name lookup (and no deferred send) needed.
    const lookup = (address: string, fam: unknown, cb: (err: null, a: string, f: unknown) => void) => cb(null, address, fam);
    const udp = dgram.createSocket({ type: family, reuseAddr: false, lookup: lookup as never });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(at.port, at.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    try {
      udp.setRecvBufferSize(4 * 1024 * 1024);
    } catch {
      // the kernel cap (net.core.rmem_max) applies; the default still works
    }
    udp.on('error', (err) => this.log.error({ err }, 'DNS UDP socket error'));
    udp.on('message', (msg, rinfo) => {
      const send = (reply: Buffer | null) => reply && udp.send(reply, rinfo.port, rinfo.address);
      const r = this.service.answer(msg, { ip: normalizeIp(rinfo.address), transport: 'udp' });
      if (r instanceof Promise) r.then(send, (err) => this.log.error({ err }, 'DNS UDP answer failed'));
      else send(r);
    });
    return udp;
  }

  private async listenTcp(port: number, host: string): Promise<Server> {
    const tcp = createServer((s) => this.onTcp(s));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, host, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    tcp.on('error', (err) => this.log.error({ err }, 'DNS TCP listener error'));
    return tcp;
  }

  private onTcp(socket: Socket): void {
    this.tcpSockets.add(socket);
    socket.once('close', () => this.tcpSockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    const ip = normalizeIp(socket.remoteAddress ?? '');
    let buf: Buffer = Buffer.alloc(0);
    let pending = 0;
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        if (++pending > TCP_MAX_PENDING) {
          socket.destroy();
          return;
        }
        Promise.resolve(this.service.answer(Buffer.from(msg), { ip, transport: 'tcp' })).then(
          (reply) => {
            pending--;
            if (!reply || socket.destroyed) return;
            const frame = Buffer.alloc(2 + reply.length);
            frame.writeUInt16BE(reply.length, 0);
            reply.copy(frame, 2);
            socket.write(frame);
          },
          () => socket.destroy(),
        );
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.tcpSockets) s.destroy();
    await Promise.all([
      new Promise<void>((r) => (this.udp ? this.udp.close(() => r()) : r())),
      new Promise<void>((r) => (this.tcp?.listening ? this.tcp.close(() => r()) : r())),
    ]);
  }
}
