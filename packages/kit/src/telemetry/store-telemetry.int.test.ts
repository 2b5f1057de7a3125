// Store instrumentation and health on real servers: a PostgreSQL store as the runner hands it to a
// service (measured per operation, its outbox backlog exported as a gauge), and the /readyz pings
// of PostgreSQL and Redis while a TCP proxy takes each server away and gives it back.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { MESSAGE_EXAMPLES } from '@sightline/proto-schemas';
import { Registry } from 'prom-client';
import { createOutbox, OUTBOX_MIGRATION_SQL } from '../outbox';
import { splitSqlStatements } from '../stores/migrations';
import { createPostgresStore } from '../stores/postgres-store';
import { createRedisKv } from '../stores/redis-kv';
import type { KvStore, SqlStore } from '../stores/types';
import { freshPostgresDatabase, requireServer, TEST_SERVERS } from '../../testing/servers';
import { startTcpProxy, type TcpProxy } from '../../testing/tcp-proxy';
import { storeHealth } from './store-health';
import { instrumentSql, storeOwnerOf } from './store-telemetry';

const logger = pino({ level: 'silent' });

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const series = line.slice(0, line.lastIndexOf(' '));
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('store telemetry and health (PostgreSQL, Redis)', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let postgresProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let raw: SqlStore;
  let kv: KvStore;
  const registry = new Registry();

  beforeAll(async () => {
    await requireServer('Redis', TEST_SERVERS.redis);
    database = await freshPostgresDatabase();
    const pgUrl = new URL(database.url);
    postgresProxy = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    pgUrl.port = String(postgresProxy.port);
    raw = await createPostgresStore({ url: pgUrl.toString(), schema: 'contacts', logger });
    const redisUrl = new URL(TEST_SERVERS.redis);
    redisProxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port) });
    redisUrl.port = String(redisProxy.port);
    kv = await createRedisKv({ url: redisUrl.toString(), keyPrefix: `sightline-test:${randomUUID()}:` });
  });

  afterAll(async () => {
    await raw?.close();
    await kv?.close();
    await postgresProxy?.close();
    await redisProxy?.close();
    await database?.drop();
  });

  it('measures each operation as the owning service\'s, and exports its outbox backlog', async () => {
    const sql = instrumentSql(raw, { service: 'contacts', metrics: registry });
    expect(storeOwnerOf(sql)).toEqual({ service: 'contacts', metrics: registry });
    expect(storeOwnerOf(raw)).toBeUndefined();
    for (const statement of splitSqlStatements(OUTBOX_MIGRATION_SQL)) await sql.query(statement);
    const outbox = createOutbox<'contacts'>(sql, { publishMany: () => Promise.reject(new Error('not in this test')) }, logger);
    const payload = MESSAGE_EXAMPLES['conversion.updated'];
    await sql.transaction(async (tx) => {
      await outbox.addMany(tx, [
        { type: 'conversion.updated', source: 'api:test', workspace_id: payload.workspace_id, website_id: payload.website_id, payload },
        { type: 'conversion.updated', source: 'api:test', workspace_id: payload.workspace_id, website_id: payload.website_id, payload },
      ]);
    });
    // Held: the rows stay pending while the relay runs.
    outbox.pause();
    outbox.start();
    try {
      const text = await registry.metrics();
      expect(await outbox.pendingCount()).toBe(2);
      expect(sample(text, 'sightline_outbox_pending_messages', { service: 'contacts' })).toBe(2);
      expect(sample(text, 'sightline_store_query_duration_seconds_count', { service: 'contacts', store: 'postgres', operation: 'ddl', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'sightline_store_query_duration_seconds_count', { service: 'contacts', store: 'postgres', operation: 'transaction' })).toBe(1);
    } finally {
      await outbox.stop();
    }
    // Stopped, the relay no longer reports a backlog.
    expect(sample(await registry.metrics(), 'sightline_outbox_pending_messages', { service: 'contacts' })).toBeUndefined();
  });

  it('reports a store whose server is gone, and forgets it once the server is back', async () => {
    const health = storeHealth({ cacheMs: 0, timeoutMs: 1_000 });
    health.watch('postgres (schema contacts)', raw);
    health.watch('redis', kv);
    expect(await health.problems()).toEqual([]);

    postgresProxy.cut();
    try {
      const problems = await health.problems();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^postgres \(schema contacts\): /);
    } finally {
      postgresProxy.restore();
    }
    await waitFor('PostgreSQL answering again', async () => (await health.problems()).length === 0);

    redisProxy.cut();
    try {
      const problems = await health.problems();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^redis: /);
    } finally {
      redisProxy.restore();
    }
    await waitFor('Redis answering again', async () => (await health.problems()).length === 0);
  });

  it('keeps an answer for its cache time, so probes do not each reach the stores', async () => {
    let pings = 0;
    const counting: SqlStore = { ...raw, driver: 'postgres', query: async (text, params) => ((pings += 1), raw.query(text, params)) };
    const health = storeHealth({ cacheMs: 60_000 });
    health.watch('postgres', counting);
    await Promise.all([health.problems(), health.problems(), health.problems()]);
    await health.problems();
    expect(pings).toBe(1);
  });
});
