// Builds each service's store handles from configuration: the server driver when a URL is given,
// the embedded one (PGlite, chDB, memory) otherwise. Same contracts either way.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createChdbStore, defaultChdbPath } from './chdb-store';
import type { ClickHouseLimits } from './clickhouse-limits';
import { createClickHouseStore } from './clickhouse-store';
import { assertIdentifier } from './identifiers';
import { createMemoryKv } from './memory-kv';
import { openPglite, type PgliteHandle } from './pglite-store';
import { createPostgresStore, type PostgresPoolSettings } from './postgres-store';
import { createRedisKv } from './redis-kv';
import type { ClickHouseStore, KvStore, SqlStore } from './types';

export interface StoreProviderOptions {
  postgresUrl?: string;
  /** Each PostgreSQL pool's size, timeouts and keep-alive (config.postgresPool); unset ones take the defaults. */
  postgresPool?: Partial<PostgresPoolSettings>;
  clickhouseUrl?: string;
  /** Time and memory limits of ClickHouse statements by role; unset: CLICKHOUSE_LIMIT_DEFAULTS. */
  clickhouseLimits?: ClickHouseLimits;
  redisUrl?: string;
  /** Where embedded stores keep their files; omitted means in memory / a per-process temp dir. */
  dataDir?: string;
  logger: Logger;
  /** Namespaces KV keys (tests use a unique prefix per run). */
  keyPrefix?: string;
}

export interface StoreProvider {
  /** The store for one Postgres schema; asking twice for a schema gives the same store. */
  sql(schema: string): Promise<SqlStore>;
  /** The store for one ClickHouse database; asking twice gives the same store. */
  clickhouse(database: string): Promise<ClickHouseStore>;
  /** The process's one KV store, shared by every service. */
  kv(): Promise<KvStore>;
  /** Closes every store this provider opened. */
  close(): Promise<void>;
}

/** Closing a handed-out store is left to the provider, which owns it. */
function ownedByProvider<T extends { close(): Promise<void> }>(store: T): T {
  return { ...store, close: () => Promise.resolve() } as T;
}

export function createStoreProvider(options: StoreProviderOptions): StoreProvider {
  const sqlStores = new Map<string, Promise<SqlStore>>();
  const clickhouseStores = new Map<string, Promise<ClickHouseStore>>();
  let kvStore: Promise<KvStore> | null = null;
  let pglite: Promise<PgliteHandle> | null = null;
  let closing: Promise<void> | null = null;

  const assertOpen = (): void => {
    if (closing) throw new Error('store provider is closed');
  };

  // A failed open is forgotten, so a later call can retry.
  function memo<T>(cache: Map<string, Promise<T>>, key: string, open: () => Promise<T>): Promise<T> {
    let pending = cache.get(key);
    if (!pending) {
      pending = open();
      cache.set(key, pending);
      pending.catch(() => cache.delete(key));
    }
    return pending;
  }

  const openSql = async (schema: string): Promise<SqlStore> => {
    if (options.postgresUrl) {
      return createPostgresStore({ ...options.postgresPool, url: options.postgresUrl, schema, logger: options.logger });
    }
    if (!pglite) {
      pglite = openPglite(options.dataDir ? join(options.dataDir, 'pglite') : undefined);
      pglite.catch(() => {
        pglite = null;
      });
    }
    return (await pglite).store(schema);
  };

  const limits = options.clickhouseLimits ? { limits: options.clickhouseLimits } : {};
  const openClickHouse = (database: string): Promise<ClickHouseStore> =>
    options.clickhouseUrl
      ? createClickHouseStore({ url: options.clickhouseUrl, database, ...limits })
      : createChdbStore({ path: options.dataDir ? join(options.dataDir, 'chdb') : defaultChdbPath(), database, ...limits });

  return {
    async sql(schema) {
      assertOpen();
      assertIdentifier('schema', schema);
      return ownedByProvider(await memo(sqlStores, schema, () => openSql(schema)));
    },
    async clickhouse(database) {
      assertOpen();
      assertIdentifier('database', database);
      return ownedByProvider(await memo(clickhouseStores, database, () => openClickHouse(database)));
    },
    async kv() {
      assertOpen();
      if (!kvStore) {
        const prefix = options.keyPrefix !== undefined ? { keyPrefix: options.keyPrefix } : {};
        kvStore = options.redisUrl
          ? createRedisKv({ url: options.redisUrl, logger: options.logger, ...prefix })
          : Promise.resolve(createMemoryKv(prefix));
        kvStore.catch(() => {
          kvStore = null;
        });
      }
      return ownedByProvider(await kvStore);
    },
    close() {
      closing ??= (async () => {
        const settled = <T>(pending: Iterable<Promise<T>>): Promise<T[]> =>
          Promise.allSettled(pending).then((results) =>
            results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
          );
        const stores: { close(): Promise<void> }[] = [
          ...(await settled(sqlStores.values())),
          ...(await settled(clickhouseStores.values())),
          ...(await settled(kvStore ? [kvStore] : [])),
        ];
        const failures: unknown[] = [];
        for (const store of stores) await store.close().catch((error: unknown) => failures.push(error));
        if (pglite) {
          const handle = await pglite.catch(() => null);
          await handle?.release().catch((error: unknown) => failures.push(error));
        }
        if (failures.length > 0) {
          options.logger.error({ err: failures[0], failures: failures.length }, 'closing stores failed');
          throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
        }
      })();
      return closing;
    },
  };
}

export { createChdbStore, defaultChdbPath } from './chdb-store';
export { createClickHouseStore } from './clickhouse-store';
export { CLICKHOUSE_LIMIT_DEFAULTS, type ClickHouseLimits, type ClickHouseRoleLimits } from './clickhouse-limits';
export { createMemoryKv } from './memory-kv';
export { openPglite } from './pglite-store';
export { createPostgresStore, POSTGRES_POOL_DEFAULTS, type PostgresPoolSettings } from './postgres-store';
export { createRedisKv } from './redis-kv';
export { runClickHouseMigrations, runSqlMigrations } from './migrations';
