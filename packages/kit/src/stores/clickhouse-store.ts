// ClickHouseStore on a ClickHouse server over HTTP (`@clickhouse/client`): one client per service,
// bound to the service's own database, which is created when absent.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { CLICKHOUSE_LIMIT_DEFAULTS, limitSettings, readLimitProblem, type ClickHouseLimits } from './clickhouse-limits';
import { COMMON_SETTINGS, toCompactRows } from './clickhouse-values';
import { assertIdentifier } from './identifiers';
import type { ClickHouseStore } from './types';

export interface ClickHouseStoreOptions {
  url: string;
  database: string;
  /** Per-request timeout; defaults to 5 minutes (analytics queries can be long). */
  requestTimeoutMs?: number;
  /** Time and memory limits by role (clickhouse-limits.ts); defaults CLICKHOUSE_LIMIT_DEFAULTS. */
  limits?: ClickHouseLimits;
}

/** Where the server is, without credentials, for error messages. */
export function describeClickHouseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `ClickHouse at ${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '8443' : '8123')}`;
  } catch {
    return 'ClickHouse (unparseable URL)';
  }
}

function clientFor(url: string, database: string | undefined, requestTimeoutMs: number): ClickHouseClient {
  return createClient({
    url,
    ...(database ? { database } : {}),
    request_timeout: requestTimeoutMs,
    compression: { request: false, response: false },
    clickhouse_settings: { ...COMMON_SETTINGS },
    // Failures reach the caller as rejections; the client's own console logging would repeat them.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

export async function createClickHouseStore(options: ClickHouseStoreOptions): Promise<ClickHouseStore> {
  const database = assertIdentifier('database', options.database);
  const timeout = options.requestTimeoutMs ?? 300_000;

  // The database must exist before a client can be bound to it.
  const bootstrap = clientFor(options.url, undefined, timeout);
  try {
    const ping = await bootstrap.ping();
    if (!ping.success) {
      throw new Error(`${describeClickHouseUrl(options.url)} is unreachable: ${ping.error.message}`, { cause: ping.error });
    }
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  } finally {
    await bootstrap.close();
  }

  const client = clientFor(options.url, database, timeout);
  const limits = options.limits ?? CLICKHOUSE_LIMIT_DEFAULTS;
  // The client types UInt64 settings as strings.
  const settingsOf = (role: ClickHouseLimits['read']) => {
    const { max_execution_time, max_memory_usage } = limitSettings(role);
    return { max_execution_time, max_memory_usage: String(max_memory_usage) };
  };
  const read = settingsOf(limits.read);
  const write = settingsOf(limits.write);
  let closed: Promise<void> | null = null;
  return {
    driver: 'clickhouse',
    database,
    async query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      try {
        const result = await client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: read, ...(params ? { query_params: params } : {}) });
        return await result.json<T>();
      } catch (error) {
        throw readLimitProblem(error, limits.read);
      }
    },
    async command(sql, params) {
      await client.command({ query: sql, clickhouse_settings: write, ...(params ? { query_params: params } : {}) });
    },
    async insert(table, rows, insertOptions) {
      assertIdentifier('table', table);
      if (rows.length === 0) return;
      // As on chDB: one JSON array per row in the first row's column order (no key repeated per row).
      const columns = Object.keys(rows[0] as Record<string, unknown>) as [string, ...string[]];
      await client.insert({
        table,
        columns,
        values: toCompactRows(rows, columns),
        format: 'JSONCompactEachRow',
        clickhouse_settings: { ...write, ...(insertOptions?.dedupToken ? { insert_deduplication_token: insertOptions.dedupToken } : {}) },
      });
    },
    close() {
      closed ??= client.close();
      return closed;
    },
  };
}
