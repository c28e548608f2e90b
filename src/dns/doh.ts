import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import dnsPacket from 'dns-packet';
import { normalizeIp } from '../net/index.js';
import type { DnsService } from './service.js';

const MEDIA = 'application/dns-message';
const MAX_MESSAGE = 65535;

/** The smallest TTL in an answer: how long an HTTP cache may keep it (RFC 8484 section 5.1). */
function maxAge(wire: Buffer): number {
  try {
    const p = dnsPacket.decode(wire);
    const ttls = [...(p.answers ?? []), ...(p.authorities ?? [])].map((a) => (a as { ttl?: number }).ttl ?? 0);
    return ttls.length ? Math.min(...ttls) : 0;
  } catch {
    return 0;
  }
}

function fail(reply: FastifyReply, status: number, error: string, message: string) {
  return reply.code(status).send({ error, message });
}

/** DNS over HTTPS (RFC 8484) at /dns-query: GET ?dns=<base64url> and POST application/dns-message. */
export function registerDoh(app: FastifyInstance, service: DnsService): void {
  app.addContentTypeParser(MEDIA, { parseAs: 'buffer', bodyLimit: MAX_MESSAGE }, (_req, body, done) => done(null, body));

  const answer = async (req: FastifyRequest, reply: FastifyReply, message: Buffer) => {
    if (message.length < 12) return fail(reply, 400, 'bad_request', 'the DNS message is shorter than a DNS header (12 bytes)');
    const wire = await service.answer(message, { ip: normalizeIp(req.ip), transport: 'doh' });
    if (!wire) return fail(reply, 400, 'bad_request', 'the DNS message cannot be answered');
    return reply.type(MEDIA).header('cache-control', `max-age=${maxAge(wire)}`).send(wire);
  };

  app.get('/dns-query', async (req, reply) => {
    const param = (req.query as Record<string, unknown>).dns;
    if (typeof param !== 'string' || param === '') return fail(reply, 400, 'bad_request', 'the "dns" query parameter (base64url DNS message) is missing');
    if (!/^[A-Za-z0-9_-]+$/.test(param)) return fail(reply, 400, 'bad_request', 'the "dns" parameter must be base64url without padding');
    return answer(req, reply, Buffer.from(param, 'base64url'));
  });

  app.post('/dns-query', async (req, reply) => {
    if (!Buffer.isBuffer(req.body)) {
      return fail(reply, 415, 'unsupported_media_type', `POST /dns-query takes Content-Type: ${MEDIA}`);
    }
    return answer(req, reply, req.body);
  });
}
