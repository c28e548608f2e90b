import { Socket } from 'node:net';

export interface SpliceResult {
  bytesUp: number;
  bytesDown: number;
  outcome: 'ok' | 'idle-timeout' | 'client-error' | 'upstream-error';
}

/** Opens a TCP connection, failing after timeoutMs. */
export function connectTcp(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = new Socket({ allowHalfOpen: true });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`connect to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    sock.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    sock.connect(port, host, () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      resolve(sock);
    });
  });
}

/**
 * Splices client and upstream in both directions. pipe() gives back-pressure without buffering
 * more than a socket's high-water mark; a FIN travels on (half-close) and the pair is torn down
 * when both directions are done, on an error, or after idleMs without traffic.
 */
export function splice(client: Socket, upstream: Socket, firstBytes: Buffer, idleMs: number): Promise<SpliceResult> {
  return new Promise((resolve) => {
    let outcome: SpliceResult['outcome'] = 'ok';
    let closed = 0;
    const upstreamWrittenBefore = upstream.bytesWritten;
    const onClose = () => {
      if (++closed < 2) return;
      resolve({
        bytesUp: upstream.bytesWritten - upstreamWrittenBefore,
        bytesDown: client.bytesWritten,
        outcome,
      });
    };
    const teardown = (why: SpliceResult['outcome']) => {
      if (outcome === 'ok') outcome = why;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', () => teardown('client-error'));
    upstream.on('error', () => teardown('upstream-error'));
    client.setTimeout(idleMs, () => teardown('idle-timeout'));
    upstream.setTimeout(idleMs, () => teardown('idle-timeout'));
    client.once('close', onClose);
    upstream.once('close', onClose);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    upstream.write(firstBytes);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
}
