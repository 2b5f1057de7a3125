// A PostgreSQL fast restart (what a failover or a CloudNativePG switchover does to every session:
// 57P01) under 10 looping transactions. The store must not take the process down: the transactions
// caught by the restart reject, the pool drops their connections, and the same store serves new
// transactions once the server is back. The server here is a private cluster of this suite's own
// (initdb + pg_ctl on a free port in a temp dir), so the shared server on 5432 is never restarted.
import pino from 'pino';
import { PrivatePostgres } from '../../testing/private-servers';
import { createStoreProvider } from './index';
import { createPostgresStore } from './postgres-store';
import type { SqlStore } from './types';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL store across a server restart', () => {
  let cluster: PrivatePostgres;
  let store: SqlStore | undefined;
  const warnings: { msg?: string; err?: { code?: string; message?: string } }[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as (typeof warnings)[number]) });

  beforeAll(async () => {
    cluster = await PrivatePostgres.start();
  }, 30_000);

  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await cluster?.destroy();
  }, 30_000);

  it('rejects the transactions the restart cut, keeps the process, and serves new ones with the same store', async () => {
    store = await createPostgresStore({ url: cluster.url, schema: 'restart_test', logger, connectTimeoutMs: 2000 });
    const sql = store;
    await sql.query('CREATE TABLE IF NOT EXISTS writes (loop int NOT NULL, n int NOT NULL, PRIMARY KEY (loop, n))');

    let phase: 'before' | 'restarting' | 'after' = 'before';
    let stop = false;
    const LOOPS = 10;
    const committed: [number, number][] = [];
    const stats = Array.from({ length: LOOPS }, () => ({ before: 0, failed: 0, after: 0 }));
    const failures: string[] = [];

    // Each transaction writes, holds the session a moment (in a statement and between statements),
    // then writes again, so at any instant most of the 10 sessions are inside a transaction.
    const loop = async (id: number): Promise<void> => {
      for (let n = 0; !stop; n++) {
        const started = phase;
        try {
          await sql.transaction(async (tx) => {
            await tx.query('INSERT INTO writes (loop, n) VALUES ($1, $2)', [id, n]);
            await tx.query('SELECT pg_sleep(0.02)');
            await sleep(5);
            await tx.query('UPDATE writes SET n = n WHERE loop = $1 AND n = $2', [id, n]);
          });
          committed.push([id, n]);
          if (started === 'after') stats[id]!.after++;
          else if (started === 'before') stats[id]!.before++;
        } catch (error) {
          stats[id]!.failed++;
          failures.push(`${(error as { code?: string }).code ?? '-'} ${(error as Error).message}`);
          await sleep(50);
        }
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, id) => loop(id));

    const deadline = (ms: number) => Date.now() + ms;
    const until = async (what: string, ok: () => boolean, ms: number): Promise<void> => {
      const end = deadline(ms);
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(stats)}`);
        await sleep(20);
      }
    };

    try {
      await until('every loop to commit before the restart', () => stats.every((s) => s.before >= 3), 10_000);
      phase = 'restarting';
      await cluster.restart();
      phase = 'after';
      await until('every loop to commit after the restart', () => stats.every((s) => s.after >= 3), 15_000);
    } finally {
      stop = true;
      await Promise.all(loops);
    }

    // The restart cut transactions in flight: they rejected, nothing escaped as an 'error' event
    // (which would have ended this process before reaching here).
    const failed = stats.reduce((sum, s) => sum + s.failed, 0);
    expect(failed).toBeGreaterThan(0);
    expect(failures.some((f) => f.startsWith('57P01') || /terminat/i.test(f))).toBe(true);
    // Each connection lost while checked out was logged at warn and dropped by the pool.
    const lost = warnings.filter((w) => w.msg === 'postgres connection failed during a transaction');
    expect(lost.length).toBeGreaterThan(0);
    // Every acknowledged transaction is in the table.
    const { rows } = await sql.query<{ loop: number; n: number }>('SELECT loop, n FROM writes');
    const stored = new Set(rows.map((r) => `${r.loop}:${r.n}`));
    expect(committed.filter(([id, n]) => !stored.has(`${id}:${n}`))).toEqual([]);
    // Reported in the test output for the record.
    console.log(`postgres restart: ${committed.length} committed, ${failed} rejected (${lost.length} connections lost while checked out); first rejections: ${[...new Set(failures)].slice(0, 4).join(' | ')}`);
  }, 40_000);

  it('takes its pool size and timeouts from the provider\'s settings', async () => {
    const provider = createStoreProvider({
      postgresUrl: cluster.url,
      postgresPool: { size: 2, connectTimeoutMs: 300, statementTimeoutMs: 200, keepAlive: true },
      logger,
    });
    try {
      const sql = await provider.sql('pool_settings');
      expect((await sql.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]?.statement_timeout).toBe('200ms');
      await expect(sql.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' });
      // Two connections at most: a third transaction waits for one, then gives up at the connect timeout.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const holders = [0, 1].map(() => sql.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await held;
      }));
      await sleep(50);
      await expect(sql.transaction((tx) => tx.query('SELECT 1'))).rejects.toThrow(/timeout/i);
      release();
      await Promise.all(holders);
      await expect(sql.transaction((tx) => tx.query('SELECT 1'))).resolves.toMatchObject({ rowCount: 1 });
    } finally {
      await provider.close();
    }
  });
});
