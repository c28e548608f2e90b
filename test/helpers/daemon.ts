import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { run, waitFor, type RunResult } from './exec.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = join(ROOT, 'dist/src/cli/gatewayd.js');
export const HOSTNAME = 'gw.test';

/** Runs the real gatewayd CLI. */
export function gatewayd(args: string[], input?: string): Promise<RunResult> {
  return run(process.execPath, [CLI, ...args], { input });
}

export interface Teardown {
  teardown(fn: () => unknown): void;
}

export function tempDir(t: Teardown, prefix = 'gwtest-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A config that binds everything to ephemeral loopback ports; `extra` is merged over it. */
export function baseConfig(dataDir: string, extra: Record<string, any> = {}): Record<string, any> {
  const c: Record<string, any> = {
    gateway: { hostname: HOSTNAME, address: '127.0.0.1' },
    listen: { https: '127.0.0.1:0', http: '127.0.0.1:0', dns: '127.0.0.1:0' },
    dataDir,
    tls: { routes: [] },
    dns: { upstreams: ['127.0.0.1:1'], timeoutMs: 500 },
    relay: { helloTimeoutMs: 2000, drainTimeoutSec: 5 },
    log: { level: 'debug' },
  };
  for (const [k, v] of Object.entries(extra)) c[k] = typeof v === 'object' && v && !Array.isArray(v) ? { ...c[k], ...v } : v;
  return c;
}

export interface RunningDaemon {
  proc: ChildProcess;
  dir: string;
  dataDir: string;
  configFile: string;
  httpsPort: number;
  httpPort: number;
  dnsPort: number;
  metricsPort?: number;
  logs: Record<string, any>[];
  stderr: () => string;
  writeConfig(config: Record<string, any>): void;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  waitForLog(pred: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
}

/** Starts the real daemon on ephemeral ports and waits until every listener is bound. */
export async function startDaemon(t: Teardown, extra: Record<string, any> = {}, opts: { dir?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunningDaemon> {
  const dir = opts.dir ?? tempDir(t);
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'gateway.yaml');
  const config = baseConfig(dataDir, extra);
  writeFileSync(configFile, stringify(config));
  const proc = spawn(process.execPath, [CLI, 'serve', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  const logs: Record<string, any>[] = [];
  let stderr = '';
  let pending = '';
  proc.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  const waitForLog = (pred: (l: Record<string, any>) => boolean, timeoutMs = 5000) =>
    waitFor(() => logs.find(pred), timeoutMs, 'a log line') as Promise<Record<string, any>>;
  const listeners = ['https', 'dns', ...(config.listen.http ? ['http'] : []), ...(config.listen.metrics ? ['metrics'] : [])];
  await Promise.race([
    waitFor(() => listeners.every((l) => logs.some((x) => x.msg === 'listening' && x.listener === l)), 20000, 'daemon start'),
    exited.then((code) => {
      throw new Error(`gatewayd exited with ${code} during start: ${stderr}`);
    }),
  ]);
  const port = (l: string) => logs.find((x) => x.msg === 'listening' && x.listener === l)?.port as number;
  return {
    proc,
    dir,
    dataDir,
    configFile,
    httpsPort: port('https'),
    httpPort: port('http'),
    dnsPort: port('dns'),
    metricsPort: port('metrics'),
    logs,
    stderr: () => stderr,
    writeConfig: (c) => writeFileSync(configFile, stringify(c)),
    exited,
    waitForLog,
  };
}
