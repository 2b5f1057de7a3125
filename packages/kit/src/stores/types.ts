// Store contracts: one interface per kind of store, two drivers each, one contract suite per pair.
// A service receives only its own store handles, already scoped to its schema/database.

export interface SqlResult<T> {
  rows: T[];
  rowCount: number;
}

/** Runs Postgres SQL with `$1`-style bound parameters. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<T>>;
}

/**
 * A service's relational store: PostgreSQL (`pg` pool) or PGlite, scoped to the service's own
 * schema, so service SQL names tables without a schema prefix.
 */
export interface SqlStore extends SqlExecutor {
  readonly driver: 'postgres' | 'pglite';
  readonly schema: string;
  /** Runs `fn` in one transaction: commit when it resolves, roll back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A service's analytics store: ClickHouse (`@clickhouse/client`) or chDB, scoped to the
 * service's own database, so service SQL names tables without a database prefix.
 * Values always travel as `{name:Type}` bound parameters.
 */
export interface ClickHouseStore {
  readonly driver: 'clickhouse' | 'chdb';
  readonly database: string;
  /** SELECT returning rows as objects (JSONEachRow). */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** DDL or other statements returning nothing. */
  command(sql: string, params?: Record<string, unknown>): Promise<void>;
  /**
   * Inserts rows in one batch. A non-empty `dedupToken` makes a retried insert of the same batch
   * a no-op (ClickHouse insert_deduplication_token) on tables that support it.
   */
  insert(table: string, rows: Record<string, unknown>[], options?: { dedupToken?: string }): Promise<void>;
  close(): Promise<void>;
}

/** A lease on one of a semaphore's slots. */
export interface SemaphoreLease {
  release(): Promise<void>;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window rolls over. */
  resetMs: number;
}

/**
 * Key-value store for limits, idempotency and locks: Redis (`ioredis`) or in-memory.
 * Every operation is atomic on both drivers, so counting stays exact under concurrency.
 */
export interface KvStore {
  readonly driver: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Sets a value; with `ifAbsent` only when the key does not exist. Returns whether it was set. */
  set(key: string, value: string, options?: { ttlMs?: number; ifAbsent?: boolean }): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Reads several keys in one round trip; missing keys are null, in the order asked. */
  getMany(keys: string[]): Promise<(string | null)[]>;
  /**
   * Writes several keys in one round trip, each with the same optional TTL. `evictable`: the values
   * are a working set the writer can do without (it copes with a missing one), so the in-memory
   * driver may drop them before their TTL to stay within its bound (Redis keeps them, or evicts them
   * under its own maxmemory policy).
   */
  setMany(entries: [key: string, value: string][], options?: { ttlMs?: number; evictable?: boolean }): Promise<void>;
  /** Adds `by` and returns the new value; `ttlMs` is applied when the key is created. */
  incrBy(key: string, by: number, ttlMs?: number): Promise<number>;
  /**
   * Consumes `cost` points (default 1) of a fixed window of `points` per `windowMs`
   * (rate-limiter-flexible); a cost larger than what is left is refused, and counted like any attempt.
   */
  consumeRate(key: string, points: number, windowMs: number, cost?: number): Promise<RateLimitResult>;
  /** Takes one of `limit` slots without waiting; null when all are taken. Leases expire after `leaseMs`. */
  tryAcquire(key: string, limit: number, leaseMs: number): Promise<SemaphoreLease | null>;
  /** Entries held in process memory (the in-memory driver only), for its gauges. */
  memoryEntries?(): { entries: number; evictable: number };
  close(): Promise<void>;
}
