import { run } from './exec.js';

export interface DigResult {
  status: string;
  flags: string[];
  answers: { name: string; ttl: number; type: string; data: string }[];
  authority: { name: string; ttl: number; type: string; data: string }[];
  edns: boolean;
  raw: string;
}

function records(section: string | undefined) {
  return (section ?? '')
    .split('\n')
    .filter((l) => l && !l.startsWith(';'))
    .map((l) => {
      const [name, ttl, , type, ...data] = l.split(/\s+/);
      return { name, ttl: Number(ttl), type, data: data.join(' ') };
    });
}

/** Runs the real dig against a server and parses what it printed. */
export async function dig(port: number, name: string, type = 'A', args: string[] = []): Promise<DigResult> {
  const r = await run('dig', ['@127.0.0.1', '-p', String(port), '+time=3', '+tries=1', ...args, name, type]);
  const raw = r.stdout;
  return {
    status: /status: (\w+)/.exec(raw)?.[1] ?? `no answer (${r.stdout.trim().split('\n').pop()})`,
    flags: (/;; flags: ([^;]+);/.exec(raw)?.[1] ?? '').trim().split(/\s+/),
    answers: records(/;; ANSWER SECTION:\n([\s\S]*?)(\n\n|$)/.exec(raw)?.[1]),
    authority: records(/;; AUTHORITY SECTION:\n([\s\S]*?)(\n\n|$)/.exec(raw)?.[1]),
    edns: /; EDNS: version: 0/.test(raw),
    raw,
  };
}
