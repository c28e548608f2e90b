import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.js';
import { HOSTNAME, tempDir, type RunningDaemon, type Teardown } from './daemon.js';

export interface CurlResponse {
  status: number;
  head: string;
  body: string;
  location?: string;
  json(): any;
}

export type Curl = (path: string, args?: string[]) => Promise<CurlResponse>;

/**
 * curl with its own cookie jar, like one browser, talking to the daemon's https port as
 * gw.test. `source` binds the client address (127.0.0.x), which picks the tenant.
 */
export function curlSession(t: Teardown, gw: Pick<RunningDaemon, 'httpsPort'>, opts: { source?: string; host?: string } = {}): Curl {
  const jar = join(tempDir(t, 'gwjar-'), 'cookies');
  const host = opts.host ?? HOSTNAME;
  return async (path, args = []) => {
    const bind = opts.source ? ['--interface', opts.source] : [];
    const r = await run('curl', ['-sS', '-k', '--resolve', `${host}:${gw.httpsPort}:127.0.0.1`, ...bind, '-b', jar, '-c', jar, '-D', '-', ...args, `https://${host}:${gw.httpsPort}${path}`]);
    if (r.code !== 0) throw new Error(`curl ${path} failed: ${r.stderr}`);
    const [head, ...rest] = r.stdout.split('\r\n\r\n');
    const body = rest.join('\r\n\r\n');
    return {
      status: Number(/^HTTP\/\S+ (\d+)/.exec(head)?.[1]),
      head,
      body,
      location: /^location: (.+)$/im.exec(head)?.[1].trim(),
      json: () => JSON.parse(body),
    };
  };
}

export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** Submits the portal form the way a browser would: GET /portal (with the controller's query), then POST it. */
export async function enroll(curl: Curl, email: string, handoff: Record<string, string> = {}): Promise<CurlResponse> {
  const qs = new URLSearchParams(handoff).toString();
  const form = await curl(`/portal${qs ? `?${qs}` : ''}`);
  const fields = [...form.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, k, v]) => [k, v.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')]);
  const args = [...fields, ['email', email]].flatMap(([k, v]) => ['--data-urlencode', `${k}=${v}`]);
  return curl('/portal/enroll', args);
}

/** Signs in as an admin; returns a session plus a CSRF token for its JSON API calls. */
export async function adminSession(t: Teardown, gw: RunningDaemon, opts: { username?: string; password?: string; source?: string } = {}): Promise<{ curl: Curl; csrf: string; api: (method: string, path: string, body?: unknown) => Promise<CurlResponse> }> {
  const curl = curlSession(t, gw, { source: opts.source });
  const password = opts.password ?? readFileSync(join(gw.dataDir, 'initial-admin-password'), 'utf8').trim();
  const form = await curl('/admin/login');
  const r = await curl('/admin/login', ['--data-urlencode', `username=${opts.username ?? 'admin'}`, '--data-urlencode', `password=${password}`, '--data-urlencode', `_csrf=${csrfOf(form.body)}`]);
  if (r.status !== 303) throw new Error(`admin login failed: ${r.status} ${r.body}`);
  const csrf = /name="csrf-token" content="([^"]+)"/.exec((await curl('/portal-admin.html')).body)?.[1] ?? '';
  const api = (method: string, path: string, body?: unknown) =>
    curl(path, ['-X', method, '-H', `x-csrf-token: ${csrf}`, ...(body === undefined ? [] : ['-H', 'content-type: application/json', '--data-binary', JSON.stringify(body)])]);
  return { curl, csrf, api };
}
