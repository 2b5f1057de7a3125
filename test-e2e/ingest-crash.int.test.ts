// Kill -9 the ingest process while a client streams events through the gateway, restart it, and
// check that every acknowledged event is stored exactly once. The client behaves as the spec asks:
// it retries 5xx answers with the request unchanged (same Idempotency-Key).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startSightline, type SightlineProcess } from './processes';
import { adminClient } from './admin-client';
import { eventBatch, postUntilAccepted } from './event-batches';

const BATCHES = 30;
const PER_BATCH = 200;
const ADMIN_TOKEN = 'crash-test-admin-token-0123';

describe('ingest survives kill -9 mid-stream (RabbitMQ + PostgreSQL + Redis)', () => {
  let gateway: SightlineProcess;
  let ingest: SightlineProcess;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const ingestDir = mkdtempSync(join(tmpdir(), 'sightline-crash-ingest-'));

  beforeAll(async () => {
    const servers = await distributedServers(['gateway', 'ingest']);
    cleanup = servers.cleanup;
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_RPC_TIMEOUT_MS: '2000',
    };
    gateway = await startSightline(['start', '--target=gateway'], { ...env, SIGHTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'sightline-crash-gw-')) });
    ingest = await startSightline(['start', '--target=ingest'], { ...env, SIGHTLINE_DATA_DIR: ingestDir });
  }, 120_000);

  afterAll(async () => {
    await ingest?.stop();
    await gateway?.stop();
    await cleanup?.();
    rmSync(ingestDir, { recursive: true, force: true });
  }, 60_000);

  it('loses no acknowledged event and counts none twice', async () => {
    const admin = adminClient(gateway.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Crash', plan: 'internal' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'crash.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });

    let acknowledged = 0;
    let retries = 0;
    const sendBatch = async (n: number): Promise<void> => {
      const sent = await postUntilAccepted(gateway.baseUrl, String(key), `crash-batch-${n}`, eventBatch(n, PER_BATCH, 20));
      acknowledged += sent.accepted;
      retries += sent.retries;
    };

    const sender = (async () => {
      for (let n = 0; n < BATCHES; n += 1) await sendBatch(n);
    })();
    // Kill mid-stream, once some batches are in, then bring it back on the same data directory.
    while (acknowledged < 5 * PER_BATCH) await new Promise((r) => setTimeout(r, 20));
    ingest.child.kill('SIGKILL');
    await ingest.stop();
    await new Promise((r) => setTimeout(r, 1000));
    ingest = await startSightline(['start', '--target=ingest'], { ...env, SIGHTLINE_DATA_DIR: ingestDir });
    await sender;

    expect(acknowledged).toBe(BATCHES * PER_BATCH);
    expect(retries).toBeGreaterThan(0); // the kill really interrupted the stream
    const deadline = Date.now() + 60_000;
    let stats = { events: 0, rows: 0 };
    while (Date.now() < deadline) {
      const r = await fetch(`${ingest.adminUrl}/admin/ingest/websites/${String(site['id'])}/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      stats = (await r.json()) as { events: number; rows: number };
      if (stats.events >= acknowledged) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(stats.events).toBe(acknowledged);
    expect(stats.rows).toBe(acknowledged);
  }, 180_000);
});
