import type { Socket } from 'node:net';
import { parseClientHello } from './clienthello.js';

export type HelloRead =
  | { ok: true; data: Buffer; sni: string | null; alpn: string[]; ech: boolean }
  | { ok: false; data: Buffer; outcome: 'hello-timeout' | 'bad-hello' | 'hello-too-large' | 'client-closed'; reason: string };

/**
 * Reads from the socket until the whole ClientHello has arrived (it may come one byte at a time
 * or across several records), without losing a byte: the caller replays `data` to whoever
 * handles the connection. Leaves the socket paused.
 */
export function readClientHello(socket: Socket, timeoutMs: number, maxBytes: number): Promise<HelloRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: HelloRead) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
      socket.pause();
      resolve(result);
    };
    const data = () => Buffer.concat(chunks, size);
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const buf = data();
      const parsed = parseClientHello(buf);
      if (parsed.status === 'ok') finish({ ok: true, data: buf, sni: parsed.sni, alpn: parsed.alpn, ech: parsed.ech });
      else if (parsed.status === 'invalid') finish({ ok: false, data: buf, outcome: 'bad-hello', reason: parsed.reason });
      else if (size >= maxBytes) finish({ ok: false, data: buf, outcome: 'hello-too-large', reason: `no complete ClientHello in ${size} bytes` });
    };
    const onEnd = () => finish({ ok: false, data: data(), outcome: 'client-closed', reason: 'client closed before a complete ClientHello' });
    const timer = setTimeout(
      () => finish({ ok: false, data: data(), outcome: 'hello-timeout', reason: `no complete ClientHello within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.once('error', onEnd);
    socket.resume();
  });
}
