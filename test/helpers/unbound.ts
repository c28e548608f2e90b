import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import { tempDir, type Teardown } from './daemon.js';
import { run, waitFor } from './exec.js';

export interface Unbound {
  port: number;
  /** Names unbound was asked for so far, from its own query log, e.g. "www.lab.test. A". */
  queries(): string[];
  stop(): Promise<void>;
}

async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const port = s.address().port;
  s.close();
  return port;
}

/** A real unbound on a loopback port serving local records: the upstream the gateway forwards to. */
export async function startUnbound(t: Teardown, localData: string[]): Promise<Unbound> {
  const dir = tempDir(t, 'gwunbound-');
  const port = await freeUdpPort();
  const log = join(dir, 'unbound.log');
  const conf = join(dir, 'unbound.conf');
  writeFileSync(conf, `server:
  interface: 127.0.0.1
  port: ${port}
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  logfile: "${log}"
  log-queries: yes
  verbosity: 0
  access-control: 127.0.0.0/8 allow
  do-not-query-localhost: no
  module-config: "iterator"
  local-zone: "lab.test." static
  local-data: "lab.test. 60 IN SOA ns.lab.test. admin.lab.test. 1 3600 600 86400 30"
${localData.map((d) => `  local-data: "${d.replace(/"/g, '\\"')}"`).join('\n')}
`);
  const check = await run('unbound-checkconf', [conf]);
  if (check.code !== 0) throw new Error(`unbound config: ${check.stderr}${check.stdout}`);
  const proc = spawn('unbound', ['-d', '-c', conf], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  t.teardown(async () => {
    proc.kill('SIGKILL');
    await exited;
  });
  await waitFor(async () => (await run('dig', ['+short', '+time=1', '+tries=1', '-p', String(port), '@127.0.0.1', 'ns.probe.lab.test'])).code === 0, 10000, 'unbound');
  return {
    port,
    queries: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').map((l) => /info: \S+ (\S+ \S+) IN/.exec(l)?.[1]).filter((x): x is string => !!x) : []),
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
