import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type { GatewayConfig } from '../config/index.js';
import type { GatewayContext } from '../http/context.js';
import type { OtpChallenge } from '../store/index.js';

/** A refusal the portal shows next to the code field, with its HTTP status. */
export interface OtpRefusal {
  status: number;
  message: string;
}

const hashCode = (challengeId: string, code: string) => createHash('sha256').update(`${challengeId}:${code}`).digest();

function newCode(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String(randomInt(10));
  return s;
}

/** nodemailer transports, one per distinct SMTP config (a reload with new settings gets a new one). */
const transports = new Map<string, Transporter>();

function transportFor(smtp: NonNullable<GatewayConfig['smtp']>): Transporter {
  const key = JSON.stringify(smtp);
  let t = transports.get(key);
  if (!t) {
    for (const old of transports.values()) old.close();
    transports.clear();
    t = nodemailer.createTransport({
      host: smtp.host, port: smtp.port, secure: smtp.secure, requireTLS: smtp.requireTls,
      auth: smtp.user ? { user: smtp.user, pass: smtp.pass ?? '' } : undefined,
      connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000,
    });
    transports.set(key, t);
  }
  return t;
}

async function mailCode(ctx: GatewayContext, to: string, code: string, orgName: string): Promise<void> {
  const c = ctx.config();
  if (!c.smtp) throw new Error('no smtp block in the config');
  const minutes = c.otp.ttlMinutes;
  await transportFor(c.smtp).sendMail({
    from: c.smtp.from,
    to,
    subject: `${code} is your ${orgName} network code`,
    text: `Your code to join the ${orgName} network is ${code}.\n\nIt expires in ${minutes} minutes. If you did not ask for it, ignore this message.\n`,
  });
}

/** Sends a code to `email` and opens a challenge for it; refuses when the hourly limits are reached. */
export async function startChallenge(
  ctx: GatewayContext,
  req: { tenantId: string; orgName: string; email: string; clientIp: string; handoff: Record<string, string> | null; userAgent: string | null },
): Promise<{ id: string } | OtpRefusal> {
  const c = ctx.config().otp;
  const id = randomBytes(18).toString('base64url');
  const code = newCode(c.length);
  const now = Date.now();
  const reserved = await ctx.store.otp.reserve(
    {
      id, tenantId: req.tenantId, email: req.email, codeHash: hashCode(id, code).toString('hex'), clientIp: req.clientIp,
      handoff: req.handoff, userAgent: req.userAgent, createdAt: now, expiresAt: now + c.ttlMinutes * 60e3, lastSentAt: now,
    },
    { perEmail: c.maxPerHour, perClient: c.maxPerHour * 2, since: now - 3600e3 },
  );
  if (!reserved) return { status: 429, message: 'Too many codes were sent to this address in the last hour. Wait a while and try again.' };
  try {
    await mailCode(ctx, req.email, code, req.orgName);
  } catch (err) {
    await ctx.store.otp.unsent(id);
    ctx.log.error({ err: { message: (err as Error).message }, tenant: req.tenantId }, 'could not send the one-time code');
    return { status: 502, message: 'The code could not be sent right now. Try again in a minute; if it keeps failing, tell IT.' };
  }
  ctx.log.info({ tenant: req.tenantId, email: req.email, client: req.clientIp }, 'one-time code sent');
  return { id };
}

/** Checks a code in constant time; wrong codes count towards the limit, after which the challenge is locked. */
export async function verifyChallenge(ctx: GatewayContext, id: string, code: string, clientIp: string): Promise<{ challenge: OtpChallenge } | (OtpRefusal & { locked?: boolean })> {
  const ch = await ctx.store.otp.get(id);
  if (!ch || ch.clientIp !== clientIp) return { status: 404, message: 'This code request is unknown here. Start again.', locked: true };
  if (ch.state === 'used') return { status: 409, message: 'This code was already used. Start again.', locked: true };
  if (ch.state === 'locked') return { status: 429, message: 'Too many wrong codes. Start again to get a new code.', locked: true };
  if (Date.now() > ch.expiresAt) return { status: 410, message: 'The code has expired. Ask for a new code.' };
  const max = ctx.config().otp.maxAttempts;
  const given = code.replace(/\s+/g, '');
  const ok = /^\d{1,10}$/.test(given) && timingSafeEqual(hashCode(id, given), Buffer.from(ch.codeHash, 'hex'));
  if (!ok) {
    const attempts = await ctx.store.otp.failAttempt(id, max);
    ctx.log.warn({ tenant: ch.tenantId, email: ch.email, client: clientIp, attempts }, 'wrong one-time code');
    if (attempts >= max) return { status: 429, message: 'Too many wrong codes. Start again to get a new code.', locked: true };
    const left = max - attempts;
    return { status: 400, message: `That code is not right. ${left} ${left === 1 ? 'try' : 'tries'} left.` };
  }
  if (!(await ctx.store.otp.consume(id))) return { status: 409, message: 'This code was already used. Start again.', locked: true };
  return { challenge: ch };
}

/** Sends a fresh code for an open challenge, no sooner than resendSeconds after the last one. */
export async function resendChallenge(ctx: GatewayContext, id: string, clientIp: string, orgName: string): Promise<{ ok: true } | OtpRefusal> {
  const c = ctx.config().otp;
  const ch = await ctx.store.otp.get(id);
  if (!ch || ch.clientIp !== clientIp || ch.state !== 'open') return { status: 404, message: 'This code request is no longer open. Start again.' };
  const now = Date.now();
  const limits = { perEmail: c.maxPerHour, perClient: c.maxPerHour * 2, since: now - 3600e3 };
  if (!(await ctx.store.otp.claimResend(id, now, now - c.resendSeconds * 1000, limits))) {
    const wait = Math.ceil((ch.lastSentAt + c.resendSeconds * 1000 - now) / 1000);
    if (wait > 0) return { status: 429, message: `A code was sent moments ago. You can ask for another in ${wait} s.` };
    return { status: 429, message: 'Too many codes were sent to this address in the last hour. Wait a while and try again.' };
  }
  const code = newCode(c.length);
  try {
    await mailCode(ctx, ch.email, code, orgName);
  } catch (err) {
    await ctx.store.otp.resendFailed(id);
    ctx.log.error({ err: { message: (err as Error).message }, tenant: ch.tenantId }, 'could not resend the one-time code');
    return { status: 502, message: 'The code could not be sent right now. Try again in a minute.' };
  }
  await ctx.store.otp.resent(id, hashCode(id, code).toString('hex'), Date.now() + c.ttlMinutes * 60e3);
  return { ok: true };
}
