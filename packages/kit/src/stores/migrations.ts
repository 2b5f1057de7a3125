// Schema migrations: `*.sql` files applied once each, in name order, recorded in a
// `schema_migrations` table inside the service's own schema/database, so restarts skip what ran.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClickHouseStore, SqlStore } from './types';

/**
 * Splits a file into statements at a `;` that ends a line, outside `$tag$ ... $tag$` bodies (so a
 * Postgres function body may hold its own `;` lines). Comment-only pieces are dropped.
 */
export function splitSqlStatements(text: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let dollarTag: string | null = null;

  const flush = (): void => {
    const statement = current.join('\n').trim();
    current = [];
    const meaningful = statement
      .split('\n')
      .some((line) => line.trim() !== '' && !line.trim().startsWith('--'));
    if (meaningful) statements.push(statement);
  };

  for (const line of text.split(/\r?\n/)) {
    for (const match of line.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)?\$/g)) {
      const tag = match[0];
      if (dollarTag === null) dollarTag = tag;
      else if (dollarTag === tag) dollarTag = null;
    }
    const trimmed = line.trimEnd();
    if (dollarTag === null && trimmed.endsWith(';')) {
      current.push(trimmed.slice(0, -1));
      flush();
    } else {
      current.push(line);
    }
  }
  flush();
  return statements;
}

interface MigrationFile {
  name: string;
  statements: string[];
}

async function loadMigrations(dir: string): Promise<MigrationFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.sql'));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot read migrations directory ${dir}: ${reason}`, { cause: error });
  }
  // Plain code-unit order, so the result never depends on the locale.
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(
    names.map(async (name) => ({ name, statements: splitSqlStatements(await readFile(join(dir, name), 'utf8')) })),
  );
}

/**
 * Applies pending Postgres migrations, each file in one transaction. A transaction-scoped
 * advisory lock lets several processes start at once without applying a file twice.
 * Returns the names applied by this call.
 */
export async function runSqlMigrations(store: SqlStore, dir: string): Promise<string[]> {
  const files = await loadMigrations(dir);
  // Under the same lock as each file: two replicas starting at once on a new database would both
  // try to create the table, and Postgres refuses the loser (a duplicate pg_type row), IF NOT EXISTS or not.
  await store.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.schema_migrations'))");
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  });
  const done = new Set(
    (await store.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name),
  );
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file.name)) continue;
    const ran = await store.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.schema_migrations'))");
      const already = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file.name]);
      if (already.rowCount > 0) return false;
      for (const statement of file.statements) {
        try {
          await tx.query(statement);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new Error(`migration ${file.name} failed in schema ${store.schema}: ${reason}`, { cause: error });
        }
      }
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file.name]);
      return true;
    });
    if (ran) applied.push(file.name);
  }
  return applied;
}

/**
 * Applies pending ClickHouse migrations, one statement per call (ClickHouse has no multi-statement
 * requests and no DDL transactions). A file that fails part-way runs again from its start next
 * time, so migration DDL should be idempotent (`IF NOT EXISTS`). Returns the names applied.
 */
export async function runClickHouseMigrations(store: ClickHouseStore, dir: string): Promise<string[]> {
  const files = await loadMigrations(dir);
  await store.command(
    'CREATE TABLE IF NOT EXISTS schema_migrations (name String, applied_at DateTime64(3) DEFAULT now64(3)) ' +
      'ENGINE = ReplacingMergeTree ORDER BY name',
  );
  const done = new Set((await store.query<{ name: string }>('SELECT DISTINCT name FROM schema_migrations')).map((row) => row.name));
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file.name)) continue;
    for (const statement of file.statements) {
      try {
        await store.command(statement);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`migration ${file.name} failed in database ${store.database}: ${reason}`, { cause: error });
      }
    }
    await store.insert('schema_migrations', [{ name: file.name }]);
    applied.push(file.name);
  }
  return applied;
}
