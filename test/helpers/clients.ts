import { run, type RunResult } from './exec.js';

/** curl to a name that resolves (for curl only) to 127.0.0.1:port; returns body, status and HTTP version. */
export async function curl(name: string, port: number, path: string, args: string[] = []): Promise<RunResult & { status: number; httpVersion: string; body: string }> {
  const marker = '\n--curl-meta--';
  const r = await run('curl', [
    '-sS', '--max-time', '15', '--resolve', `${name}:${port}:127.0.0.1`,
    '-w', `${marker}%{http_code} %{http_version}`,
    ...args, `https://${name}:${port}${path}`,
  ]);
  const idx = r.stdout.lastIndexOf(marker);
  const [status, httpVersion] = idx >= 0 ? r.stdout.slice(idx + marker.length).split(' ') : ['0', ''];
  return { ...r, status: Number(status), httpVersion, body: idx >= 0 ? r.stdout.slice(0, idx) : r.stdout };
}

/** openssl s_client with SNI; returns everything it printed, certificates included. */
export function sClient(port: number, servername: string | null, extra: string[] = []): Promise<RunResult> {
  const sni = servername ? ['-servername', servername] : ['-noservername'];
  return run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...sni, '-showcerts', ...extra], { input: '', timeoutMs: 15000 });
}

/** The first PEM certificate in a text. */
export function firstPem(text: string): string | undefined {
  return /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(text)?.[0];
}

export async function fingerprintOf(pem: string): Promise<string> {
  const r = await run('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: pem });
  return r.stdout.trim().split('=')[1];
}
