// Two ingest replicas share the intake's partitions (RabbitMQ, PostgreSQL, Redis, and one ClickHouse
// both write to: chDB behind the ClickHouse HTTP shim). While a client streams events, one replica is
// killed with SIGKILL and started again: its partitions move to the other and back. Every acknowledged
// event must be stored exactly once, and one visitor whose hits span the kill and both handovers must
// come out as one session: sessions are decided in arrival order, so a hit handled before an earlier
// one would start a session of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startClickHouseShim } from '@sightline/kit/testing/clickhouse-http-shim';
import { adminClient } from './admin-client';
import { eventBatch, postUntilAccepted } from './event-batches';
import { startSightline, type SightlineProcess } from './processes';

const PER_BATCH = 200;
const ADMIN_TOKEN = 'replica-test-admin-token-0123';
const MINUTE = 60_000;
const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** Batches of ingest.batch_received this replica has handled (its /metrics). */
async function batchesHandled(replica: SightlineProcess): Promise<number> {
  const text = await fetch(`${replica.adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
  return text
    .split('\n')
    .filter((line) => line.startsWith('sightline_bus_consume_duration_seconds_count{') && line.includes('service="ingest"') && line.includes('type="ingest.batch_received"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('two ingest replicas: kill -9 mid-stream (RabbitMQ + PostgreSQL + Redis + ClickHouse)', () => {
  let gateway: SightlineProcess;
  const replicas: SightlineProcess[] = [];
  let clickhouse: { url: string; stop(): Promise<void> };
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-replica-a-')), mkdtempSync(join(tmpdir(), 'sightline-replica-b-'))];
  const startReplica = (i: number) => startSightline(['start', '--target=ingest'], { ...env, SIGHTLINE_DATA_DIR: dirs[i] as string });

  beforeAll(async () => {
    clickhouse = await startClickHouseShim();
    const servers = await distributedServers(['gateway', 'ingest']);
    cleanup = servers.cleanup;
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_CLICKHOUSE_URL: clickhouse.url,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_RPC_TIMEOUT_MS: '2000',
    };
    gateway = await startSightline(['start', '--target=gateway'], { ...env, SIGHTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'sightline-replica-gw-')) });
    replicas.push(await startReplica(0), await startReplica(1));
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await gateway?.stop();
    await cleanup?.();
    await clickhouse?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 90_000);

  it('shares the partitions, loses no acknowledged event, stores none twice, and keeps a visitor in order', async () => {
    const admin = adminClient(gateway.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Replicas', plan: 'internal' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });

    let acknowledged = 0;
    const sendBatch = async (n: number): Promise<void> => {
      const sent = await postUntilAccepted(gateway.baseUrl, String(key), `replica-batch-${n}`, eventBatch(n, PER_BATCH, 40));
      acknowledged += sent.accepted;
    };
    // One visitor's visits, ten minutes apart (two hits each, a minute apart): in order, one session.
    const start = Date.now() - 24 * 60 * MINUTE;
    let visits = 0;
    const sendNextVisit = async (): Promise<void> => {
      const at = start + visits * 10 * MINUTE;
      // A retry resends the same hit ids, as the tracker does, so a visit cut by the kill is stored once.
      const hits = [0, 1].map((i) => ({
        id: `00000000-0000-4000-8000-${String(visits * 2 + i).padStart(12, '0')}`, type: 'pageview', name: null, ts: at + i * MINUTE,
        url: i === 0 ? 'https://shop.test/' : 'https://shop.test/pricing', referrer: i === 0 ? null : 'https://shop.test/', title: 'Shop', screen: '1440x900', props: {},
      }));
      for (;;) {
        const status = await fetch(`${gateway.baseUrl}/collect`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain', origin: 'https://shop.test', 'user-agent': CHROME, authorization: `Bearer ${String(key)}` },
          body: JSON.stringify({ site: String(site['public_id']), aid: 'steady-visitor', events: hits }),
        }).then((r) => r.status, () => 0);
        if (status === 202) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      visits += 1;
    };

    let sent = 0;
    const step = async (): Promise<void> => {
      await sendBatch(sent);
      sent += 1;
      await sendNextVisit();
    };
    const until = async (what: string, done: () => Promise<boolean>): Promise<void> => {
      const deadline = Date.now() + 60_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await step();
      }
    };
    // Both replicas take part: the partitions are shared.
    await until('both replicas to handle batches', async () => sent >= 8 && (await batchesHandled(replicas[0] as SightlineProcess)) > 0 && (await batchesHandled(replicas[1] as SightlineProcess)) > 0);
    // Killed while a request is in flight: the survivor takes the dead replica's partitions at once.
    const inFlight = step();
    await new Promise((r) => setTimeout(r, 15));
    const killed = replicas[0] as SightlineProcess;
    killed.child.kill('SIGKILL');
    await killed.stop();
    await inFlight;
    for (let i = 0; i < 5; i += 1) await step();
    // Back again: it takes its share of the partitions back from the survivor, mid-stream.
    replicas[0] = await startReplica(0);
    await until('the restarted replica to take partitions back', async () => (await batchesHandled(replicas[0] as SightlineProcess)) > 0);
    for (let i = 0; i < 5; i += 1) await step();

    expect(acknowledged).toBe(sent * PER_BATCH);
    const stats = async () => (await fetch(`${(replicas[1] as SightlineProcess).adminUrl}/admin/ingest/websites/${String(site['id'])}/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json())) as { events: number; rows: number };
    const expected = acknowledged + 2 * visits;
    let stored = { events: 0, rows: 0 };
    const storedBy = Date.now() + 90_000;
    while (Date.now() < storedBy) {
      stored = await stats();
      if (stored.events >= expected) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(stored).toEqual({ events: expected, rows: expected });

    const query = async (sql: string) => {
      const response = await fetch(`${clickhouse.url}/?database=ingest&default_format=JSONEachRow&output_format_json_quote_64bit_integers=0`, { method: 'POST', body: sql });
      return JSON.parse(await response.text()) as Record<string, number>;
    };
    const visitor = await query(`SELECT count() AS hits, uniqExact(event_id) AS distinct_hits, uniqExact(session_id) AS sessions FROM events WHERE anonymous_id = 'steady-visitor'`);
    expect(visitor).toEqual({ hits: 2 * visits, distinct_hits: 2 * visits, sessions: 1 });
  }, 300_000);
});
