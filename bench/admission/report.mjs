// Reads gatewayd's JSON log: from each "device enrolled" to its "admission delivered", per kind.
import { readFileSync } from 'node:fs';

const lines = readFileSync(process.argv[2], 'utf8').split('\n').flatMap((l) => {
  try { return [JSON.parse(l)]; } catch { return []; }
});
const enrolledAt = lines.filter((l) => l.msg === 'device enrolled').map((l) => Date.parse(l.time));
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];
for (const kind of ['webhook', 'coa']) {
  // Devices enroll one after another, so the n-th delivery of a kind is the n-th device's.
  const ms = lines.filter((l) => l.msg === 'admission delivered' && l.kind === kind).map((l, i) => Date.parse(l.time) - enrolledAt[i]);
  console.log(`${kind}: ${ms.length} delivered; enrollment to delivered p50 ${pct(ms, 0.5)} ms, p99 ${pct(ms, 0.99)} ms, max ${Math.max(...ms)} ms`);
}
