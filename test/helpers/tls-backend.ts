import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { run } from './exec.js';
import { tempDir, type Teardown } from './daemon.js';

export interface Backend {
  port: number;
  caFile: string;
  certFile: string;
  /** SHA-256 fingerprint of the backend's own certificate, as openssl prints it. */
  fingerprint: string;
  server: Server;
}

async function openssl(args: string[]): Promise<string> {
  const r = await run('openssl', args);
  if (r.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** A certificate for `names` signed by a throwaway CA of its own (not the gateway's), made with openssl. */
export async function makeBackendCert(dir: string, names: string[]): Promise<{ caFile: string; certFile: string; keyFile: string }> {
  const p = (f: string) => join(dir, f);
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('be-ca.key'), '-out', p('be-ca.pem'), '-subj', '/CN=Backend Test CA', '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('be.key'), '-out', p('be.csr'), '-subj', `/CN=${names[0]}`]);
  writeFileSync(p('be.ext'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  await openssl(['x509', '-req', '-in', p('be.csr'), '-CA', p('be-ca.pem'), '-CAkey', p('be-ca.key'), '-CAcreateserial', '-out', p('be.pem'), '-days', '2', '-extfile', p('be.ext')]);
  return { caFile: p('be-ca.pem'), certFile: p('be.pem'), keyFile: p('be.key') };
}

/** Deterministic bytes, so a test can check a large body arrived intact. */
export function pattern(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 8)) & 0xff;
  return b;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A real HTTPS server with its own certificate: the destination of passthrough tests. */
export async function startBackend(t: Teardown, names = ['backend.test', '*.wild.test']): Promise<Backend> {
  const dir = tempDir(t, 'gwbackend-');
  const { caFile, certFile, keyFile } = await makeBackendCert(dir, names);
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    if (url.pathname === '/big') {
      const body = pattern(Number(url.searchParams.get('n') ?? 1024));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    } else if (url.pathname === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => res.end(sha256(Buffer.concat(chunks))));
    } else {
      res.end(`hello from backend (host ${req.headers.host})`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const fp = await openssl(['x509', '-in', certFile, '-noout', '-fingerprint', '-sha256']);
  return { port: (server.address() as AddressInfo).port, caFile, certFile, fingerprint: fp.trim().split('=')[1], server };
}
