import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Teardown } from './daemon.js';

export interface SmtpMessage {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO), lower-cased. */
  to: string[];
  /** Subject header, RFC 2047 encoded-words decoded. */
  subject: string;
  /** The text/plain part, transfer-decoded ('' if there is none). */
  text: string;
  /** The text/html part, transfer-decoded ('' if there is none). */
  html: string;
  /** Top-level headers, names lower-cased, values unfolded (last one wins). */
  headers: Record<string, string>;
  /** The user the client authenticated as, when the sink requires AUTH. */
  user?: string;
  /** The message exactly as received (CRLF line ends). */
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** Every message received so far, in arrival order. A test may empty it (`messages.length = 0`) to wait for a newer one. */
  messages: SmtpMessage[];
  /** Resolves with the first message in `messages` addressed to `to` (case-insensitive), waiting for one to arrive if needed. */
  waitForMessage(to: string, timeoutMs?: number): Promise<SmtpMessage>;
  stop(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 that keeps every message it is given. No TLS; AUTH PLAIN/LOGIN required only when `user`/`pass` are given. */
export async function startSmtpSink(t: Teardown, opts: { user?: string; pass?: string } = {}): Promise<SmtpSink> {
  const wantAuth = opts.user !== undefined || opts.pass !== undefined;
  const waiters = new Set<() => void>();
  const sink: SmtpSink = {
    port: 0,
    messages: [],
    waitForMessage(to, timeoutMs = 10_000) {
      const addr = to.toLowerCase();
      const find = () => sink.messages.find((m) => m.to.includes(addr));
      const found = find();
      if (found) return Promise.resolve(found);
      return new Promise<SmtpMessage>((resolve, reject) => {
        const check = () => {
          const m = find();
          if (!m) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = sink.messages.map((m) => m.to.join(',')).join('; ') || 'none';
          reject(new Error(`no mail to ${to} within ${timeoutMs} ms (received: ${seen})`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    stop: () => Promise.resolve(),
  };

  const options: SMTPServerOptions = {
    secure: false,
    logger: false,
    banner: 'gatewayd test sink',
    closeTimeout: 500,
    size: 10 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (err) => callback(err));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const user = session.user === undefined ? undefined : String(session.user);
        try {
          sink.messages.push(parseMessage(raw, session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            session.envelope.rcptTo.map((r) => r.address.toLowerCase()), user));
        } catch (err) {
          callback(err as Error);
          return;
        }
        callback();
        for (const w of [...waiters]) w();
      });
    },
  };
  if (wantAuth) {
    Object.assign(options, {
      disabledCommands: ['STARTTLS'],
      authMethods: ['PLAIN', 'LOGIN'],
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === opts.user && auth.password === opts.pass) callback(null, { user: auth.username });
        else callback(new Error('Invalid username or password'));
      },
    } satisfies SMTPServerOptions);
  } else {
    Object.assign(options, { disabledCommands: ['STARTTLS', 'AUTH'], authOptional: true } satisfies SMTPServerOptions);
  }

  const server = new SMTPServer(options);
  server.on('error', () => undefined); // per-connection errors (client hung up) are not the test's business
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  sink.port = (server.server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  sink.stop = () => (stopped ??= new Promise<void>((resolve) => server.close(() => resolve())));
  t.teardown(() => sink.stop());
  return sink;
}

// ---- a small MIME reader: enough for what nodemailer produces ----

interface Part { headers: Record<string, string>; body: string }

function splitPart(raw: string): Part {
  const m = /\r?\n\r?\n/.exec(raw);
  const head = m ? raw.slice(0, m.index) : raw;
  const body = m ? raw.slice(m.index + m[0].length) : '';
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

/** Parameter of a structured header, e.g. param('multipart/alternative; boundary="x"', 'boundary'). */
function param(value: string | undefined, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value ?? '');
  return m ? (m[1] ?? m[2]) : undefined;
}

function charsetDecode(bytes: Buffer, charset = 'utf-8'): string {
  try {
    return new TextDecoder(charset.toLowerCase()).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function decodeQuotedPrintable(s: string): Buffer {
  const soft = s.replace(/=\r?\n/g, '');
  const out: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i];
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      out.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(out);
}

function decodeBody(part: Part): string {
  const cte = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const charset = param(part.headers['content-type'], 'charset');
  let bytes: Buffer;
  if (cte === 'base64') bytes = Buffer.from(part.body.replace(/\s+/g, ''), 'base64');
  else if (cte === 'quoted-printable') bytes = decodeQuotedPrintable(part.body);
  else bytes = Buffer.from(part.body, 'utf8');
  return charsetDecode(bytes, charset).replace(/\r\n/g, '\n');
}

/** RFC 2047 encoded-words (=?UTF-8?Q?...?= / =?UTF-8?B?...?=), as nodemailer writes non-ASCII subjects. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?*]+)(?:\*[^?]*)?\?([QqBb])\?([^?]*)\?=/g, (_all, charset: string, enc: string, text: string) => {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQuotedPrintable(text.replace(/_/g, ' '));
      return charsetDecode(bytes, charset);
    });
}

/** Depth-first leaves of a MIME tree. */
function leaves(part: Part, depth = 0): Part[] {
  const type = (part.headers['content-type'] ?? 'text/plain').toLowerCase();
  const boundary = param(part.headers['content-type'], 'boundary');
  if (!type.startsWith('multipart/') || !boundary || depth > 10) return [part];
  const out: Part[] = [];
  const sections = part.body.split(new RegExp(`(?:^|\\r?\\n)--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*(?:\\r?\\n|$)`));
  // sections[0] is the preamble, the last one the epilogue after the closing delimiter
  for (const s of sections.slice(1, -1)) out.push(...leaves(splitPart(s), depth + 1));
  return out;
}

function parseMessage(raw: string, from: string, to: string[], user?: string): SmtpMessage {
  const top = splitPart(raw);
  top.body = top.body.replace(/\r?\n$/, ''); // the line break before the SMTP end-of-data dot ends the last line, it is not content
  const parts = leaves(top);
  const isType = (p: Part, type: string) => (p.headers['content-type'] ?? 'text/plain').toLowerCase().startsWith(type)
    && !/^attachment/i.test(p.headers['content-disposition'] ?? '');
  const textPart = parts.find((p) => isType(p, 'text/plain'));
  const htmlPart = parts.find((p) => isType(p, 'text/html'));
  return {
    from,
    to,
    subject: decodeWords(top.headers['subject'] ?? ''),
    text: textPart ? decodeBody(textPart) : '',
    html: htmlPart ? decodeBody(htmlPart) : '',
    headers: top.headers,
    user,
    raw,
  };
}
