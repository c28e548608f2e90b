import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths that may carry secrets anywhere in a log object; pino replaces them before writing. */
const REDACT = [
  'password', '*.password', 'secret', '*.secret', 'token', '*.token', 'apiKey', '*.apiKey',
  'key', '*.key', 'cookie', '*.cookie', 'clientSecret', '*.clientSecret',
  'admitWebhookSecret', '*.admitWebhookSecret', 'webhookSecret', '*.webhookSecret',
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]',
  'res.headers["set-cookie"]', 'headers.authorization', 'headers.cookie',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { svc: 'gatewayd' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
