#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): top functions by self time, top functions by
// total (inclusive) time, and self time per source (package / file / V8 category).
// Usage: node cpuprofile-top.mjs FILE.cpuprofile [N] [--between REGEX] [--last SECONDS]
//   --between REGEX: only the samples from the first to the last one whose stack has a function
//   matching REGEX (e.g. 'dns/service\.js' keeps the DNS load and drops startup and shutdown).
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let between;
const bi = args.indexOf('--between');
if (bi >= 0) [, between] = args.splice(bi, 2);
let lastSeconds;
const li = args.indexOf('--last');
if (li >= 0) lastSeconds = Number(args.splice(li, 2)[1]);
const [file, nText] = args;
if (!file) {
  console.error('usage: cpuprofile-top.mjs FILE.cpuprofile [N] [--between REGEX] [--last SECONDS]');
  process.exit(1);
}
const N = Number(nText ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Where a function lives: "gatewayd src/dns/x.js", "npm dns-packet", "node:internal/...", or a V8 category. */
function source(cf) {
  const url = cf.url ?? '';
  if (!url) return cf.functionName.startsWith('(') ? cf.functionName : '(native / V8 builtin)';
  const nm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nm) return `npm ${nm[1]}`;
  const own = url.match(/\/dist\/(src\/.*)$/);
  if (own) return `gatewayd ${own[1]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/(\w+).*$/, 'node:internal/$1');
  return url;
}
const key = (n) => {
  const cf = n.callFrame;
  const name = cf.functionName || '(anonymous)';
  const where = cf.url ? `${cf.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/')}:${cf.lineNumber + 1}` : '';
  return `${name}${where ? ' ' + where : ''}`;
};

const self = new Map();
const total = new Map();
const bySource = new Map();
let all = 0;
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
const samples = prof.samples ?? [];
const deltas = prof.timeDeltas ?? [];
let first = 0;
let last = samples.length - 1;
if (between) {
  const re = new RegExp(between);
  const memo = new Map();
  const matches = (id) => {
    if (id === undefined) return false;
    if (!memo.has(id)) memo.set(id, re.test(key(byId.get(id))) || matches(parent.get(id)));
    return memo.get(id);
  };
  first = samples.findIndex((id) => matches(id));
  last = samples.findLastIndex((id) => matches(id));
  if (first < 0) {
    console.error(`no sample has a function matching /${between}/ on its stack`);
    process.exit(1);
  }
}
const at = []; // each sample's time in microseconds
for (let i = 0, t = 0; i < samples.length; i++) at.push((t += deltas[i] ?? 0));
if (lastSeconds > 0) {
  const from = at[last] - lastSeconds * 1e6;
  while (first < last && at[first] < from) first++;
}
for (let i = first; i <= last; i++) {
  const us = deltas[i + 1] ?? deltas[i] ?? 0; // a sample's time is the gap to the next sample
  const node = byId.get(samples[i]);
  if (!node) continue;
  all += us;
  add(self, key(node), us);
  add(bySource, source(node.callFrame), us);
  const seen = new Set();
  for (let id = node.id; id !== undefined; id = parent.get(id)) {
    const k = key(byId.get(id));
    if (!seen.has(k)) {
      seen.add(k);
      add(total, k, us);
    }
  }
}

const idle = self.get('(idle)') ?? 0;
const busy = all - idle;
const pct = (v, of) => `${((100 * v) / of).toFixed(1).padStart(5)}%`;
const ms = (v) => `${(v / 1000).toFixed(0).padStart(7)} ms`;
const top = (m, n, filter = () => true) => [...m.entries()].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, n);

const scope = [between && `samples between the first and last with /${between}/ on the stack`, lastSeconds > 0 && `last ${lastSeconds} s of them`].filter(Boolean).join(', ');
console.log(`\nCPU profile ${file}${scope ? ` (${scope})` : ''}`);
console.log(`profiled ${(all / 1e6).toFixed(1)} s, idle ${pct(idle, all)}, busy ${(busy / 1e6).toFixed(1)} s; shares below are of busy time\n`);
console.log(`top ${N} functions by SELF time:`);
for (const [k, v] of top(self, N, (k) => k !== '(idle)')) console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);
console.log(`\nself time by source:`);
for (const [k, v] of top(bySource, 25, (k) => k !== '(idle)')) console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);
console.log(`\ntop ${N} functions by TOTAL (inclusive) time:`);
for (const [k, v] of top(total, N, (k) => !['(root)', '(idle)', '(program)'].includes(k))) console.log(`${ms(v)} ${pct(v, busy)}  ${k}`);
