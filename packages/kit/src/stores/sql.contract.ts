// The SqlStore contract, run unchanged against PostgreSQL and PGlite by their test runners.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSqlMigrations } from './migrations';
import type { SqlStore } from './types';

export interface SqlContractHarness {
  /** A store scoped to `schema`, on the one instance shared by the whole suite. */
  open(schema: string): Promise<SqlStore>;
  /** Closes stores and removes every schema the suite opened. */
  cleanup(): Promise<void>;
}

const uniqueSchema = (label: string): string => `c_${label}_${Math.random().toString(36).slice(2, 10)}`;

export function describeSqlStoreContract(driver: SqlStore['driver'], setup: () => Promise<SqlContractHarness>): void {
  describe(`SqlStore contract (${driver})`, () => {
    let harness: SqlContractHarness;
    let a: SqlStore;
    let b: SqlStore;

    beforeAll(async () => {
      harness = await setup();
      a = await harness.open(uniqueSchema('a'));
      b = await harness.open(uniqueSchema('b'));
    }, 120_000);

    afterAll(async () => {
      await harness?.cleanup();
    }, 60_000);

    it('reports its driver and schema', () => {
      expect(a.driver).toBe(driver);
      expect(a.schema).toMatch(/^c_a_/);
    });

    it('runs queries with bound parameters and reports rowCount', async () => {
      await a.query(
        'CREATE TABLE things (id int PRIMARY KEY, name text NOT NULL, big bigint, day date, at timestamptz, data jsonb)',
      );
      const at = new Date('2024-03-04T05:06:07.890Z');
      const inserted = await a.query(
        'INSERT INTO things (id, name, big, day, at, data) VALUES ($1, $2, $3, $4, $5, $6), ($7, $8, $9, $10, $11, $12)',
        [1, "it's \"quoted\"", '9007199254740993', '2024-03-04', at, JSON.stringify({ k: [1, 2] }),
          2, 'second', null, null, null, null],
      );
      expect(inserted.rowCount).toBe(2);

      const selected = await a.query<{ id: number; name: string; big: string; day: string; at: Date; data: unknown }>(
        'SELECT id, name, big, day, at, data FROM things WHERE id = $1',
        [1],
      );
      expect(selected.rowCount).toBe(1);
      expect(selected.rows[0]?.at).toBeInstanceOf(Date);
      expect(selected.rows).toEqual([
        { id: 1, name: "it's \"quoted\"", big: '9007199254740993', day: '2024-03-04', at, data: { k: [1, 2] } },
      ]);

      const counted = await a.query<{ n: string; m: number }>('SELECT count(*) AS n, count(*)::int AS m FROM things');
      expect(counted.rows[0]).toEqual({ n: '2', m: 2 });

      const updated = await a.query('UPDATE things SET name = $1 WHERE id > $2', ['renamed', 0]);
      expect(updated.rowCount).toBe(2);
      const none = await a.query('SELECT * FROM things WHERE name = $1', ["x' OR '1'='1"]);
      expect(none.rows).toEqual([]);
      expect(none.rowCount).toBe(0);
    });

    it('round-trips bytea and text[] parameters as Buffer and string[]', async () => {
      await a.query('CREATE TABLE blobs (id int PRIMARY KEY, bytes bytea NOT NULL, tags text[] NOT NULL)');
      const bytes = Buffer.from([0, 1, 2, 254, 255]);
      await a.query('INSERT INTO blobs (id, bytes, tags) VALUES ($1, $2, $3)', [1, bytes, ['a', "b'c"]]);
      const { rows } = await a.query<{ bytes: Buffer; tags: string[] }>('SELECT bytes, tags FROM blobs WHERE bytes = $1', [bytes]);
      expect(Buffer.isBuffer(rows[0]?.bytes)).toBe(true);
      expect(rows[0]?.bytes.equals(bytes)).toBe(true);
      expect(rows[0]?.tags).toEqual(['a', "b'c"]);
    });

    it('rejects a bad statement with an Error carrying the SQLSTATE', async () => {
      const failure = await a.query('SELEC 1').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as { code?: string }).code).toBe('42601');
    });

    it('commits a transaction when the callback resolves', async () => {
      await a.query('CREATE TABLE ledger (id int PRIMARY KEY, amount int NOT NULL)');
      const result = await a.transaction(async (tx) => {
        await tx.query('INSERT INTO ledger VALUES ($1, $2)', [1, 10]);
        await tx.query('INSERT INTO ledger VALUES ($1, $2)', [2, 20]);
        return (await tx.query<{ total: number }>('SELECT sum(amount)::int AS total FROM ledger')).rows[0]?.total;
      });
      expect(result).toBe(30);
      expect((await a.query('SELECT * FROM ledger')).rowCount).toBe(2);
    });

    it('rolls a transaction back when the callback throws', async () => {
      const failure = await a
        .transaction(async (tx) => {
          await tx.query('INSERT INTO ledger VALUES ($1, $2)', [3, 30]);
          throw new Error('changed my mind');
        })
        .catch((error: unknown) => error);
      expect((failure as Error).message).toBe('changed my mind');

      const sqlFailure = await a
        .transaction(async (tx) => {
          await tx.query('INSERT INTO ledger VALUES ($1, $2)', [4, 40]);
          await tx.query('INSERT INTO ledger VALUES ($1, $2)', [1, 99]); // duplicate key
        })
        .catch((error: unknown) => error);
      expect((sqlFailure as { code?: string }).code).toBe('23505');

      const ids = (await a.query<{ id: number }>('SELECT id FROM ledger ORDER BY id')).rows.map((r) => r.id);
      expect(ids).toEqual([1, 2]);
      // The store is usable afterwards.
      expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });

    it('keeps two services in their own schemas', async () => {
      await a.query('CREATE TABLE items (label text)');
      await b.query('CREATE TABLE items (label text)');
      await a.query('INSERT INTO items VALUES ($1)', ['from a']);
      await b.query('INSERT INTO items VALUES ($1), ($2)', ['from b', 'from b again']);
      expect((await a.query('SELECT label FROM items')).rows).toEqual([{ label: 'from a' }]);
      expect((await b.query('SELECT label FROM items')).rowCount).toBe(2);
      // A table that only exists in a's schema is invisible to b.
      await expect(b.query('SELECT * FROM ledger')).rejects.toThrow(/ledger/);
    });

    it('never lets concurrent queries of two schemas see each other\'s search_path', async () => {
      const jobs: Promise<[string, string, number]>[] = [];
      for (let i = 0; i < 40; i += 1) {
        for (const store of [a, b]) {
          jobs.push(
            store
              .query<{ schema: string; n: number }>('SELECT current_schema() AS schema, count(*)::int AS n FROM items')
              .then((r) => [store.schema, r.rows[0]?.schema ?? '', r.rows[0]?.n ?? -1]),
          );
        }
      }
      // A transaction in a, with b's queries racing it, must stay in a's schema throughout. It adds
      // two rows, so a's queries see 1 (before its commit) or 3 (after), never b's 2.
      const inTx = a.transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES ($1), ($1)', ['pending']);
        await tx.query('SELECT pg_sleep(0.05)');
        return (await tx.query<{ schema: string; n: number }>('SELECT current_schema() AS schema, count(*)::int AS n FROM items')).rows[0];
      });
      const duringTx = b.query<{ n: number }>('SELECT count(*)::int AS n FROM items');

      for (const [expected, seen, n] of await Promise.all(jobs)) {
        expect(seen).toBe(expected);
        expect(expected === a.schema ? [1, 3] : [2]).toContain(n);
      }
      expect(await inTx).toEqual({ schema: a.schema, n: 3 });
      expect((await duringTx).rows[0]?.n).toBe(2);
      await a.query('DELETE FROM items WHERE label = $1', ['pending']);
    });

    it('applies migrations once when several processes start on a new schema at once', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sql-migrations-race-'));
      const schema = uniqueSchema('race');
      try {
        writeFileSync(join(dir, '001_init.sql'), 'CREATE TABLE raced (id int PRIMARY KEY);\nINSERT INTO raced (id) VALUES (1);\n');
        // Replicas starting together: each its own connection to the same, not yet migrated schema.
        const stores = await Promise.all([1, 2, 3].map(() => harness.open(schema)));
        const applied = await Promise.all(stores.map((store) => runSqlMigrations(store, dir)));
        expect(applied.flat()).toEqual(['001_init.sql']);
        expect((await (stores[0] as SqlStore).query<{ n: number }>('SELECT count(*)::int AS n FROM raced')).rows).toEqual([{ n: 1 }]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('applies migrations once, in name order, each in one transaction', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sql-migrations-'));
      try {
        writeFileSync(
          join(dir, '002_more.sql'),
          'ALTER TABLE accounts ADD COLUMN plan text NOT NULL DEFAULT \'free\';\n' +
            'INSERT INTO accounts (id) VALUES (2);\n',
        );
        writeFileSync(
          join(dir, '001_init.sql'),
          '-- accounts of a workspace\n' +
            'CREATE TABLE accounts (id int PRIMARY KEY);\n' +
            'CREATE FUNCTION double_it(x int) RETURNS int AS $$\n' +
            'BEGIN\n' +
            '  RETURN x * 2;\n' +
            'END;\n' +
            '$$ LANGUAGE plpgsql;\n' +
            'INSERT INTO accounts (id) VALUES (1);\n',
        );
        writeFileSync(join(dir, 'README.txt'), 'not a migration');
        expect(await runSqlMigrations(a, dir)).toEqual(['001_init.sql', '002_more.sql']);
        expect(await runSqlMigrations(a, dir)).toEqual([]);
        const rows = (await a.query<{ id: number; plan: string; doubled: number }>(
          'SELECT id, plan, double_it(id) AS doubled FROM accounts ORDER BY id',
        )).rows;
        expect(rows).toEqual([
          { id: 1, plan: 'free', doubled: 2 },
          { id: 2, plan: 'free', doubled: 4 },
        ]);

        // A failing file leaves nothing behind and is not recorded.
        writeFileSync(join(dir, '003_broken.sql'), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n');
        await expect(runSqlMigrations(a, dir)).rejects.toThrow(/003_broken\.sql/);
        await expect(a.query('SELECT * FROM half_done')).rejects.toThrow();
        const recorded = (await a.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows;
        expect(recorded.map((r) => r.name)).toEqual(['001_init.sql', '002_more.sql']);

        // The record lives in the service's own schema.
        expect(await runSqlMigrations(b, join(dir, 'empty-does-not-exist')).catch((e: Error) => e.message)).toMatch(
          /cannot read migrations directory/,
        );
        await expect(b.query('SELECT * FROM accounts')).rejects.toThrow();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
