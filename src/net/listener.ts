import { createServer, isIP, type AddressInfo, type Server, type Socket } from 'node:net';
import type { HostPort } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';
import type { BatchWriter, FlowRecord } from '../store/index.js';
import { readClientHello } from './hello-reader.js';
import { connectUpstream, splice } from './relay.js';
import type { RouteDecision, SniRouter } from './router.js';

export interface RelaySettings {
  helloTimeoutMs: number;
  maxHelloBytes: number;
  connectTimeoutMs: number;
  idleTimeoutSec: number;
  passthroughPort: number;
}

export interface TlsListenerDeps {
  log: Logger;
  metrics: Metrics;
  flows: BatchWriter<FlowRecord>;
  /** Current router and settings; both are swapped on reload, so read them per connection. */
  router: () => SniRouter;
  settings: () => RelaySettings;
  resolve: (name: string) => Promise<string>;
  /** Hands a socket (ClientHello replayed into it) to the gateway's own TLS server. */
  terminate: (socket: Socket) => void;
  /** Content inspection fills this in; until then intercept decisions pass through. */
  intercept?: (socket: Socket, hello: Buffer, sni: string) => void;
}

interface FlowStart {
  startedAt: number;
  clientIp: string;
  clientPort: number;
}

/** The 443 listener: peek the ClientHello, then terminate, intercept or pass through by SNI. */
export class TlsListener {
  private server: Server;
  /** Open connections and their route, so a drain can treat terminated HTTP and relays differently. */
  private readonly sockets = new Map<Socket, string>();

  constructor(private readonly deps: TlsListenerDeps) {
    this.server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => {
      void this.handle(socket).catch((err) => {
        // Last line of defence: a bug in routing must not take the process down.
        this.deps.log.error({ err }, 'connection handler failed');
        socket.destroy();
      });
    });
    this.server.on('error', (err) => this.deps.log.error({ err }, 'TLS listener error'));
  }

  listen(at: HostPort): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: at.host, port: at.port, backlog: 1024 }, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  get activeConnections(): number {
    return this.sockets.size;
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /**
   * Stops accepting and lets relayed connections finish for up to drainMs before cutting them.
   * Terminated connections are HTTP with short requests: they get one second, then go.
   */
  async close(drainMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const start = Date.now();
    while (this.sockets.size > 0 && Date.now() - start < drainMs) {
      if (Date.now() - start > Math.min(1000, drainMs)) {
        for (const [s, route] of this.sockets) if (route !== 'passthrough') s.destroy();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const s of this.sockets.keys()) s.destroy();
    await closed;
  }

  private async handle(socket: Socket): Promise<void> {
    const { log, metrics, settings } = this.deps;
    const start: FlowStart = {
      startedAt: Date.now(),
      clientIp: normalizeIp(socket.remoteAddress ?? ''),
      clientPort: socket.remotePort ?? 0,
    };
    this.sockets.set(socket, 'hello');
    metrics.activeConnections.inc();
    socket.on('error', () => undefined); // errors are handled where the socket is used
    socket.once('close', () => {
      this.sockets.delete(socket);
      metrics.activeConnections.dec();
    });

    const s = settings();
    const hello = await readClientHello(socket, s.helloTimeoutMs, s.maxHelloBytes);
    if (!hello.ok) {
      // Without a name there is nowhere to pass the bytes on to: close, as HAProxy does without a default backend.
      if (hello.outcome !== 'client-closed') log.debug({ client: start.clientIp, reason: hello.reason }, 'dropping connection without a usable ClientHello');
      socket.destroy();
      this.record(start, null, 'reject', null, socket.bytesRead, 0, hello.outcome);
      return;
    }

    let decision: RouteDecision;
    try {
      decision = this.deps.router().decide(hello.sni, start.clientIp);
    } catch (err) {
      log.error({ err, sni: hello.sni }, 'routing failed; passing the connection through');
      decision = hello.sni ? { kind: 'passthrough', sni: hello.sni, to: null } : { kind: 'terminate' };
    }

    this.sockets.set(socket, decision.kind);
    if (decision.kind === 'intercept' && this.deps.intercept) {
      this.deps.intercept(socket, hello.data, decision.sni);
      return;
    }
    if (decision.kind === 'terminate') {
      socket.once('close', () => this.record(start, hello.sni, 'terminate', null, socket.bytesRead, socket.bytesWritten, 'ok'));
      socket.unshift(hello.data);
      this.deps.terminate(socket);
      return;
    }
    await this.passthrough(socket, hello.data, decision.sni, decision.kind === 'passthrough' ? decision.to : null, start, s);
  }

  private async passthrough(
    client: Socket,
    hello: Buffer,
    sni: string,
    to: HostPort | null,
    start: FlowStart,
    s: RelaySettings,
  ): Promise<void> {
    const { log, metrics } = this.deps;
    let host: string;
    const port = to?.port ?? s.passthroughPort;
    try {
      host = to?.host ?? (await this.deps.resolve(sni));
    } catch (err) {
      log.info({ sni, client: start.clientIp, err: (err as Error).message }, 'passthrough: cannot resolve destination');
      client.destroy();
      this.record(start, sni, 'passthrough', null, hello.length, 0, 'resolve-failed');
      return;
    }
    const destination = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    if (this.isSelf(client, host, port)) {
      log.warn({ sni, destination }, 'passthrough destination is this listener; refusing to loop');
      client.destroy();
      this.record(start, sni, 'passthrough', destination, hello.length, 0, 'loop');
      return;
    }
    let upstream: Socket;
    try {
      upstream = await connectUpstream(host, port, s.connectTimeoutMs, client);
    } catch (err) {
      log.info({ sni, destination, err: (err as Error).message }, 'passthrough: cannot connect');
      client.destroy();
      this.record(start, sni, 'passthrough', destination, hello.length, 0, 'connect-failed');
      return;
    }
    if (client.destroyed) {
      upstream.destroy();
      this.record(start, sni, 'passthrough', destination, hello.length, 0, 'client-closed');
      return;
    }
    const result = await splice(client, upstream, hello, s.idleTimeoutSec * 1000);
    metrics.relayedBytes.inc({ direction: 'up' }, result.bytesUp);
    metrics.relayedBytes.inc({ direction: 'down' }, result.bytesDown);
    this.record(start, sni, 'passthrough', destination, result.bytesUp, result.bytesDown, result.outcome);
  }

  private isSelf(client: Socket, host: string, port: number): boolean {
    const local = normalizeIp(client.localAddress ?? '');
    return port === client.localPort && (host === local || (local === '0.0.0.0' && /^127\./.test(host)));
  }

  private record(start: FlowStart, sni: string | null, route: string, destination: string | null, up: number, down: number, outcome: string): void {
    this.deps.metrics.connections.inc({ route, outcome });
    this.deps.flows.record({
      ...start,
      sni,
      route,
      destination,
      bytesUp: up,
      bytesDown: down,
      durationMs: Date.now() - start.startedAt,
      outcome,
    });
  }
}

/** "::ffff:10.0.0.1" -> "10.0.0.1", so IPv4 clients look the same on a dual-stack socket. */
export function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}
