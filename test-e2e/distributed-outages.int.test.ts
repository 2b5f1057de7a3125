// The distributed mode under every single-node failure, counted from outside. Every service runs as
// its own process (as one pod each) on servers of this test's own — a RabbitMQ node, a PostgreSQL
// cluster, a Redis without persistence and a ClickHouse server (chDB behind the HTTP shim) — so they
// can be restarted without touching the shared ones. Six clients post 200-event batches through
// the gateway and retry, with the same Idempotency-Key, whatever got no 200. Meanwhile: RabbitMQ is
// restarted; PostgreSQL is fast-restarted (transactions in flight); ClickHouse and Redis are each
// gone for 30 s; then every service type is killed with SIGKILL once and started again. At the end
// every acknowledged event is stored once, contacts hold one row per conversion, no service has a
// dead letter, no process ended on its own, and every one is ready. A workspace with a monthly
// allowance keeps its month's request count through the Redis restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ClickHouseShimProcess, PrivatePostgres, PrivateRabbit, PrivateRedis } from '@sightline/kit/testing/private-servers';
import { adminClient } from './admin-client';
import { eventBatch } from './event-batches';
import { startSightline, type SightlineProcess } from './processes';

const SERVICES = ['gateway', 'ingest', 'attribution', 'contacts', 'funnels', 'automations', 'changefeed', 'crm-sync'] as const;
type Service = (typeof SERVICES)[number];
const CLIENTS = 6;
const PER_BATCH = 200;
const CONVERSIONS_PER_BATCH = PER_BATCH / 50;
const OUTAGE_MS = 30_000;
const ADMIN_TOKEN = 'distributed-outages-admin-token-0123';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the distributed mode loses nothing to a restart of any server or a kill -9 of any service', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let rabbit: PrivateRabbit;
  let clickhouse: ClickHouseShimProcess;
  const procs = new Map<Service, SightlineProcess>();
  const dirs = new Map<Service, string>();
  /** Exits nobody asked for: a process that dies of an outage fails the test. */
  const unexpectedExits: string[] = [];
  const killing = new Set<SightlineProcess>();
  let env: Record<string, string>;

  const start = async (service: Service): Promise<SightlineProcess> => {
    const proc = await startSightline(['start', `--target=${service}`], { ...env, SIGHTLINE_DATA_DIR: dirs.get(service) as string });
    proc.child.once('exit', (code, signal) => {
      if (!killing.has(proc)) unexpectedExits.push(`${service} exited (code ${code}, signal ${signal}):\n${proc.output().slice(-3000)}`);
    });
    procs.set(service, proc);
    return proc;
  };

  beforeAll(async () => {
    [postgres, redis, rabbit, clickhouse] = await Promise.all([PrivatePostgres.start({ maxConnections: 300 }), PrivateRedis.start(), PrivateRabbit.start(), ClickHouseShimProcess.start()]);
    env = {
      SIGHTLINE_POSTGRES_URL: postgres.url,
      SIGHTLINE_REDIS_URL: redis.url,
      SIGHTLINE_AMQP_URL: rabbit.url,
      SIGHTLINE_CLICKHOUSE_URL: clickhouse.url,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'distributed-outages-cursor-secret',
      SIGHTLINE_CREDENTIALS_KEY: 'distributed-outages-credentials-key',
      SIGHTLINE_RPC_TIMEOUT_MS: '3000',
      SIGHTLINE_QUEUE_POLL_MS: '0',
      SIGHTLINE_DEMO: 'off',
    };
    for (const service of SERVICES) dirs.set(service, mkdtempSync(join(tmpdir(), `sightline-outage-${service}-`)));
    // All at once, as pods start: each runs its own schema's migrations.
    await Promise.all(SERVICES.map((service) => start(service)));
  }, 300_000);

  afterAll(async () => {
    for (const proc of procs.values()) {
      killing.add(proc);
      await proc.stop();
    }
    await Promise.all([postgres?.destroy(), redis?.destroy(), rabbit?.destroy(), clickhouse?.destroy()]);
    for (const dir of dirs.values()) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('stores every acknowledged event once, dead-letters nothing, and every process stays up or comes back ready', async () => {
    const gateway = () => procs.get('gateway') as SightlineProcess;
    const admin = adminClient(gateway().adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Outages', plan: 'internal' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'outages.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });

    let acknowledged = 0;
    let acknowledgedBatches = 0;
    let nextBatch = 0;
    let stopClients = false;
    /** The last answers that were not a 200, for a failure message. */
    const refusals: string[] = [];
    let clientFailure: string | null = null;
    // A client stops only between batches: the one it is sending is retried until acknowledged, so
    // nothing stored was left unacknowledged and the counts can be compared exactly.
    const client = async (): Promise<void> => {
      let batch = nextBatch++;
      // The same body on every try of a batch: its Idempotency-Key is bound to it.
      let events = eventBatch(batch, PER_BATCH, 20);
      for (;;) {
        const response = await fetch(`${gateway().baseUrl}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${String(key)}`, 'content-type': 'application/json', 'idempotency-key': `outage-batch-${batch}` },
          body: JSON.stringify({ website: 'outages.test', events }),
          signal: AbortSignal.timeout(15_000),
        }).catch(() => null);
        if (response?.status === 200) {
          const body = (await response.json()) as { accepted: number };
          acknowledged += body.accepted;
          acknowledgedBatches += 1;
          if (stopClients) return;
          batch = nextBatch++;
          events = eventBatch(batch, PER_BATCH, 20);
        } else {
          const refusal = response ? `${response.status} ${(await response.text()).slice(0, 300)}` : 'no answer';
          // Only an outage may refuse a batch (5xx, 429, no answer); any other answer is a defect.
          if (response && response.status < 500 && response.status !== 429) clientFailure ??= `batch ${batch}: ${refusal}`;
          refusals.push(refusal);
          if (refusals.length > 20) refusals.shift();
          await sleep(200);
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, () => client());
    /** Some acknowledged traffic (and so something mid-stream) before the next failure. */
    const progress = async (what: string, events = 1_000): Promise<void> => {
      const target = acknowledged + events;
      const deadline = Date.now() + 120_000;
      while (acknowledged < target) {
        if (clientFailure) throw new Error(`a client was refused after ${what}: ${clientFailure}`);
        if (Date.now() > deadline) throw new Error(`no progress after ${what}: ${acknowledged} acknowledged, wanted ${target}\nlast refusals:\n${refusals.join('\n')}\n${unexpectedExits.join('\n')}\ngateway:\n${gateway().output().slice(-3000)}`);
        await sleep(50);
      }
    };

    const phases: string[] = [];
    const phase = (name: string) => phases.push(`${new Date().toISOString()} ${name} (${acknowledged} acknowledged)`);
    await progress('the start');
    phase('RabbitMQ restart');
    await rabbit.down();
    await rabbit.up();
    await progress('the RabbitMQ restart');

    phase('PostgreSQL restart');
    await postgres.restart();
    await progress('the PostgreSQL restart');

    /** /readyz of a process answers 503 naming the missing store while it is gone. */
    const notReadyFor = async (service: Service, store: string): Promise<void> => {
      const deadline = Date.now() + 15_000;
      let last = '';
      while (Date.now() < deadline) {
        const r = await fetch(`${(procs.get(service) as SightlineProcess).adminUrl}/readyz`).catch(() => null);
        last = r ? `${r.status} ${await r.text()}` : 'no answer';
        if (r?.status === 503 && last.toLowerCase().includes(store)) return;
        await sleep(250);
      }
      throw new Error(`${service}'s /readyz did not report ${store} missing: ${last}`);
    };

    phase('ClickHouse outage');
    const outageStarted = Date.now();
    await clickhouse.down();
    await notReadyFor('ingest', 'clickhouse');
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageStarted)));
    await clickhouse.up();
    await progress('the ClickHouse outage');

    // A workspace on a plan with a monthly allowance makes 10 counted requests before Redis goes.
    const quotaWs = await admin('/workspaces', { name: 'Quota', plan: 'free' });
    await admin(`/workspaces/${quotaWs['id']}/websites`, { domain: 'quota.test' });
    const { key: quotaKey } = await admin('/keys', { workspace_id: quotaWs['id'] });
    const countedRequest = async (): Promise<void> => {
      const r = await fetch(`${gateway().baseUrl}/v1/me`, { headers: { authorization: `Bearer ${String(quotaKey)}` } });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    };
    for (let i = 0; i < 10; i += 1) await countedRequest();
    const counter = `quota:ws:${String(quotaWs['id'])}:${new Date().toISOString().slice(0, 7)}`;
    const monthCount = async (): Promise<string | null> => {
      const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        return await client.get(counter);
      } finally {
        client.disconnect();
      }
    };
    expect(await monthCount()).toBe('10');
    await sleep(3_000); // past the gateway's 2 s flush of the month's counts

    phase('Redis outage');
    const redisGone = Date.now();
    await redis.down();
    await notReadyFor('gateway', 'redis');
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - redisGone)));
    await redis.up();
    await progress('the Redis outage');
    // Redis came back empty; the gateway, ready again on its own, goes on from the stored count.
    const readyDeadline = Date.now() + 30_000;
    while ((await fetch(`${gateway().adminUrl}/readyz`).then((r) => r.status, () => 0)) !== 200 && Date.now() < readyDeadline) await sleep(200);
    await countedRequest();
    expect(await monthCount()).toBe('11');

    for (const service of SERVICES) {
      const proc = procs.get(service) as SightlineProcess;
      killing.add(proc);
      phase(`kill -9 ${service}`);
      proc.child.kill('SIGKILL');
      await proc.stop();
      await start(service);
      await progress(`the kill -9 of ${service}`, 400);
    }
    stopClients = true;
    await Promise.all(clients);
    expect(clientFailure).toBeNull();

    // Exactly once: every acknowledged event stored, no raw row twice.
    const ingest = procs.get('ingest') as SightlineProcess;
    let stats = { events: 0, rows: 0 };
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      const r = await fetch(`${ingest.adminUrl}/admin/ingest/websites/${String(site['id'])}/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      if (r.ok) stats = (await r.json()) as { events: number; rows: number };
      if (stats.events >= acknowledged) break;
      await sleep(500);
    }
    if (stats.rows !== stats.events) {
      // Where the doubled rows came from, beside the phases, for whoever reads a failure.
      const sql = `SELECT toStartOfInterval(received_at, INTERVAL 5 SECOND) AS t, count() - uniqExact(event_id) AS doubled FROM ingest.events GROUP BY t HAVING doubled > 0 ORDER BY t FORMAT TSV`;
      const doubled = await fetch(`${clickhouse.url}/?query=${encodeURIComponent(sql)}`).then((r) => r.text(), (e: unknown) => String(e));
      process.stdout.write(`phases:\n${phases.join('\n')}\ndoubled rows by receive time:\n${doubled}\n`);
    }
    expect({ events: stats.events, rows: stats.rows }).toEqual({ events: acknowledged, rows: acknowledged });

    const conversions = acknowledgedBatches * CONVERSIONS_PER_BATCH;
    let contacts = -1;
    const contactsDeadline = Date.now() + 180_000;
    while (Date.now() < contactsDeadline) {
      const r = await fetch(`${gateway().baseUrl}/v1/contacts?website=outages.test&type=conversion&limit=1&total_count=true`, { headers: { authorization: `Bearer ${String(key)}` } });
      if (r.ok) contacts = Number(((await r.json()) as { meta: { total_count: number } }).meta.total_count);
      if (contacts >= conversions) break;
      await sleep(500);
    }
    expect(contacts).toBe(conversions);

    // Nothing dead-lettered anywhere: an outage is a pause, not a failure.
    for (const service of SERVICES.filter((s) => s !== 'gateway')) {
      const r = await fetch(`${(procs.get(service) as SightlineProcess).adminUrl}/admin/bus/dead-letters/${service}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      if (r.status === 404) continue; // a service whose process consumes nothing
      const letters = (await r.json()) as { moved: number; kept: number };
      expect({ service, dead: letters.moved + letters.kept }).toEqual({ service, dead: 0 });
    }

    // No process ended on its own, and every one is ready again by itself.
    expect(unexpectedExits).toEqual([]);
    for (const [service, proc] of procs) {
      const ready = await fetch(`${proc.adminUrl}/readyz`).then((r) => r.status);
      expect({ service, ready }).toEqual({ service, ready: 200 });
    }
  }, 1_200_000);
});
