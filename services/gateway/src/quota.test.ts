// The monthly quota survives the loss of its KV counters (issue 23: "Quota counters survive a Redis
// restart"). The KV counts every request; the gateway flushes the counts to its PostgreSQL schema
// (PGlite here, through the embedded store provider) and gives a counter found new its stored count
// back. A fresh in-memory KV stands for Redis restarted without persistence; a fresh QuotaLedger as
// well for a restarted gateway process. The whole module restarting on one data directory is at the end.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'express';
import {
  createLogger,
  createStoreProvider,
  loadConfig,
  runSqlMigrations,
  startModules,
  type KvStore,
  type SqlStore,
} from '@sightline/kit';
import { createGatewayModule } from './index';
import { Limits, type PlanLimits } from './limits';
import { QuotaLedger } from './quota-ledger';

type StoreProvider = ReturnType<typeof createStoreProvider>;

const logger = createLogger({ level: 'silent' });
const res = { setHeader: () => undefined } as unknown as Response;
const ALLOWANCE = 5;
/** A plan with a small allowance and no minute budget, so the boundary is reached in a few calls. */
const plans = (): PlanLimits => ({ requestsPerMinute: null, monthlyQuota: ALLOWANCE });
const month = () => new Date().toISOString().slice(0, 7);

describe('monthly quota kept durably, the KV as the fast path', () => {
  let provider: StoreProvider;
  let db: SqlStore;

  beforeAll(async () => {
    provider = createStoreProvider({ logger });
    db = await provider.sql('gateway');
    await runSqlMigrations(db, join(__dirname, '..', 'migrations'));
  }, 60_000);

  const kvProviders: StoreProvider[] = [];
  afterAll(async () => {
    for (const p of kvProviders) await p.close();
    await provider?.close();
  });

  /** An empty in-memory KV, as the embedded profile has after a start (or Redis after a restart without persistence). */
  const freshKv = async (): Promise<KvStore> => {
    const p = createStoreProvider({ logger });
    kvProviders.push(p);
    return p.kv();
  };
  interface Gateway { kv: KvStore; ledger: QuotaLedger; limits: Limits }
  /** A gateway's limits: its KV (the Redis it talks to) and its ledger (its own process memory). */
  const gateway = async (kv?: KvStore, ledger = new QuotaLedger(db, logger)): Promise<Gateway> => {
    const store = kv ?? (await freshKv());
    return { kv: store, ledger, limits: new Limits(store, 1_000, { ledger, plans }) };
  };
  const count = async (g: Gateway, ws: string) => (await g.limits.admit(ws, 'small', res, () => undefined)).monthlyUsed;
  const refused = (g: Gateway, ws: string) =>
    expect(g.limits.admit(ws, 'small', res, () => undefined)).rejects.toMatchObject({ kind: 'quota-exceeded', status: 429 });
  const stored = async (ws: string) =>
    Number((await db.query<{ used: string }>('SELECT used FROM quota_usage WHERE workspace_id = $1 AND month = $2', [ws, month()])).rows[0]?.used ?? 0);

  it('counts on from the stored count after the KV loses its counter (Redis restart) and after a gateway restart', async () => {
    const ws = randomUUID();
    const before = await gateway();
    for (let n = 1; n <= 3; n += 1) expect(await count(before, ws)).toBe(n);
    await before.ledger.flush();
    expect(await stored(ws)).toBe(3);

    // Redis restarted without persistence: same gateway process, empty KV.
    const redisRestarted = await gateway(await freshKv(), before.ledger);
    expect(await count(redisRestarted, ws)).toBe(4);
    expect(await redisRestarted.kv.get(`quota:ws:${ws}:${month()}`)).toBe('4');
    await redisRestarted.ledger.flush();

    // The embedded process restarted: empty KV and a new ledger; only PostgreSQL remembers.
    const processRestarted = await gateway();
    expect(await count(processRestarted, ws)).toBe(5);
    expect(await processRestarted.kv.get(`quota:ws:${ws}:${month()}`)).toBe('5');
  });

  it('allows exactly the allowance and refuses one past it, before and after the restart', async () => {
    // A workspace at its allowance stays refused after the restart.
    const full = randomUUID();
    const first = await gateway();
    for (let n = 1; n <= ALLOWANCE; n += 1) expect(await count(first, full)).toBe(n);
    await refused(first, full);
    await first.ledger.flush();
    const restarted = await gateway();
    await refused(restarted, full);
    await refused(restarted, full);

    // One short of it before the restart: exactly the allowance after it is allowed, one past refused.
    const nearly = randomUUID();
    const again = await gateway();
    for (let n = 1; n <= ALLOWANCE - 1; n += 1) expect(await count(again, nearly)).toBe(n);
    await again.ledger.flush();
    const later = await gateway();
    expect(await count(later, nearly)).toBe(ALLOWANCE);
    await refused(later, nearly);
  });

  it('restores what this replica counted but had not flushed yet when Redis restarts', async () => {
    const ws = randomUUID();
    const g = await gateway();
    for (let n = 1; n <= 4; n += 1) await count(g, ws);
    expect(await stored(ws)).toBe(0); // no flush yet
    const redisRestarted = await gateway(await freshKv(), g.ledger);
    expect(await count(redisRestarted, ws)).toBe(5);
  });

  it('requests counted while the stored count is being restored are answered as if it were already there', async () => {
    const ws = randomUUID();
    const g = await gateway(await freshKv(), new QuotaLedger(db, logger));
    for (let n = 1; n <= 2; n += 1) await count(g, ws);
    await g.ledger.flush();
    const redisRestarted = await gateway(await freshKv(), new QuotaLedger(db, logger));
    const answers = await Promise.all([1, 2, 3, 4].map(() => redisRestarted.limits.admit(ws, 'small', res, () => undefined).then(
      (a) => a.monthlyUsed,
      (error: { kind?: string }) => error.kind,
    )));
    expect(answers.sort()).toEqual([3, 4, 5, 'quota-exceeded']);
    expect(await redisRestarted.kv.get(`quota:ws:${ws}:${month()}`)).toBe('6');
  });

  it('flushes the greatest count: a replica that saw less never lowers it', async () => {
    const ws = randomUUID();
    const shared = await freshKv();
    const a = await gateway(shared);
    const b = await gateway(shared);
    await count(b, ws); // b saw 1
    for (let n = 0; n < 3; n += 1) await count(a, ws); // a saw 4
    await a.ledger.flush();
    await b.ledger.flush();
    expect(await stored(ws)).toBe(4);
  });

  it('a store error is logged and the request goes on; the counts are written by a later flush', async () => {
    const ws = randomUUID();
    let broken = true;
    const errors: string[] = [];
    const flaky: SqlStore = {
      ...db,
      query: (sql, params) => (broken ? Promise.reject(new Error('connection terminated')) : db.query(sql, params)),
    } as SqlStore;
    const failing = { ...logger, error: (_: unknown, message: string) => errors.push(message) } as unknown as typeof logger;
    const g = await gateway(await freshKv(), new QuotaLedger(flaky, failing));
    expect(await count(g, ws)).toBe(1); // the KV counter is new: the stored count cannot be read
    expect(await count(g, ws)).toBe(2);
    await g.ledger.flush();
    expect(errors).toEqual([expect.stringMatching(/reading the stored quota count failed/), expect.stringMatching(/flushing quota counts failed/)]);
    broken = false;
    await g.ledger.flush();
    expect(await stored(ws)).toBe(2);
  });

  it('a new month reads PostgreSQL once, not on every counter the KV finds new', async () => {
    const ws = randomUUID();
    let reads = 0;
    const counting: SqlStore = {
      ...db,
      query: (sql, params) => {
        if (/^SELECT used FROM quota_usage/.test(sql)) reads += 1;
        return db.query(sql, params);
      },
    } as SqlStore;
    const ledger = new QuotaLedger(counting, logger);
    // A KV that keeps losing the counter (evicted under memory pressure) finds it new each time:
    // PostgreSQL had nothing for the month, and what this replica counted since is in its memory.
    for (let n = 1; n <= 3; n += 1) expect(await count(await gateway(await freshKv(), ledger), ws)).toBe(n);
    expect(reads).toBe(1);
    // Once this replica has flushed a count, "nothing stored" no longer holds: PostgreSQL is asked again.
    await ledger.flush();
    expect(await count(await gateway(await freshKv(), ledger), ws)).toBe(4);
    expect(reads).toBe(2);
  });
});

describe('monthly quota across restarts of the embedded gateway', () => {
  it('the counts of a stopped process are stored, and the next process counts on from them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-quota-'));
    const start = () => startModules({
      config: loadConfig({
        SIGHTLINE_PORT: '0',
        SIGHTLINE_ADMIN_PORT: '0',
        SIGHTLINE_DATA_DIR: dataDir,
        SIGHTLINE_LOG_LEVEL: 'silent',
      }),
      logger,
      modules: [createGatewayModule({ demo: false })],
    });
    const admin = async (proc: Awaited<ReturnType<typeof start>>, method: string, path: string, body?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    const me = (proc: Awaited<ReturnType<typeof start>>, key: string) =>
      fetch(`http://127.0.0.1:${proc.publicPort}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    const usage = async (proc: Awaited<ReturnType<typeof start>>, id: string) => {
      const { data } = (await admin(proc, 'GET', '/workspaces')) as { data: { id: string; quota_usage: { month: string; requests: number; as_of: string | null } }[] };
      return data.find((w) => w.id === id)?.quota_usage;
    };
    let proc: Awaited<ReturnType<typeof start>> | undefined;
    try {
      proc = await start();
      const ws = String((await admin(proc, 'POST', '/workspaces', { name: 'Counted', plan: 'free' }))['id']);
      const key = String((await admin(proc, 'POST', '/keys', { workspace_id: ws }))['key']);
      for (let n = 0; n < 7; n += 1) expect(await me(proc, key)).toBe(200);
      await proc.stop(); // flushes on stop

      proc = await start();
      expect(await usage(proc, ws)).toEqual({ month: month(), requests: 7, as_of: expect.any(String) });
      expect(await me(proc, key)).toBe(200); // the 8th: the new in-memory KV gets the 7 stored back first
      await proc.stop();

      proc = await start();
      expect((await usage(proc, ws))?.requests).toBe(8);
    } finally {
      await proc?.stop(); // again after a stop is a no-op
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
