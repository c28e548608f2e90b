// One attempt at delivering a signed admit webhook, and how to classify it.
// The durable outbox owns retries: it calls postWebhook once per attempt and
// uses retryDelayMs / WEBHOOK_MAX_ATTEMPTS to schedule the next one.
import { createHmac } from 'node:crypto';

export interface AdmitEvent {
  event: 'device.admit';
  org: string;
  deviceKey: string;
  framedIp: string;
  action: 'coa-reauthorize';
  at: number;
}

/** 'sha256=' + lowercase hex HMAC-SHA256(secret, body) (GitHub's X-Hub-Signature-256 convention). */
export function signBody(body: string | Buffer, secret: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

export interface WebhookAttempt {
  url: string;
  secret: string;
  /** Sent byte for byte (UTF-8); the signature covers exactly these bytes. */
  body: string;
  deliveryId: string;
  event: string;
  timeoutMs?: number;
  userAgent?: string;
}

export type WebhookResult =
  | { outcome: 'delivered'; status: number; durationMs: number }
  | { outcome: 'retry'; status?: number; retryAfterMs?: number; error: string; durationMs: number }
  | { outcome: 'gone'; status: 410; error: string; durationMs: number };

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** 16 attempts span about a day and a half with the schedule below. */
export const WEBHOOK_MAX_ATTEMPTS = 16;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** A receiver may not park us for longer than this, and no delay exceeds it. */
const MAX_DELAY_MS = 24 * HOUR;
/** Standard Webhooks style, but starting short so a blip of a few minutes heals fast. */
const SCHEDULE_MS = [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR];
/** Enough of an error response to explain it; the rest is not read. */
const MAX_ERROR_BODY_BYTES = 4096;
const MAX_ERROR_SNIPPET_CHARS = 200;

/** Delay before the next attempt after `failures` failed ones (1-based). */
export function retryDelayMs(failures: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const n = Number.isFinite(failures) ? Math.max(1, Math.floor(failures)) : 1;
  const base = SCHEDULE_MS[Math.min(n, SCHEDULE_MS.length) - 1];
  // ±20% jitter so many gateways recovering together do not hit the receiver in lockstep.
  const r = Math.min(1, Math.max(0, random()));
  let delay = base * (0.8 + 0.4 * r);
  // The receiver asked us to wait at least this long; honour it exactly, without jitter below it.
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs > delay) delay = retryAfterMs;
  return Math.round(Math.min(delay, MAX_DELAY_MS));
}

/** Retry-After as delta-seconds or an HTTP-date (any of RFC 9110's three forms) → ms from now; garbage → undefined. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  let ms: number;
  if (/^\d+$/.test(v)) {
    ms = Number(v) * SECOND;
  } else {
    // Date.parse alone is far too lenient ("1.5" is a date to V8), so insist on a leading day name,
    // which all three HTTP-date forms have. asctime has no zone but means GMT.
    if (!/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,? /i.test(v)) return undefined;
    const t = Date.parse(/(gmt|utc|z)$/i.test(v) || v.includes(',') ? v : `${v} GMT`);
    if (Number.isNaN(t)) return undefined;
    ms = Math.max(0, t - now);
  }
  return Math.min(ms, MAX_DELAY_MS);
}

/** Makes one delivery attempt. Never rejects: every failure becomes a 'retry' (or 'gone' for 410). */
export async function postWebhook(attempt: WebhookAttempt): Promise<WebhookResult> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const timeoutMs = attempt.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // Belt and braces: our messages never contain the secret, but a receiver's body might echo it.
  // (A toy secret of a few characters would match ordinary words, so those are left alone.)
  const redact = (s: string) => (attempt.secret.length >= 8 ? s.split(attempt.secret).join('[redacted]') : s);
  const retry = (error: string, status?: number, retryAfterMs?: number): WebhookResult => ({
    outcome: 'retry',
    ...(status !== undefined && { status }),
    ...(retryAfterMs !== undefined && { retryAfterMs }),
    error: redact(error),
    durationMs: durationMs(),
  });

  try {
    let scheme: string;
    try {
      scheme = new URL(attempt.url).protocol;
    } catch {
      return retry('invalid webhook URL');
    }
    // fetch also speaks data: and blob:, which would "deliver" without any receiver.
    if (scheme !== 'http:' && scheme !== 'https:') return retry(`unsupported webhook URL scheme ${scheme}`);

    // One signal covers connecting, the response head and reading the error body.
    const signal = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(attempt.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': attempt.userAgent ?? 'gatewayd',
          'X-Gateway-Signature': signBody(attempt.body, attempt.secret),
          'X-Gateway-Delivery': attempt.deliveryId,
          'X-Gateway-Event': attempt.event,
        },
        body: attempt.body,
        // A redirect would carry the signed body somewhere the tenant did not configure.
        redirect: 'manual',
        signal,
      });
    } catch (err) {
      return retry(describeError(err, timeoutMs));
    }

    const status = res.status;
    if (status >= 200 && status < 300) {
      // The receiver's answer does not matter; drop it rather than read an unbounded body.
      await res.body?.cancel().catch(() => undefined);
      return { outcome: 'delivered', status, durationMs: durationMs() };
    }

    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
    const snippet = await readSnippet(res);
    let error = `HTTP ${status}${res.statusText ? ' ' + res.statusText : ''}`;
    if (status >= 300 && status < 400) {
      const location = res.headers.get('location');
      error += location ? ` (redirect to ${truncate(location)} not followed)` : ' (redirect not followed)';
    }
    if (snippet) error += `: ${snippet}`;
    // 410 is the receiver saying this endpoint is gone for good: stop trying.
    if (status === 410) return { outcome: 'gone', status: 410, error: redact(error), durationMs: durationMs() };
    return retry(error, status, retryAfterMs);
  } catch (err) {
    return retry(describeError(err, timeoutMs));
  }
}

/** The first bytes of a response body as one short line; reading stops at the cap and the rest is cancelled. */
async function readSnippet(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that times out or breaks halfway still leaves us the status; keep what arrived.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
  return truncate(text.replace(/\s+/g, ' ').trim());
}

function truncate(s: string): string {
  return s.length > MAX_ERROR_SNIPPET_CHARS ? s.slice(0, MAX_ERROR_SNIPPET_CHARS) + '…' : s;
}

/** undici reports everything as "TypeError: fetch failed"; the useful part is in its cause chain. */
function describeError(err: unknown, timeoutMs: number): string {
  let e: any = err;
  for (let i = 0; i < 5 && e; i++) {
    if (e.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
    if (e.name === 'AbortError') return 'aborted';
    // Happy-eyeballs failures arrive as an AggregateError with an empty message.
    if (e instanceof AggregateError && e.errors.length) {
      e = e.errors[0];
      continue;
    }
    if (e.cause && (e.message === 'fetch failed' || !e.message)) {
      e = e.cause;
      continue;
    }
    break;
  }
  if (!e) return 'unknown error';
  const message = String(e.message || e.code || e);
  const code = typeof e.code === 'string' && !message.includes(e.code) ? ` (${e.code})` : '';
  return truncate(message + code);
}
