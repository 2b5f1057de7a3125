// SqlStore on a PostgreSQL server: one `pg` pool per service schema. Every pooled connection
// starts with `search_path` set to the schema (a startup option), so service SQL names tables
// without a prefix and cannot reach another service's schema by accident.
import pg from 'pg';
import type { Logger } from 'pino';
import { assertIdentifier } from './identifiers';
import { sqlTextParsers } from './sql-types';
import type { SqlExecutor, SqlResult, SqlStore } from './types';

export interface PostgresStoreOptions {
  url: string;
  schema: string;
  logger?: Logger;
  /** Pool size; defaults to 10. */
  maxConnections?: number;
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
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    options: `-c search_path=${schema}`,
    types: customTypes,
  });
  // An idle client losing its connection emits here; unhandled, it would crash the process.
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
      } finally {
        client.release(broken);
      }
    },
    close() {
      closed ??= pool.end();
      return closed;
    },
  };
}
