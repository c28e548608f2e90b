import t from 'tap';
import { join } from 'node:path';
import { run } from '../helpers/exec.js';
import { gatewayd, startDaemon, tempDir } from '../helpers/daemon.js';

const sql = (db: string, q: string) => run('sqlite3', [db, q]).then((r) => r.stdout.trim());

t.test('the database: WAL mode, migrated to the current version, old flows pruned at start', async (t) => {
  const dir = tempDir(t);
  const first = await startDaemon(t, {}, { dir });
  const db = `${first.dataDir}/gateway.db`;
  first.proc.kill('SIGTERM');
  t.equal(await first.exited, 0);
  t.equal(await sql(db, 'PRAGMA journal_mode'), 'wal');
  t.equal(await sql(db, 'PRAGMA user_version'), '3');
  const old = Date.now() - 40 * 86400e3;
  await sql(db, `INSERT INTO flows (started_at, client_ip, client_port, sni, route, destination, bytes_up, bytes_down, duration_ms, outcome)
    VALUES (${old}, '10.0.0.9', 1, 'old.test', 'passthrough', NULL, 0, 0, 0, 'ok'), (${Date.now()}, '10.0.0.9', 1, 'new.test', 'passthrough', NULL, 0, 0, 0, 'ok')`);
  const second = await startDaemon(t, {}, { dir });
  await second.waitForLog((l) => l.msg === 'pruned old records');
  t.equal(await sql(db, "SELECT group_concat(sni) FROM flows WHERE client_ip = '10.0.0.9'"), 'new.test', 'past retention.flowDays: gone; recent: kept');
});

t.test('a database from a newer gatewayd is refused with a clear message', async (t) => {
  const dir = tempDir(t);
  const first = await startDaemon(t, {}, { dir });
  first.proc.kill('SIGTERM');
  await first.exited;
  await sql(`${first.dataDir}/gateway.db`, 'PRAGMA user_version = 99');
  const r = await gatewayd(['serve', '--config', first.configFile]);
  t.equal(r.code, 1);
  t.match(r.stderr, /schema version 99 is newer than this gatewayd understands/);
});

t.test('a statement issued during a transaction is not swept into it (nor rolled back with it)', async (t) => {
  const { Db } = await import('../../src/store/db.js');
  const db = await Db.open(join(tempDir(t), 'x.db'));
  t.teardown(() => db.close());
  await db.exec('CREATE TABLE t (v TEXT)');
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const failing = db.transaction(async (tx) => {
    await tx.run("INSERT INTO t VALUES ('in-tx')");
    await gate;
    throw new Error('abort');
  });
  await new Promise((r) => setTimeout(r, 50));
  const outside = db.run("INSERT INTO t VALUES ('outside')");
  release();
  await t.rejects(failing, /abort/);
  t.equal((await outside).changes, 1);
  t.same(await db.all('SELECT v FROM t'), [{ v: 'outside' }], 'only the statement outside the failed transaction is kept');
});

t.test('the outbox claims at most a few deliveries per target, so one backlog cannot crowd out the rest', async (t) => {
  const { openStore } = await import('../../src/store/index.js');
  const store = await openStore(tempDir(t));
  t.teardown(() => store.close());
  const add = (id: string, target: string) => store.deliveries.add({ id, tenantId: 'default', deviceId: null, kind: 'coa', target, payload: '{"attributes":[]}' });
  for (let i = 0; i < 50; i++) await add(`backlog-${i}`, '10.0.0.2:3799');
  await add('other', 'https://nac.example/admit');
  const first = await store.deliveries.claimDue(Date.now() + 1000, 8, 60_000, 2, new Map());
  t.same(first.map((d) => d.target).sort(), ['10.0.0.2:3799', '10.0.0.2:3799', 'https://nac.example/admit'], 'two of the backlog, and the other target');
  const busy = await store.deliveries.claimDue(Date.now() + 1000, 8, 60_000, 2, new Map([['10.0.0.2:3799', 2]]));
  t.same(busy, [], 'nothing more for a target with both slots in flight');
  const next = (await store.deliveries.nextDueAt(['10.0.0.2:3799']))!;
  t.ok(next > Date.now() + 30_000, 'a busy target\'s backlog does not set the next wake-up (only the other target\'s lease does)');
});
