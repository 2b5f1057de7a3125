// ClickHouseStore on chDB (ClickHouse as an in-process library), the embedded driver.
//
// chDB binds one data directory per process; the registry below enforces it with a clear error.
// How each service stays inside its own database: chDB allows several connections (Sessions) to
// the bound directory, each with its own current database and settings, and runs statements on
// different connections in parallel (measured: two heavy scans on two connections took as long
// as one, on a single connection twice as long). So every store opens its own connection and
// issues `USE <database>` once. That beats one shared connection with a lock and a `USE` per
// switch, which would serialise all services; chDB has no per-query "default database" setting.
// Only the async chDB calls are used: the sync ones block the event loop.
// chDB is loaded on the first embedded store, never at import: its native library is about 540 MB,
// and a process that talks to a ClickHouse server (or uses no analytics store) must not map it.
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Session } from 'chdb';
import { CLICKHOUSE_LIMIT_DEFAULTS, limitSettings, readLimitProblem, type ClickHouseLimits, type ClickHouseRoleLimits } from './clickhouse-limits';
import { COMMON_SETTINGS, normaliseParams, parseJsonEachRow, toJsonCompactEachRow } from './clickhouse-values';
import { assertIdentifier } from './identifiers';
import type { ClickHouseStore } from './types';

interface Binding {
  path: string;
  connections: number;
}

/** The data directory this process has bound chDB to, while any connection is open. */
let binding: Binding | null = null;
const SCRATCH_PREFIX = 'sightline-chdb-';

/**
 * A per-process scratch directory for chDB when no data directory is configured (tests). Reused
 * by everything in the process, including successive jest test files in one worker, so they never
 * ask chDB for a second directory. It is removed when its last connection closes (chDB starts
 * afresh at the same path afterwards; checked).
 */
export function defaultChdbPath(): string {
  return join(tmpdir(), `${SCRATCH_PREFIX}${process.pid}`);
}

type ChdbModule = typeof import('chdb');
let chdbModule: Promise<ChdbModule> | null = null;

/** Loads chDB once per process; a failed load is not cached, so a later call retries. */
function loadChdb(): Promise<ChdbModule> {
  chdbModule ??= import('chdb').catch((error: unknown) => {
    chdbModule = null;
    const reason = error instanceof Error ? error.message : String(error);
    // The slim image leaves the native library out; say how to get a ClickHouse store instead.
    throw new Error(
      `chDB (the embedded analytics store) cannot be loaded: ${reason}. Configure a ClickHouse server URL, or run an image that includes chDB`,
      { cause: error },
    );
  });
  return chdbModule;
}

/** Whether this process has loaded chDB (tests check that server-only processes never do). */
export function isChdbLoaded(): boolean {
  return chdbModule !== null;
}

function openConnection(chdb: ChdbModule, path: string): Session {
  const wanted = resolve(path);
  if (binding && binding.path !== wanted) {
    throw new Error(
      `chDB is already using ${binding.path} in this process and allows one data directory per process; cannot open ${wanted}`,
    );
  }
  mkdirSync(wanted, { recursive: true });
  let session: Session;
  try {
    session = new chdb.Session(wanted);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`chDB cannot open ${wanted}: ${reason}`, { cause: error });
  }
  binding ??= { path: wanted, connections: 0 };
  binding.connections += 1;
  return session;
}

function closeConnection(session: Session): void {
  session.close();
  if (binding) {
    binding.connections -= 1;
    if (binding.connections <= 0) {
      if (binding.path === resolve(defaultChdbPath())) rmSync(binding.path, { recursive: true, force: true });
      binding = null;
    }
  }
}

export interface ChdbStoreOptions {
  /** chDB data directory; one per process. */
  path: string;
  database: string;
  /** Time and memory limits by role (clickhouse-limits.ts); defaults CLICKHOUSE_LIMIT_DEFAULTS. */
  limits?: ClickHouseLimits;
}

/** A connection bound to the database, with the common settings and one role's limits. */
async function openRoleConnection(chdb: ChdbModule, path: string, database: string, limits: ClickHouseRoleLimits): Promise<Session> {
  const session = openConnection(chdb, path);
  try {
    await session.queryAsync(`CREATE DATABASE IF NOT EXISTS ${database}`);
    await session.queryAsync(`USE ${database}`);
    const settings = Object.entries({ ...COMMON_SETTINGS, ...limitSettings(limits) })
      .map(([name, value]) => `${name} = ${typeof value === 'string' ? `'${value}'` : value}`)
      .join(', ');
    await session.queryAsync(`SET ${settings}`);
    return session;
  } catch (error) {
    closeConnection(session);
    throw error;
  }
}

export async function createChdbStore(options: ChdbStoreOptions): Promise<ClickHouseStore> {
  const database = assertIdentifier('database', options.database);
  const chdb = await loadChdb();
  const limits = options.limits ?? CLICKHOUSE_LIMIT_DEFAULTS;
  // Reads and writes on connections of their own, each under its role's limits (a connection's
  // settings hold for every statement on it; chDB runs the two in parallel).
  const reader = await openRoleConnection(chdb, options.path, database, limits.read);
  let writer: Session;
  try {
    writer = await openRoleConnection(chdb, options.path, database, limits.write);
  } catch (error) {
    closeConnection(reader);
    throw error;
  }

  const run = async (session: Session, sql: string, params: Record<string, unknown> | undefined, format: string): Promise<string> => {
    const result =
      params && Object.keys(params).length > 0
        ? await session.queryBindAsync(sql, normaliseParams(params), { format })
        : await session.queryAsync(sql, { format });
    return result.text();
  };

  let closed = false;
  return {
    driver: 'chdb',
    database,
    async query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      let text: string;
      try {
        text = await run(reader, sql, params, 'JSONEachRow');
      } catch (error) {
        throw readLimitProblem(error, limits.read);
      }
      return parseJsonEachRow<T>(text);
    },
    async command(sql, params) {
      await run(writer, sql, params, 'CSV');
    },
    async insert(table, rows, options) {
      assertIdentifier('table', table);
      if (rows.length === 0) return;
      // The first row's keys name the columns; every row of one insert has the same ones.
      const columns = Object.keys(rows[0] as Record<string, unknown>);
      await writer.insert({
        table,
        columns,
        values: Buffer.from(toJsonCompactEachRow(rows, columns), 'utf8'),
        format: 'JSONCompactEachRow',
        ...(options?.dedupToken ? { settings: { insert_deduplication_token: options.dedupToken } } : {}),
      });
    },
    close() {
      if (!closed) {
        closed = true;
        closeConnection(reader);
        closeConnection(writer);
      }
      return Promise.resolve();
    },
  };
}
