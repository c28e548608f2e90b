import { Socket } from 'node:net';

export interface SpliceResult {
  bytesUp: number;
  bytesDown: number;
  outcome: 'ok' | 'idle-timeout' | 'client-reset' | 'client-error' | 'upstream-reset' | 'upstream-error';
}

const READ_BUFFER = 64 * 1024;

/**
 * Opens a TCP connection to the destination, failing after timeoutMs. What the destination sends
 * is written straight to `client` from one reused read buffer (Node's onread): reading pauses
 * until each chunk is handed to the kernel, which is the back-pressure, and no buffer is
 * allocated per read (pipe() allocates 64 KiB per read and the page faults cost as much as the
 * copying).
 */
export function connectUpstream(host: string, port: number, timeoutMs: number, client: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock: Socket = new Socket({
      allowHalfOpen: true,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER),
        callback: (n: number, buf: Uint8Array) => {
          if (client.destroyed) return false;
          client.write(buf.subarray(0, n), (err) => {
            if (!err && !sock.destroyed) sock.resume();
          });
          return false; // the buffer is reused: read again only once this chunk is out
        },
      },
    } as ConstructorParameters<typeof Socket>[0]);
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
 * Splices client and upstream in both directions: client to upstream with pipe() (back-pressure
 * without buffering more than a socket's high-water mark), upstream to client through the read
 * buffer of connectUpstream. A FIN travels on (half-close) and the pair is torn down when both
 * directions are done, on an error, or after idleMs without traffic.
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
    // A reset is how many clients and servers end a connection (unread data at close): say so apart from real errors.
    const isReset = (err: NodeJS.ErrnoException) => err.code === 'ECONNRESET' || err.code === 'EPIPE';
    client.on('error', (err) => teardown(isReset(err) ? 'client-reset' : 'client-error'));
    upstream.on('error', (err) => teardown(isReset(err) ? 'upstream-reset' : 'upstream-error'));
    client.setTimeout(idleMs, () => teardown('idle-timeout'));
    upstream.setTimeout(idleMs, () => teardown('idle-timeout'));
    client.once('close', onClose);
    upstream.once('close', onClose);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    upstream.write(firstBytes);
    client.pipe(upstream);
    upstream.once('end', () => client.end());
    client.resume();
    upstream.resume();
  });
}
