// Store instrumentation: the runner wraps every store handle it gives a module, so each query is
// measured as `sightline_store_query_duration_seconds{service,store,operation,outcome}` and, with
// tracing on, gets a client span. The wrapper keeps the store's contract exactly (it only delegates)
// and tags the handle with its owner, so kit parts built on it (the outbox) can report per service.
//
// `store` is the driver (postgres, pglite, clickhouse, chdb, redis, memory); `operation` comes from a
// fixed set: for SQL the statement's leading keyword (select, insert, update, delete, with, ddl,
// other) or `transaction` for a whole transaction; for ClickHouse query, command or insert; for the
// key-value store the method.
import type { Histogram, Registry } from 'prom-client';
import type { ClickHouseStore, KvStore, SqlExecutor, SqlStore } from '../stores/types';
import { histogramOf } from './metric-families';
import { SpanKind, tracingEnabled, withSpan } from './tracing';

export interface StoreOwner {
  service: string;
  metrics: Registry;
}

const OWNER = Symbol.for('sightline.store-owner');

/** The service and registry a store handle was given to by the runner; undefined for a bare store. */
export function storeOwnerOf(store: object): StoreOwner | undefined {
  return (store as { [OWNER]?: StoreOwner })[OWNER];
}

type Outcome = 'ok' | 'error';

function queryFamily(registry: Registry): Histogram<'service' | 'store' | 'operation' | 'outcome'> {
  return histogramOf(registry, 'sightline_store_query_duration_seconds', 'Store operations by service, store driver, operation (a fixed set) and outcome (ok, error).', ['service', 'store', 'operation', 'outcome'] as const);
}

/** Registers the store family up front, so dashboards find it in every process. */
export function registerStoreFamilies(registry: Registry): void {
  queryFamily(registry);
}

const DB_SYSTEM: Record<string, string> = { postgres: 'postgresql', pglite: 'postgresql', clickhouse: 'clickhouse', chdb: 'clickhouse', redis: 'redis', memory: 'memory' };
const MAX_QUERY_TEXT = 2_000;

type Observer = { observe(seconds: number): void };

/** Labelled children per (service, store, operation, outcome), so a measurement does not hash labels. */
function observers(owner: StoreOwner, store: string): (operation: string) => Record<Outcome, Observer> {
  const family = queryFamily(owner.metrics);
  const byOperation = new Map<string, Record<Outcome, Observer>>();
  return (operation) => {
    let pair = byOperation.get(operation);
    if (!pair) {
      pair = {
        ok: family.labels({ service: owner.service, store, operation, outcome: 'ok' }),
        error: family.labels({ service: owner.service, store, operation, outcome: 'error' }),
      };
      byOperation.set(operation, pair);
    }
    return pair;
  };
}

function measure(observe: (operation: string) => Record<Outcome, Observer>, store: string, namespace: string): <T>(operation: string, run: () => Promise<T>, queryText?: string) => Promise<T> {
  return async <T>(operation: string, run: () => Promise<T>, queryText?: string): Promise<T> => {
    const startedAt = process.hrtime.bigint();
    let outcome: Outcome = 'error';
    try {
      const result = tracingEnabled()
        ? await withSpan(`${store} ${operation}`, {
            kind: SpanKind.CLIENT,
            attributes: {
              'db.system.name': DB_SYSTEM[store] ?? store,
              'db.namespace': namespace,
              'db.operation.name': operation,
              // SQL text only: values always travel as bound parameters, never in the text.
              ...(queryText ? { 'db.query.text': queryText.length > MAX_QUERY_TEXT ? `${queryText.slice(0, MAX_QUERY_TEXT)}…` : queryText } : {}),
            },
          }, () => run())
        : await run();
      outcome = 'ok';
      return result;
    } finally {
      observe(operation)[outcome].observe(Number(process.hrtime.bigint() - startedAt) / 1e9);
    }
  };
}

const SQL_OPERATIONS: Record<string, string> = {
  select: 'select', insert: 'insert', update: 'update', delete: 'delete', with: 'with',
  create: 'ddl', alter: 'ddl', drop: 'ddl', truncate: 'ddl', comment: 'ddl',
};

/** The statement's leading keyword, past comments and parentheses, mapped to the fixed set. */
export function sqlOperationOf(sql: string): string {
  const text = sql.replace(/^(\s|\(|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, '');
  const keyword = /^[A-Za-z]+/.exec(text)?.[0]?.toLowerCase() ?? '';
  return SQL_OPERATIONS[keyword] ?? 'other';
}

function tag<T extends object>(store: T, owner: StoreOwner): T {
  Object.defineProperty(store, OWNER, { value: owner, enumerable: false });
  return store;
}

type Measure = ReturnType<typeof measure>;

function sqlExecutor(inner: SqlExecutor, timed: Measure): SqlExecutor {
  return {
    query: (sql, params) => timed(sqlOperationOf(sql), () => inner.query(sql, params), sql),
  };
}

export function instrumentSql(store: SqlStore, owner: StoreOwner): SqlStore {
  const timed = measure(observers(owner, store.driver), store.driver, store.schema);
  const executor = sqlExecutor(store, timed);
  return tag<SqlStore>(
    {
      driver: store.driver,
      schema: store.schema,
      query: executor.query,
      transaction: (fn) => timed('transaction', () => store.transaction((tx) => fn(sqlExecutor(tx, timed)))),
      close: () => store.close(),
    },
    owner,
  );
}

export function instrumentClickHouse(store: ClickHouseStore, owner: StoreOwner): ClickHouseStore {
  const timed = measure(observers(owner, store.driver), store.driver, store.database);
  return tag<ClickHouseStore>(
    {
      driver: store.driver,
      database: store.database,
      query: (sql, params) => timed('query', () => store.query(sql, params), sql),
      command: (sql, params) => timed('command', () => store.command(sql, params), sql),
      insert: (table, rows, options) => timed('insert', () => store.insert(table, rows, options)),
      close: () => store.close(),
    },
    owner,
  );
}

export function instrumentKv(store: KvStore, owner: StoreOwner): KvStore {
  // Keys name addresses and ids: they stay out of spans.
  const timed = measure(observers(owner, store.driver), store.driver, 'kv');
  return tag<KvStore>(
    {
      driver: store.driver,
      get: (key) => timed('get', () => store.get(key)),
      set: (key, value, options) => timed('set', () => store.set(key, value, options)),
      del: (key) => timed('del', () => store.del(key)),
      getMany: (keys) => timed('get_many', () => store.getMany(keys)),
      setMany: (entries, options) => timed('set_many', () => store.setMany(entries, options)),
      incrBy: (key, by, ttlMs) => timed('incr_by', () => store.incrBy(key, by, ttlMs)),
      consumeRate: (key, points, windowMs, cost) => timed('consume_rate', () => store.consumeRate(key, points, windowMs, cost)),
      tryAcquire: (key, limit, leaseMs) => timed('try_acquire', () => store.tryAcquire(key, limit, leaseMs)),
      close: () => store.close(),
    },
    owner,
  );
}
