// The ClickHouseStore contract, run unchanged against chDB and the `@clickhouse/client` driver.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProblemError } from '../errors';
import type { ClickHouseLimits } from './clickhouse-limits';
import { runClickHouseMigrations } from './migrations';
import type { ClickHouseStore } from './types';

export interface ClickHouseContractHarness {
  /** A store scoped to `database`, on the one engine shared by the whole suite. */
  open(database: string, limits?: ClickHouseLimits): Promise<ClickHouseStore>;
  /** Closes stores and drops every database the suite opened. */
  cleanup(): Promise<void>;
}

const uniqueDatabase = (label: string): string => `c_${label}_${Math.random().toString(36).slice(2, 10)}`;

interface EventRow {
  id: number;
  name: string;
  at: string;
  tags: string[];
}

const MIGRATION =
  '-- events, deduplicated by insert token\n' +
  'CREATE TABLE IF NOT EXISTS events (\n' +
  '  id UInt64,\n' +
  '  name String,\n' +
  '  at DateTime64(3, \'UTC\'),\n' +
  '  tags Array(String)\n' +
  ') ENGINE = MergeTree ORDER BY id\n' +
  'SETTINGS non_replicated_deduplication_window = 1000;\n' +
  'CREATE TABLE IF NOT EXISTS labels (id UInt64, label String) ENGINE = MergeTree ORDER BY id;\n';

function batch(from: number, count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: from + i,
    name: i % 2 === 0 ? `even "${from + i}"` : `it's odd ${from + i}`,
    at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678) + i * 1000).toISOString(),
    tags: i % 3 === 0 ? ['x', "y'z"] : [],
  }));
}

export function describeClickHouseStoreContract(
  driver: ClickHouseStore['driver'],
  setup: () => Promise<ClickHouseContractHarness>,
): void {
  describe(`ClickHouseStore contract (${driver})`, () => {
    let harness: ClickHouseContractHarness;
    let a: ClickHouseStore;
    let b: ClickHouseStore;
    let migrationsDir: string;

    const count = async (store: ClickHouseStore, table: string): Promise<number> =>
      (await store.query<{ n: number }>(`SELECT count() AS n FROM ${table}`))[0]?.n ?? -1;

    beforeAll(async () => {
      migrationsDir = mkdtempSync(join(tmpdir(), 'ch-migrations-'));
      writeFileSync(join(migrationsDir, '001_events.sql'), MIGRATION);
      harness = await setup();
      a = await harness.open(uniqueDatabase('a'));
      b = await harness.open(uniqueDatabase('b'));
    }, 120_000);

    afterAll(async () => {
      await harness?.cleanup();
      rmSync(migrationsDir, { recursive: true, force: true });
    }, 60_000);

    it('reports its driver and database', () => {
      expect(a.driver).toBe(driver);
      expect(a.database).toMatch(/^c_a_/);
    });

    it('creates tables through migrations, once', async () => {
      expect(await runClickHouseMigrations(a, migrationsDir)).toEqual(['001_events.sql']);
      expect(await runClickHouseMigrations(a, migrationsDir)).toEqual([]);
      expect(await count(a, 'events')).toBe(0);
      const tables = await a.query<{ name: string }>(
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      );
      expect(tables.map((t) => t.name)).toEqual(['events', 'labels', 'schema_migrations']);
    });

    it('inserts a batch and reads it back as objects', async () => {
      await a.insert('events', batch(1, 100));
      expect(await count(a, 'events')).toBe(100);
      const rows = await a.query<EventRow>('SELECT id, name, at, tags FROM events WHERE id IN (1, 2) ORDER BY id');
      expect(rows).toEqual([
        { id: 1, name: 'even "1"', at: '2024-01-02 03:04:05.678', tags: ['x', "y'z"] },
        { id: 2, name: "it's odd 2", at: '2024-01-02 03:04:06.678', tags: [] },
      ]);
      await a.insert('labels', [{ id: 18446744073709551615n, label: 'max' }]);
      expect(await a.query('SELECT toString(id) AS id FROM labels WHERE label = {l:String}', { l: 'max' })).toEqual([
        { id: '18446744073709551615' },
      ]);
      await a.command('TRUNCATE TABLE labels');
      await a.insert('events', []);
      expect(await count(a, 'events')).toBe(100);
    });

    it('binds parameters of several types', async () => {
      const rows = await a.query<{ n: number; first: number; last: number }>(
        `SELECT count() AS n, min(id) AS first, max(id) AS last FROM events
          WHERE at >= {from:DateTime64(3)} AND at < {to:DateTime64(3)}
            AND id >= {minId:UInt64} AND has({tags:Array(String)}, name) = {wanted:UInt8}`,
        {
          from: new Date('2024-01-02T03:04:10.678Z'),
          to: new Date('2024-01-02T03:04:20.678Z'),
          minId: 3,
          tags: ['even "7"', 'even "9"', "it's odd 8"],
          wanted: true,
        },
      );
      // ids 6..15 fall in the window; of the listed names, 7, 8 and 9 are among them.
      expect(rows).toEqual([{ n: 3, first: 7, last: 9 }]);

      const tricky = "it's \"quoted\" \\ back\tslash\nnew line";
      const echoed = await a.query<{ s: string; arr: string[]; d: string; big: number }>(
        'SELECT {s:String} AS s, {arr:Array(String)} AS arr, {d:DateTime64(3, \'UTC\')} AS d, {big:Int64} AS big',
        { s: tricky, arr: ["a'b", 'c"d', ''], d: new Date('2024-05-06T07:08:09.010Z'), big: -1234567890123 },
      );
      expect(echoed).toEqual([{ s: tricky, arr: ["a'b", 'c"d', ''], d: '2024-05-06 07:08:09.010', big: -1234567890123 }]);

      const injected = await a.query<{ n: number }>('SELECT count() AS n FROM events WHERE name = {name:String}', {
        name: "x' OR 1=1 --",
      });
      expect(injected).toEqual([{ n: 0 }]);
    });

    it('runs commands with parameters', async () => {
      await a.command('INSERT INTO labels SELECT number, {label:String} FROM numbers(3)', { label: "l'1" });
      expect(await a.query('SELECT DISTINCT label FROM labels')).toEqual([{ label: "l'1" }]);
    });

    it('does not duplicate a retried batch with the same dedup token', async () => {
      const rows = batch(1000, 50);
      await a.insert('events', rows, { dedupToken: 'batch-1000' });
      await a.insert('events', rows, { dedupToken: 'batch-1000' });
      expect(await count(a, 'events')).toBe(150);
      // The same rows under a new token are a new batch.
      await a.insert('events', rows, { dedupToken: 'batch-1000-again' });
      expect(await count(a, 'events')).toBe(200);
      await a.insert('events', rows, { dedupToken: 'batch-1000' });
      expect(await count(a, 'events')).toBe(200);
    });

    it('keeps each service in its own database', async () => {
      await runClickHouseMigrations(b, migrationsDir);
      await b.insert('events', batch(1, 3));
      expect(await count(b, 'events')).toBe(3);
      expect(await count(a, 'events')).toBe(200);
      await b.command('CREATE TABLE only_b (x UInt8) ENGINE = Memory');
      await expect(a.query('SELECT * FROM only_b')).rejects.toThrow(/only_b/);
      expect((await b.query<{ db: string }>('SELECT currentDatabase() AS db'))[0]?.db).toBe(b.database);
      expect((await a.query<{ db: string }>('SELECT currentDatabase() AS db'))[0]?.db).toBe(a.database);
    });

    it('keeps databases apart under concurrent queries', async () => {
      const jobs: Promise<[string, string]>[] = [];
      for (let i = 0; i < 20; i += 1) {
        for (const store of [a, b]) {
          jobs.push(
            store
              .query<{ db: string }>('SELECT currentDatabase() AS db, {i:UInt32} AS i', { i })
              .then((rows) => [store.database, rows[0]?.db ?? '']),
          );
        }
      }
      for (const [expected, seen] of await Promise.all(jobs)) expect(seen).toBe(expected);
    });

    it('rejects a bad query with an Error', async () => {
      const failure = await a.query('SELEC 1').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(/Syntax error/i);
      await expect(a.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
      await expect(a.command('CREATE TABLE broken (')).rejects.toBeInstanceOf(Error);
      // Still usable afterwards.
      expect(await a.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    });

    describe('limits by role', () => {
      let limited: ClickHouseStore;
      beforeAll(async () => {
        limited = await harness.open(uniqueDatabase('limited'), {
          read: { maxExecutionSeconds: 1, maxMemoryBytes: 64 * 1024 * 1024 },
          write: { maxExecutionSeconds: 0, maxMemoryBytes: 0 },
        });
        await limited.command('CREATE TABLE t (n UInt64) ENGINE = MergeTree ORDER BY n');
      }, 60_000);

      it('stops a read at its time limit with window-too-large naming the limit', async () => {
        const failure = await limited.query('SELECT sum(number) AS s FROM numbers(1000000000000)').catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ProblemError);
        expect((failure as ProblemError).kind).toBe('window-too-large');
        expect((failure as ProblemError).message).toContain('1 s');
      }, 60_000);

      it('stops a read at its memory limit with window-too-large naming the limit', async () => {
        const failure = await limited.query('SELECT length(groupArray(number)) AS n FROM numbers(50000000)').catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ProblemError);
        expect((failure as ProblemError).kind).toBe('window-too-large');
        expect((failure as ProblemError).message).toContain('64 MiB');
      }, 60_000);

      it('holds writes to the write limits, not the read ones', async () => {
        // The same memory-hungry work as a write: under the read limit it would fail.
        await limited.command('INSERT INTO t SELECT length(groupArray(number)) FROM numbers(50000000)');
        expect(await limited.query('SELECT n FROM t')).toEqual([{ n: 50000000 }]);
        // A read within the limits still answers.
        expect(await limited.query('SELECT count() AS c FROM numbers(1000)')).toEqual([{ c: 1000 }]);
      }, 60_000);
    });
  });
}
