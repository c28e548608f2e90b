// Runs test/helpers/webhook-receiver.py: a webhook receiver that checks signatures on its own,
// with Python's hmac, so the tests do not grade gatewayd's signing with gatewayd's code.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT } from './daemon.js';
import { waitFor } from './exec.js';

export interface WebhookDelivery {
  path: string;
  headers: Record<string, string>;
  body: string;
  json: any;
  signatureOk: boolean;
  status: number;
}

export interface WebhookReceiver {
  port: number;
  url: string;
  deliveries: WebhookDelivery[];
  waitForDeliveries(n: number, timeoutMs?: number): Promise<WebhookDelivery[]>;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(
  t: { teardown(fn: () => unknown): void },
  opts: { secret: string; responses?: number[]; retryAfter?: number; port?: number },
): Promise<WebhookReceiver> {
  const args = [`${ROOT}test/helpers/webhook-receiver.py`, '--secret', opts.secret, '--port', String(opts.port ?? 0)];
  if (opts.responses?.length) args.push('--responses', opts.responses.join(','));
  if (opts.retryAfter !== undefined) args.push('--retry-after', String(opts.retryAfter));
  // stdin stays open: the receiver exits when it closes, i.e. when this process goes away.
  const child = spawn('/usr/bin/python3', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const deliveries: WebhookDelivery[] = [];

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook receiver did not start: ${stderr}`)), 10_000);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`webhook receiver exited: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      if ('listening' in m) {
        clearTimeout(timer);
        resolve(m.listening);
        return;
      }
      deliveries.push({ path: m.path, headers: m.headers, body: m.body, json: m.json, signatureOk: m.signature_ok, status: m.status });
    });
  });

  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    waitForDeliveries: (n, timeoutMs = 5000) =>
      // waitFor only returns once the value is truthy, i.e. the array.
      waitFor(() => deliveries.length >= n && deliveries.slice(0, n), timeoutMs, `${n} webhook deliveries`) as Promise<WebhookDelivery[]>,
    stop,
  };
}
