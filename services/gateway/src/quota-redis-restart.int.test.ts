// Issue 23: "Quota counters survive a Redis restart". The gateway on PostgreSQL, RabbitMQ and a
// private redis-server without persistence (kit's testing/private-servers, on a free port, so the shared 6379 is never
// restarted). Requests are counted, a flush writes the month's count to PostgreSQL, redis-server is
// killed and started empty, and the counter goes on from where it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, loadConfig, startModules, type KvStore, type RunningProcess } from '@sightline/kit';
import { PrivateRedis } from '@sightline/kit/testing/private-servers';
import { distributedServers } from '@sightline/kit/testing/servers';
import { createGatewayModule } from './index';
import { QUOTA_FLUSH_INTERVAL_MS } from './quota-ledger';

type StoreProvider = ReturnType<typeof createStoreProvider>;

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('monthly quota across a Redis restart (PostgreSQL + Redis + RabbitMQ)', () => {
  let servers: Awaited<ReturnType<typeof distributedServers>>;
  let redis: PrivateRedis;
  let dataDir: string;
  let proc: RunningProcess | undefined;
  let probeStores: StoreProvider | undefined;

  beforeAll(async () => {
    servers = await distributedServers(['gateway']);
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-quota-int-'));
    redis = await PrivateRedis.start();
  }, 60_000);

  afterAll(async () => {
    await probeStores?.close();
    await proc?.stop();
    await redis?.destroy();
    await servers?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('the month\'s count goes on from where it was after redis-server restarts empty', async () => {
    const redisUrl = redis.url;
    proc = await startModules({
      config: loadConfig({
        SIGHTLINE_PORT: '0',
        SIGHTLINE_ADMIN_PORT: '0',
        SIGHTLINE_DATA_DIR: dataDir,
        SIGHTLINE_LOG_LEVEL: 'silent',
        SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
        SIGHTLINE_REDIS_URL: redisUrl,
        SIGHTLINE_AMQP_URL: servers.amqpUrl,
        SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      }),
      logger: createLogger({ level: 'silent' }),
      modules: [createGatewayModule({ demo: false })],
    });
    const running = proc;
    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${running.adminPort}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${running.settings.adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    const storedCount = async (id: string) => {
      const { data } = (await admin('GET', '/workspaces')) as { data: { id: string; quota_usage: { requests: number } }[] };
      return data.find((w) => w.id === id)?.quota_usage.requests;
    };
    const me = (key: string) => fetch(`http://127.0.0.1:${running.publicPort}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

    const ws = String((await admin('POST', '/workspaces', { name: 'Counted', plan: 'free' }))['id']);
    const key = String((await admin('POST', '/keys', { workspace_id: ws }))['key']);
    const counter = `quota:ws:${ws}:${new Date().toISOString().slice(0, 7)}`;
    // The test's own look at the counter, through the same KV driver the gateway uses.
    probeStores = createStoreProvider({ redisUrl, logger: createLogger({ level: 'silent' }) });
    const probe: KvStore = await probeStores.kv();

    for (let n = 0; n < 12; n += 1) expect(await me(key)).toBe(200);
    expect(await probe.get(counter)).toBe('12');
    // A flush writes the month's count within the interval.
    await until('the flush of 12', async () => (await storedCount(ws)) === 12, QUOTA_FLUSH_INTERVAL_MS * 3);

    await redis.down();
    await redis.up();
    // The restart lost the counter (asked until the probe's connection is back).
    expect(await until('the probe back on redis', async () => ({ value: await probe.get(counter) }))).toEqual({ value: null });
    await until('the gateway ready again', async () => (await fetch(`http://127.0.0.1:${running.adminPort}/readyz`)).status === 200, 30_000);

    for (let n = 0; n < 5; n += 1) expect(await me(key)).toBe(200);
    expect(await probe.get(counter)).toBe('17');
    await until('the flush of 17', async () => (await storedCount(ws)) === 17, QUOTA_FLUSH_INTERVAL_MS * 3);
  }, 120_000);
});
