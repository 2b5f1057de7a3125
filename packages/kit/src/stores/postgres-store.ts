// SqlStore on a PostgreSQL server: one `pg` pool per service schema. Every pooled connection
// starts with `search_path` set to the schema (a startup option), so service SQL names tables
// without a prefix and cannot reach another service's schema by accident.
import pg from 'pg';
import type { Logger } from 'pino';
import { assertIdentifier } from './identifiers';
import { sqlTextParsers } from './sql-types';
import type { SqlExecutor, SqlResult, SqlStore } from './types';

/** How each schema's pool connects (the SIGHTLINE_POSTGRES_* variables, see loadConfig). */
export interface PostgresPoolSettings {
  /** Most connections the pool opens (one pool per schema, so per service). */
  size: number;
  /** Longest wait for a connection, a free pool slot and connecting included; 0 waits forever. */
  connectTimeoutMs: number;
  /** The server's `statement_timeout` for every statement on the pool's connections; 0: none. */
  statementTimeoutMs: number;
  /** An unused connection is closed after this long; 0 keeps it open. */
  idleTimeoutMs: number;
  /** TCP keep-alive probes on every connection (from 10 s idle), so a server gone without a word is noticed. */
  keepAlive: boolean;
}

export const POSTGRES_POOL_DEFAULTS: Readonly<PostgresPoolSettings> = Object.freeze({
  size: 10,
  connectTimeoutMs: 30000,
  statementTimeoutMs: 0,
  idleTimeoutMs: 10000,
  keepAlive: true,
});

/** Idle time before the first keep-alive probe (the OS default is two hours). */
const KEEPALIVE_IDLE_MS = 10_000;

export interface PostgresStoreOptions extends Partial<PostgresPoolSettings> {
  url: string;
  schema: string;
  logger?: Logger;
}

const customTypes = {
  getTypeParser(oid: number, format?: string): unknown {
    const override = format === 'binary' ? undefined : sqlTextParsers[oid];
    return override ?? pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
  },
} as unknown as pg.CustomTypesConfig;

/** Where the server is, without credentials, for error messages. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `PostgreSQL at ${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'PostgreSQL (unparseable URL)';
  }
}

function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function executorOf(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<T>> {
      const result = await client.query(sql, params);
      return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
    },
  };
}

export async function createPostgresStore(options: PostgresStoreOptions): Promise<SqlStore> {
  const schema = assertIdentifier('schema', options.schema);
  const settings: PostgresPoolSettings = { ...POSTGRES_POOL_DEFAULTS };
  for (const key of Object.keys(settings) as (keyof PostgresPoolSettings)[]) {
    if (options[key] !== undefined) (settings as unknown as Record<string, unknown>)[key] = options[key];
  }
  const pool = new pg.Pool({
    connectionString: options.url,
    max: settings.size,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs,
    keepAlive: settings.keepAlive,
    ...(settings.keepAlive ? { keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS } : {}),
    // Sent as a startup parameter (0 is not sent: the server's own default, normally none).
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    options: `-c search_path=${schema}`,
    types: customTypes,
  });
  // An idle client losing its connection emits here; unhandled, it would crash the process. A
  // checked-out client has no pool listener: transaction() gives it one while it holds it (pool.query
  // does the same for its own checkouts).
  pool.on('error', (error) => options.logger?.warn({ err: error, schema }, 'idle postgres connection failed'));

  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // Two processes creating the same schema at once: the loser sees a duplicate, which is fine.
    if (code !== '23505' && code !== '42P06') {
      await pool.end().catch(() => undefined);
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${describePostgresUrl(options.url)}: cannot prepare schema ${schema}: ${reason}`, { cause: error });
    }
  }

  const poolExecutor = executorOf(pool);
  let closed: Promise<void> | null = null;
  return {
    driver: 'postgres',
    schema,
    query: (sql, params) => poolExecutor.query(sql, params),
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      // While checked out, the client's connection errors (the server ending the session: a restart
      // or failover, 57P01; a reset socket) come here, not to an unhandled 'error' event that would
      // end the process. The client is then released as broken, so the pool discards it.
      let lost: Error | undefined;
      const onError = (error: Error): void => {
        if (!lost) options.logger?.warn({ err: error, schema }, 'postgres connection failed during a transaction');
        lost ??= error;
      };
      client.on('error', onError);
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        try {
          const result = await fn(executorOf(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            // A client that cannot roll back is discarded instead of returned to the pool.
            broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          });
          throw error;
        }
      } catch (error) {
        broken ??= lost;
        // A statement sent after the connection was lost fails with pg's "not queryable", which has
        // no SQLSTATE; the loss itself says what happened.
        throw lost && !sqlStateOf(error) ? lost : error;
      } finally {
        client.release(broken ?? lost);
        client.removeListener('error', onError);
      }
    },
    close() {
      closed ??= pool.end();
      return closed;
    },
  };
}
