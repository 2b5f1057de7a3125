import pg from 'pg';
import { createPostgresStore } from './postgres-store';
import { describeSqlStoreContract } from './sql.contract';
import type { SqlStore } from './types';

const URL = 'postgres://postgres@127.0.0.1:5432/test';

describeSqlStoreContract('postgres', async () => {
  const admin = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 5000 });
  await admin.connect().catch((error: unknown) => {
    throw new Error(`PostgreSQL at 127.0.0.1:5432 (database test) is unreachable: ${String(error)}`);
  });
  const opened: SqlStore[] = [];
  return {
    async open(schema) {
      const store = await createPostgresStore({ url: URL, schema });
      opened.push(store);
      return store;
    },
    async cleanup() {
      await Promise.all(opened.map((store) => store.close()));
      for (const store of opened) await admin.query(`DROP SCHEMA IF EXISTS ${store.schema} CASCADE`);
      await admin.end();
    },
  };
});

describe('PostgreSQL driver', () => {
  it('fails naming the server when it is unreachable', async () => {
    await expect(createPostgresStore({ url: 'postgres://postgres@127.0.0.1:1/test', schema: 'nowhere' })).rejects.toThrow(
      /PostgreSQL at 127\.0\.0\.1:1\/test/,
    );
  });
});
