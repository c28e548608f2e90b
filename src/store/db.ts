import sqlite3 from 'sqlite3';

export type Params = Record<string, unknown> | unknown[];

/** The statements a repository runs; inside a transaction it gets one of these bound to it. */
export interface Queryable {
  run(sql: string, params?: Params): Promise<{ changes: number; lastID: number }>;
  get<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  exec(sql: string): Promise<void>;
}

/**
 * Promise face of one sqlite3 connection. A transaction spans several calls on the shared
 * connection, so while one runs, every other statement waits for it (otherwise it would become
 * part of that transaction, and be rolled back with it); a transaction in turn waits for
 * statements already in flight. Transactions run one at a time.
 */
export class Db implements Queryable {
  private txQueue: Promise<unknown> = Promise.resolve();
  private inTransaction = false;
  private inFlight = 0;
  private onIdle?: () => void;
  private waiting: (() => void)[] = [];

  private constructor(private readonly db: sqlite3.Database) {}

  static open(file: string): Promise<Db> {
    return new Promise((resolve, reject) => {
      const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(new Db(db))));
    });
  }

  private rawRun(sql: string, params: Params = []): Promise<{ changes: number; lastID: number }> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (err) {
        if (err) reject(err);
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  private rawGet<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined)));
    });
  }

  private rawAll<T>(sql: string, params: Params = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])));
    });
  }

  private rawExec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  /** Runs a statement outside any transaction: after the current one, if there is one. */
  private async outside<T>(op: () => Promise<T>): Promise<T> {
    while (this.inTransaction) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    try {
      return await op();
    } finally {
      if (--this.inFlight === 0) this.onIdle?.();
    }
  }

  run(sql: string, params: Params = []) {
    return this.outside(() => this.rawRun(sql, params));
  }

  get<T>(sql: string, params: Params = []) {
    return this.outside(() => this.rawGet<T>(sql, params));
  }

  all<T>(sql: string, params: Params = []) {
    return this.outside(() => this.rawAll<T>(sql, params));
  }

  exec(sql: string) {
    return this.outside(() => this.rawExec(sql));
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

  /** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on error; fn must use the handle it is given. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const handle: Queryable = {
      run: (sql, params) => this.rawRun(sql, params),
      get: (sql, params) => this.rawGet(sql, params),
      all: (sql, params) => this.rawAll(sql, params),
      exec: (sql) => this.rawExec(sql),
    };
    const next = this.txQueue.then(async () => {
      this.inTransaction = true;
      while (this.inFlight > 0) await new Promise<void>((r) => (this.onIdle = r));
      this.onIdle = undefined;
      try {
        await this.rawExec('BEGIN IMMEDIATE');
        try {
          const out = await fn(handle);
          await this.rawExec('COMMIT');
          return out;
        } catch (err) {
          await this.rawExec('ROLLBACK').catch(() => undefined);
          throw err;
        }
      } finally {
        this.inTransaction = false;
        for (const wake of this.waiting.splice(0)) wake();
      }
    });
    this.txQueue = next.catch(() => undefined);
    return next;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }
}
