import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT } from './daemon.js';
import { waitFor } from './exec.js';

/** One datagram as test/helpers/nas.py saw it. */
export interface NasPacket {
  seq: number;
  source: [string, number];
  size: number;
  raw: string; // hex of the whole datagram
  reply: string | null; // code name of the reply sent, null when none
  reason?: string; // why no reply was sent
  error?: string; // pyrad could not parse the datagram
  code?: number;
  code_name?: string;
  id?: number;
  authenticator?: string;
  attributes?: Record<string, (string | number)[]>;
  authenticator_ok?: boolean;
  message_authenticator_ok?: boolean | null;
}

export interface Nas {
  port: number;
  received: NasPacket[];
  waitForPackets(n: number, timeoutMs?: number): Promise<NasPacket[]>;
  stop(): Promise<void>;
}

export interface NasOptions {
  secret: string;
  mode?: string; // ack | nak | drop-first:N | silent | bad-auth | bad-ma
  errorCause?: number;
  port?: number;
  replyMessageAuthenticator?: boolean;
  replyMessage?: string;
}

/** Starts the pyrad-based NAS simulator on 127.0.0.1 (Debian's python3, which has pyrad). */
export async function startNas(t: { teardown(fn: () => unknown): void }, opts: NasOptions): Promise<Nas> {
  const args = [`${ROOT}test/helpers/nas.py`, '--secret', opts.secret, '--port', String(opts.port ?? 0), '--mode', opts.mode ?? 'ack'];
  if (opts.errorCause !== undefined) args.push('--error-cause', String(opts.errorCause));
  if (opts.replyMessageAuthenticator) args.push('--reply-ma');
  if (opts.replyMessage !== undefined) args.push('--reply-message', opts.replyMessage);
  // stdin stays open: nas.py exits when it closes, so a crashed test leaves nothing behind.
  const proc = spawn('/usr/bin/python3', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const received: NasPacket[] = [];
  let port = 0;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const msg = JSON.parse(line);
    if (typeof msg.listening === 'number') port = msg.listening;
    else received.push(msg);
  });

  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);
  let gone = false;
  void exited.then(() => (gone = true));
  await waitFor(() => {
    if (gone && !port) throw new Error(`nas.py exited before listening: ${stderr}`);
    return port;
  }, 10_000, 'nas.py to listen');

  return {
    port,
    received,
    async waitForPackets(n, timeoutMs = 5000) {
      try {
        return (await waitFor(() => (received.length >= n ? received.slice(0, n) : undefined), timeoutMs))!;
      } catch {
        throw new Error(`timed out waiting for ${n} datagrams at the NAS, got ${received.length}`);
      }
    },
    stop,
  };
}
