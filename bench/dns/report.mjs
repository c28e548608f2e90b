#!/usr/bin/env node
// Reads the raw dnsperf outputs of one bench/dns/run.sh run and prints the summary table.
// Usage: node report.mjs OUTDIR TARGET_HIT LABEL...
// Writes OUTDIR/results.json. Exit 0: fine; 3: gatewayd below TARGET_HIT x dnsmasq on cache hits;
// 1: a run is missing or unreadable.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [outDir, targetText, ...labels] = process.argv.slice(2);
if (!outDir || !labels.length) {
  console.error('usage: report.mjs OUTDIR TARGET_HIT LABEL...');
  process.exit(1);
}
const target = Number(targetText);
const warnings = [];

/** The summary fields of one dnsperf output. */
function parseDnsperf(file) {
  const text = readFileSync(file, 'utf8');
  const num = (re) => {
    const m = text.match(re);
    return m ? Number(m[1]) : NaN;
  };
  const codes = {};
  const codeLine = text.match(/Response codes:\s+(.*)/)?.[1] ?? '';
  for (const m of codeLine.matchAll(/([A-Z]+) (\d+) \(/g)) codes[m[1]] = Number(m[2]);
  const r = {
    file,
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    runTime: num(/Run time \(s\):\s+([\d.]+)/),
    qps: num(/Queries per second:\s+([\d.]+)/),
    avgLatencyMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
    stddevMs: num(/Latency StdDev \(s\):\s+([\d.]+)/) * 1000,
    codes,
    endOfFile: /Testing complete \(end of file\)/.test(text),
  };
  if (!Number.isFinite(r.qps)) throw new Error(`${file}: no "Queries per second" line (dnsperf failed?)`);
  r.lostPct = r.sent ? (100 * r.lost) / r.sent : 0;
  // CPU the resolver (and the upstream) used during the run, from the .cpu file beside it.
  const cpuFile = file.replace(/\.txt$/, '.cpu');
  if (existsSync(cpuFile)) {
    const c = Object.fromEntries(readFileSync(cpuFile, 'utf8').trim().split('\n').map((l) => l.split('=')).map(([k, v]) => [k, Number(v)]));
    const hz = c.clk_tck;
    const isUpstream = /\/(hit|miss)-upstream-/.test(file);
    r.cpuSeconds = c.resolver_ticks / hz;
    r.upstreamCpuSeconds = c.upstream_ticks / hz;
    r.dnsperfCpuSeconds = c.dnsperf_cpu_s;
    r.cpuPct = (100 * r.cpuSeconds) / r.runTime; // 100 = one core busy
    r.upstreamCpuPct = (100 * r.upstreamCpuSeconds) / r.runTime;
    r.dnsperfCpuPct = (100 * r.dnsperfCpuSeconds) / c.wall_s;
    r.cpuUsPerQuery = r.completed ? (1e6 * r.cpuSeconds) / r.completed : NaN;
    r.sysUsPerQuery = r.completed ? (1e6 * (c.resolver_sys_ticks / hz)) / r.completed : NaN;
    // What the rest of the machine used meanwhile: other processes make the figures noisy.
    const ours = c.resolver_ticks / hz + (isUpstream ? 0 : c.upstream_ticks / hz) + c.dnsperf_cpu_s;
    r.otherCpuPct = Math.max(0, (100 * (c.machine_busy_ticks / hz - ours)) / c.wall_s);
    if (r.otherCpuPct > 20) warnings.push(`${file}: other processes used ${r.otherCpuPct.toFixed(0)}% of a CPU during this run: the figures are noisy`);
  }
  const notOk = Object.entries(codes).filter(([c]) => c !== 'NOERROR');
  if (notOk.length) warnings.push(`${file}: answers other than NOERROR: ${notOk.map(([c, n]) => `${c} ${n}`).join(', ')}`);
  if (r.lostPct > 1) warnings.push(`${file}: ${r.lostPct.toFixed(1)}% of queries lost (timed out after 5 s)`);
  return r;
}

/** Percentiles of the per-query latencies that `dnsperf -v` prints ("> NOERROR name A 0.000123"). */
function parseLatency(file) {
  const text = readFileSync(file, 'utf8');
  const lat = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('> ')) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) lat.push(v * 1000);
  }
  lat.sort((a, b) => a - b);
  const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] : NaN);
  const summary = parseDnsperf(file);
  return {
    file, samples: lat.length, lost: summary.lost, qps: summary.qps, cpuPct: summary.cpuPct,
    p50: pct(50), p90: pct(90), p99: pct(99), p999: pct(99.9), max: lat.at(-1) ?? NaN,
  };
}

const files = readdirSync(outDir);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
function throughput(test, label) {
  const round = (f) => Number(f.match(/-r(\d+)\.txt$/)[1]);
  const runs = files.filter((f) => new RegExp(`^${test}-${label}-r\\d+\\.txt$`).test(f)).sort((a, b) => round(a) - round(b)).map((f) => parseDnsperf(join(outDir, f)));
  if (!runs.length) return undefined;
  return {
    qps: mean(runs.map((r) => r.qps)),
    lostPct: mean(runs.map((r) => r.lostPct)),
    avgLatencyMs: mean(runs.map((r) => r.avgLatencyMs)),
    cpuPct: mean(runs.map((r) => r.cpuPct ?? NaN)),
    cpuUsPerQuery: mean(runs.map((r) => r.cpuUsPerQuery ?? NaN)),
    sysUsPerQuery: mean(runs.map((r) => r.sysUsPerQuery ?? NaN)),
    upstreamCpuPct: mean(runs.map((r) => r.upstreamCpuPct ?? NaN)),
    dnsperfCpuPct: mean(runs.map((r) => r.dnsperfCpuPct ?? NaN)),
    otherCpuPct: mean(runs.map((r) => r.otherCpuPct ?? NaN)),
    endOfFile: runs.some((r) => r.endOfFile),
    runs,
  };
}
const rssMiB = (when, label) => {
  const f = join(outDir, `rss-${when}-${label}.txt`);
  return existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) / 1024 : NaN;
};

const results = {};
try {
  for (const label of ['upstream', ...labels]) {
    const lat = (kind) => (existsSync(join(outDir, `lat-${kind}-${label}.txt`)) ? parseLatency(join(outDir, `lat-${kind}-${label}.txt`)) : undefined);
    results[label] = {
      hit: throughput('hit', label),
      miss: throughput('miss', label),
      latHit: lat('hit'),
      latMiss: lat('miss'),
      rssMiB: { afterHits: rssMiB('after-hits', label), end: rssMiB('end', label) },
    };
    if (label !== 'upstream' && !results[label].hit && !results[label].miss && !results[label].latHit) throw new Error(`${label}: no run found`);
    if (results[label].miss?.endOfFile) warnings.push(`${label}: the miss run used up its query file before the time limit (qps still valid)`);
  }
} catch (err) {
  console.error(`report: ${err.message}`);
  process.exit(1);
}

// ---- the table
const f0 = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x) => (Number.isFinite(x) ? (x >= 10 ? x.toFixed(1) : x.toFixed(2)) : '-');
const env = existsSync(join(outDir, 'env.txt')) ? readFileSync(join(outDir, 'env.txt'), 'utf8') : '';
const knob = (k) => env.match(new RegExp(`${k}=(\\S+)`))?.[1] ?? '?';

const table = (rows) => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
};
const name = (label) => (label === 'upstream' ? 'upstream (direct)' : label);

const out = [];
out.push('');
out.push(`DNS resolver benchmark: gatewayd vs dnsmasq vs unbound, all caching and forwarding to the same upstream`);
out.push(`(dnsperf -c ${knob('CLIENTS')} -q ${knob('OUTSTANDING')}, ${knob('DURATION')} s per throughput run x ${knob('ROUNDS')} round(s); ` +
  `hits: ${knob('HIT_NAMES')} warmed names; misses: names never asked before)`);
out.push('');
out.push('Throughput at saturation');
const tput = [['resolver', 'hit qps', 'lost%', 'avg ms', 'CPU%', 'us/q', 'sys', 'other%', 'miss qps', 'lost%', 'avg ms', 'CPU%', 'us/q', 'sys', 'upstrm%', 'other%']];
for (const label of ['upstream', ...labels]) {
  const { hit, miss } = results[label];
  tput.push([
    name(label),
    f0(hit?.qps), f1(hit?.lostPct), f2(hit?.avgLatencyMs), f0(hit?.cpuPct), f1(hit?.cpuUsPerQuery), f1(hit?.sysUsPerQuery), f0(hit?.otherCpuPct),
    f0(miss?.qps), f1(miss?.lostPct), f2(miss?.avgLatencyMs), f0(miss?.cpuPct), f1(miss?.cpuUsPerQuery), f1(miss?.sysUsPerQuery), f0(miss?.upstreamCpuPct), f0(miss?.otherCpuPct),
  ]);
}
out.push(...table(tput));
out.push('');
if (labels.some((l) => results[l].latHit || results[l].latMiss)) {
  out.push(`Latency at a fixed ${knob('LAT_QPS')} qps for ${knob('LAT_SECONDS')} s (ms, per query, from dnsperf -v)`);
  const latRows = [['resolver', 'hit p50', 'p90', 'p99', 'p99.9', 'max', 'CPU%', 'miss p50', 'p90', 'p99', 'p99.9', 'max', 'CPU%']];
  for (const label of labels) {
    const { latHit: h, latMiss: m } = results[label];
    latRows.push([
      name(label),
      f2(h?.p50), f2(h?.p90), f2(h?.p99), f2(h?.p999), f2(h?.max), f0(h?.cpuPct),
      f2(m?.p50), f2(m?.p90), f2(m?.p99), f2(m?.p999), f2(m?.max), f0(m?.cpuPct),
    ]);
  }
  out.push(...table(latRows));
  out.push('');
}
out.push(`Memory (RSS MiB after the hit runs / at the end): ${labels.map((l) => `${l} ${f0(results[l].rssMiB.afterHits)} / ${f0(results[l].rssMiB.end)}`).join(', ')}`);
out.push('');
out.push('qps: dnsperf "Queries per second"; avg ms: its average latency at saturation (mostly queueing).');
out.push('CPU%: CPU time the resolver process used during the run / run time (100 = one core); us/q: its CPU time per answered query (microseconds); sys: the kernel part of that.');
out.push('upstrm%: CPU of the shared upstream during the miss run; other%: CPU used by processes other than resolver, upstream and dnsperf.');
out.push('upstream (direct): the shared upstream asked directly with the hit names; about the ceiling of this harness on this machine.');
out.push('Memory at the end includes every name cached by the miss runs (hundreds of thousands).');
out.push('');

const gw = results.gatewayd;
const ratio = (a, b) => (a && b && b > 0 ? a / b : NaN);
const fx = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '-');
const ratios = {};
for (const other of labels.filter((l) => l !== 'gatewayd')) {
  const o = results[other];
  // Per round too: the runs of one round are close in time, so their ratio is the paired one.
  const perRound = (gw.hit?.runs ?? []).map((g, i) => ratio(g.qps, o.hit?.runs[i]?.qps));
  ratios[`gatewayd/${other}`] = { hit: ratio(gw.hit?.qps, o.hit?.qps), miss: ratio(gw.miss?.qps, o.miss?.qps), hitPerRound: perRound };
  const r = ratios[`gatewayd/${other}`];
  out.push(`gatewayd/${other.padEnd(10)}  cache hits ${fx(r.hit)}   cache misses ${fx(r.miss)}` +
    (perRound.length > 1 ? `   (hits per round: ${perRound.map(fx).join(' ')})` : ''));
}
const hitRatio = ratios['gatewayd/dnsmasq']?.hit ?? NaN;
const met = hitRatio >= target;
out.push('');
if (Number.isFinite(hitRatio)) out.push(`target: gatewayd >= ${target.toFixed(1)}x dnsmasq on cache hits: ${met ? 'MET' : 'MISSED'} (${hitRatio.toFixed(2)}x)`);
else out.push('target: not judged (no cache-hit runs: TESTS has no "hit")');
if (warnings.length) {
  out.push('');
  for (const w of warnings) out.push(`warning: ${w}`);
}
if (env) {
  out.push('');
  out.push(env.trim());
}
console.log(out.join('\n'));

writeFileSync(join(outDir, 'results.json'), JSON.stringify({ target: { hitVsDnsmasq: target, met, ratio: hitRatio }, ratios, results, warnings }, null, 2) + '\n');
process.exit(met || !Number.isFinite(hitRatio) ? 0 : 3);
