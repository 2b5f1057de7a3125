// SqlStore on PGlite (Postgres compiled to WASM), the embedded driver. PGlite is costly to open
// (seconds, hundreds of MB) and is a single connection, so a process holds one instance per data
// directory and every service gets a view scoped to its own schema. Because `search_path` is
// connection state, each view takes the instance's lock, switches `search_path` when the last
// user was another schema, and runs its statement; a transaction keeps the lock until it commits
// or rolls back, so no other schema's statement can run inside it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { AsyncLock } from './async-lock';
import { assertIdentifier } from './identifiers';
import { loadPglite } from './pglite-loader';
import { localError, localRows, toPgliteParam } from './pglite-values';
import { pgliteParsers } from './sql-types';
import type { SqlExecutor, SqlResult, SqlStore } from './types';

interface SharedPglite {
  key: string;
  db: PGlite;
  lock: AsyncLock;
  /** The schema `search_path` points at now; null when unknown (after a rollback). */
  currentSchema: string | null;
  refs: number;
}

const MEMORY_KEY = ':memory:';
const instances = new Map<string, Promise<SharedPglite>>();
/** Marks the async context of a running transaction, to catch calls that would deadlock. */
const insideTransaction = new AsyncLocalStorage<SharedPglite>();

/** A counted reference to the process's PGlite instance for one data directory. */
export interface PgliteHandle {
  /** A store scoped to `schema`, created when absent. Closing it leaves the instance open. */
  store(schema: string): Promise<SqlStore>;
  /** Drops this reference; the last one closes the instance. */
  release(): Promise<void>;
}

async function openShared(key: string, dir: string | undefined): Promise<SharedPglite> {
  if (dir !== undefined) mkdirSync(dir, { recursive: true });
  const { PGlite } = loadPglite();
  const db = await PGlite.create(dir, { parsers: { ...pgliteParsers } });
  return { key, db, lock: new AsyncLock(), currentSchema: null, refs: 0 };
}

/**
 * Opens (or joins) the PGlite instance at `dir`, or the process's in-memory instance when `dir`
 * is omitted (tests).
 */
export async function openPglite(dir?: string): Promise<PgliteHandle> {
  const key = dir ?? MEMORY_KEY;
  let pending = instances.get(key);
  if (!pending) {
    pending = openShared(key, dir);
    instances.set(key, pending);
    pending.catch(() => instances.delete(key));
  }
  const shared = await pending;
  shared.refs += 1;
  let released = false;
  return {
    store: (schema) => scopedStore(shared, assertIdentifier('schema', schema)),
    async release() {
      if (released) return;
      released = true;
      shared.refs -= 1;
      if (shared.refs > 0) return;
      instances.delete(key);
      // Wait for statements already queued, then close.
      await shared.lock.run(() => shared.db.close());
    },
  };
}

async function run<T>(shared: SharedPglite, schema: string, sql: string, params?: unknown[]): Promise<SqlResult<T>> {
  try {
    if (shared.currentSchema !== schema) {
      await shared.db.query(`SET search_path TO ${schema}`);
      shared.currentSchema = schema;
    }
    const result = await shared.db.query<T>(sql, params?.map(toPgliteParam));
    return { rows: localRows(result.rows), rowCount: result.rowCount ?? 0 };
  } catch (error) {
    throw localError(error);
  }
}

async function scopedStore(shared: SharedPglite, schema: string): Promise<SqlStore> {
  await shared.lock.run(async () => {
    await shared.db.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((error: unknown) => {
      throw localError(error);
    });
  });

  const assertNotInTransaction = (): void => {
    if (insideTransaction.getStore() === shared) {
      throw new Error(
        'PGlite is a single connection: inside transaction() use the executor passed to the callback, not the store',
      );
    }
  };

  return {
    driver: 'pglite',
    schema,
    query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<T>> {
      assertNotInTransaction();
      return shared.lock.run(() => run<T>(shared, schema, sql, params));
    },
    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      assertNotInTransaction();
      return shared.lock.run(async () => {
        // search_path is switched before BEGIN so a rollback cannot undo the switch.
        await run(shared, schema, 'BEGIN');
        let open = true;
        const tx: SqlExecutor = {
          query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<R>> {
            if (!open) return Promise.reject(new Error('transaction already finished'));
            return run<R>(shared, schema, sql, params);
          },
        };
        try {
          const result = await insideTransaction.run(shared, () => fn(tx));
          open = false;
          await shared.db.query('COMMIT');
          return result;
        } catch (error) {
          open = false;
          await shared.db.query('ROLLBACK').catch(() => undefined);
          // The callback may have changed session state; re-assert search_path next time.
          shared.currentSchema = null;
          throw error;
        }
      });
    },
    // The instance belongs to the process; the provider releases it.
    close: () => Promise.resolve(),
  };
}
