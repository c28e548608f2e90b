import sqlite3 from 'sqlite3';

export type Params = Record<string, unknown> | unknown[];

/**
 * Promise face of one sqlite3 connection. sqlite3 runs statements of one connection in order,
 * but a transaction spans several calls, so transactions are queued one at a time here.
 */
export class Db {
  private txQueue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly db: sqlite3.Database) {}

  static open(file: string): Promise<Db> {
    return new Promise((resolve, reject) => {
      const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(new Db(db))));
    });
  }

  run(sql: string, params: Params = []): Promise<{ changes: number; lastID: number }> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (err) {
        if (err) reject(err);
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined)));
    });
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])));
    });
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * Inserts many rows with one multi-row INSERT per 500 rows, in one transaction: one statement
   * to prepare instead of one per row.
   */
  async insertRows(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (rows.length === 0) return;
    const tuple = `(${columns.map(() => '?').join(',')})`;
    await this.transaction(async (tx) => {
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500);
        await tx.run(`INSERT INTO ${table} (${columns.join(',')}) VALUES ${chunk.map(() => tuple).join(',')}`, chunk.flat());
      }
    });
  }

  /** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on error; calls are serialized. */
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const next = this.txQueue.then(async () => {
      await this.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(this);
        await this.exec('COMMIT');
        return out;
      } catch (err) {
        await this.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
    this.txQueue = next.catch(() => undefined);
    return next;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }
}
