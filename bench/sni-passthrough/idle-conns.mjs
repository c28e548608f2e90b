#!/usr/bin/env node
// Memory per idle connection: reads a process's VmRSS, opens N TLS connections to a port (SNI set,
// full handshake completed through whatever relays them), holds them idle, reads VmRSS again and
// prints one JSON line. Then closes everything.
//
// usage: node idle-conns.mjs --port 28444 --pid 1234 [--count 1000] [--servername backend.bench.test]
//        [--settle-ms 2000] [--parallel 50]
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    port: { type: 'string' },
    pid: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    servername: { type: 'string', default: 'backend.bench.test' },
    count: { type: 'string', default: '1000' },
    parallel: { type: 'string', default: '50' },
    'settle-ms': { type: 'string', default: '2000' },
    label: { type: 'string', default: '' },
  },
});
if (!o.port || !o.pid) {
  console.error('usage: idle-conns.mjs --port PORT --pid PID [--count N]');
  process.exit(2);
}
const port = Number(o.port);
const pids = o.pid.split(',').map(Number); // several PIDs: their RSS is summed (a master and its worker, say)
const count = Number(o.count);
const parallel = Number(o.parallel);
const settleMs = Number(o['settle-ms']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function rssKiB() {
  let total = 0;
  for (const pid of pids) {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (!m) throw new Error(`no VmRSS for pid ${pid}`);
    total += Number(m[1]);
  }
  return total;
}

function open() {
  return new Promise((resolve, reject) => {
    const s = connect({ host: o.host, port, servername: o.servername, rejectUnauthorized: false });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('handshake timed out'));
    }, 15000);
    s.once('secureConnect', () => {
      clearTimeout(timer);
      s.removeAllListeners('error');
      s.on('error', () => undefined);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function openMany(n) {
  const sockets = [];
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      try {
        sockets.push(await open());
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
  return { sockets, failed };
}

async function closeAll(sockets) {
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise((r) => {
          s.once('close', r);
          s.destroy();
        }),
    ),
  );
}

// Warm-up: the first connections load code, grow pools and JIT; they should not count as per-connection cost.
const warm = await openMany(Math.min(50, count));
await closeAll(warm.sockets);
await sleep(settleMs);

const before = rssKiB();
const t0 = Date.now();
const { sockets, failed } = await openMany(count);
const openMs = Date.now() - t0;
await sleep(settleMs);
const after = rssKiB();
const open_ = sockets.filter((s) => !s.destroyed).length;
await closeAll(sockets);
await sleep(500);
const afterClose = rssKiB();

const result = {
  label: o.label,
  port,
  pids,
  requested: count,
  open: open_,
  failed,
  openMs,
  rssBeforeKiB: before,
  rssAfterKiB: after,
  rssAfterCloseKiB: afterClose,
  perConnKiB: open_ > 0 ? Number(((after - before) / open_).toFixed(2)) : null,
};
console.log(`IDLE ${JSON.stringify(result)}`);
process.exit(open_ === count ? 0 : 1);
