#!/usr/bin/env node
// Summarises `perf script -F tid,ip,sym` output of a Node process recorded with call graphs
// (perf record -g, node --perf-basic-prof for JS names). Unlike V8's own profiler this sees the
// kernel and Node's C++ too, and counts only time on a CPU.
// Usage: perf script -i perf.data -F tid,ip,sym | node perf-top.mjs [N]
//    or: gzip -dc bench/out/dns-*/profile/hit-perf/perf.script.gz | node perf-top.mjs [N]
// Prints: where the time goes (kernel by system call, Node's UDP layer, JS by source), the top
// leaf symbols, and the JS functions with the most time under them (inclusive).
import { createInterface } from 'node:readline';

const N = Number(process.argv[2] ?? 25);
const samples = [];
let cur;
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) {
    if (cur) samples.push(cur);
    cur = undefined;
  } else if (!line.startsWith('\t') && !line.startsWith(' ')) {
    cur = { tid: line.trim().split(/\s+/)[0], stack: [] };
  } else if (cur) {
    const t = line.trim();
    const sp = t.indexOf(' ');
    cur.stack.push(sp < 0 ? '[unknown]' : t.slice(sp + 1));
  } else if (/^\s*\d+\s*$/.test(line)) {
    cur = { tid: line.trim(), stack: [] };
  }
}
if (cur) samples.push(cur);
if (!samples.length) {
  console.error('no samples read');
  process.exit(1);
}

const byTid = new Map();
for (const s of samples) byTid.set(s.tid, (byTid.get(s.tid) ?? 0) + 1);
const mainTid = [...byTid.entries()].sort((a, b) => b[1] - a[1])[0][0];

/** "node:dgram", "gatewayd src/dns/service.js", "npm lru-cache" for a JS frame name. */
function jsSource(frame) {
  const m = frame.match(/^JS:[*~^]?(.*?) ((?:file:\/\/)?\S+?):\d+:\d+$/) ?? frame.match(/^JS:[*~^]?(.*) (\S+)$/);
  const where = m ? m[2] : '';
  const nm = where.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nm) return `npm ${nm[1]}`;
  const own = where.match(/\/dist\/(src\/.*)$/);
  if (own) return `gatewayd ${own[1]}`;
  if (where.startsWith('node:')) return where.replace(/^node:internal\/(\w+).*$/, 'node:internal/$1');
  return where || 'JS (unknown)';
}
const jsName = (frame) => frame.replace(/^JS:[*~^]?/, '').replace(/ file:\/\/\S*\/dist\//, ' dist/').replace(/ file:\/\/\S*\/node_modules\//, ' node_modules/');
const isKernel = (f) => /^(entry_SYSCALL|do_syscall_64|asm_|irqentry_|__sys_|__x64_sys|ret_from_fork)/.test(f);
const has = (stack, re) => stack.some((f) => re.test(f));

const where = new Map();
const native = new Map();
const leaf = new Map();
const inclusiveJs = new Map();
const add = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
for (const { tid, stack } of samples) {
  if (!stack.length) stack.push('[unknown]');
  add(leaf, stack[0]);
  if (tid !== mainTid) {
    add(where, 'other threads (GC helpers, libuv pool, ...)');
    continue;
  }
  const seen = new Set();
  for (const f of stack) if (f.startsWith('JS:') && !seen.has(f)) { seen.add(f); add(inclusiveJs, jsName(f)); }
  let k;
  if (has(stack, /^__sys_sendmsg|^__sys_sendto|^__x64_sys_sendmsg|^__x64_sys_sendto/)) k = 'kernel: sendmsg (incl. loopback delivery to the receiver and its wake-up)';
  else if (has(stack, /^__sys_recvmsg|^__sys_recvfrom|^__x64_sys_recv/)) k = 'kernel: recvmsg';
  else if (has(stack, /epoll_wait|do_epoll/)) k = 'kernel: epoll_wait';
  else if (has(stack, /^__sys_bind|^__x64_sys_bind|^__sys_socket|^__x64_sys_socket|^__x64_sys_close|^__sys_close|__close_fd|^__x64_sys_epoll_ctl|do_epoll_ctl/)) k = 'kernel: socket/bind/close/epoll_ctl';
  else if (has(stack, /^(__schedule|finish_task_switch)/)) k = 'kernel: scheduling (preempted)';
  else if (stack.some(isKernel)) k = 'kernel: other';
  else if (has(stack, /Heap::|Scavenger|MarkCompact|ConcurrentMarking|MinorMarkCompact/)) k = 'V8 GC (main thread)';
  else {
    const js = stack.find((f) => f.startsWith('JS:'));
    if (js) k = `JS + what it calls, innermost JS in: ${jsSource(js)}`;
    else {
      const nat = stack.find((f) => f.startsWith('node::') || f.startsWith('uv_') || f.startsWith('uv__'));
      add(native, (nat ?? stack[0]).replace(/\(.*$/, ''));
      k = 'native, no JS on the stack (Node C++ / libuv / libc: receive path, callbacks into JS)';
    }
  }
  add(where, k);
}

const n = samples.length;
const pct = (v) => `${((100 * v) / n).toFixed(1).padStart(5)}%`;
const top = (m, k) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k);
console.log(`\n${n} samples; main thread ${pct(byTid.get(mainTid))}`);
console.log('\nwhere the time goes (each sample counted once; JS includes the V8 builtins and C++ it calls):');
const small = [...where.values()].filter((v) => v / n < 0.002);
for (const [k, v] of top(where, 40)) if (v / n >= 0.002) console.log(`${pct(v)}  ${k}`);
if (small.length) console.log(`${pct(small.reduce((a, b) => a + b, 0))}  (${small.length} smaller buckets)`);
console.log('\nthe native part, by the nearest Node/libuv frame (or the leaf when there is none):');
for (const [k, v] of top(native, 12)) console.log(`${pct(v)}  ${k.slice(0, 140)}`);
console.log(`\ntop ${N} leaf symbols (self time):`);
for (const [k, v] of top(leaf, N)) console.log(`${pct(v)}  ${k.slice(0, 140)}`);
console.log(`\ntop ${N} JS functions by inclusive time (main thread):`);
for (const [k, v] of top(inclusiveJs, N)) console.log(`${pct(v)}  ${k}`);
