// Issue 23: "Quota counters survive a Redis restart". The gateway on PostgreSQL, RabbitMQ and a
// private redis-server without persistence (started here on a free port, so the shared 6379 is never
// restarted). Requests are counted, a flush writes the month's count to PostgreSQL, redis-server is
// killed and started empty, and the counter goes on from where it was.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, loadConfig, startModules, type KvStore, type RunningProcess } from '@sightline/kit';
import { distributedServers } from '@sightline/kit/testing/servers';
import { createGatewayModule } from './index';
import { QUOTA_FLUSH_INTERVAL_MS } from './quota-ledger';

type StoreProvider = ReturnType<typeof createStoreProvider>;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
  });

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A redis-server of this test's own: no RDB snapshots, no AOF, its own empty directory. */
class PrivateRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number, private readonly dir: string) {}

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' });
    this.child = child;
    await until(`redis-server on ${this.port}`, () => accepts(this.port));
  }

  /** Killed, as a crash or a pod eviction ends it: nothing is written on the way out. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }
}

describe('monthly quota across a Redis restart (PostgreSQL + Redis + RabbitMQ)', () => {
  let servers: Awaited<ReturnType<typeof distributedServers>>;
  let redis: PrivateRedis;
  let redisDir: string;
  let dataDir: string;
  let proc: RunningProcess | undefined;
  let probeStores: StoreProvider | undefined;

  beforeAll(async () => {
    servers = await distributedServers(['gateway']);
    redisDir = mkdtempSync(join(tmpdir(), 'sightline-redis-'));
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-quota-int-'));
    redis = new PrivateRedis(await freePort(), redisDir);
    await redis.start();
  }, 60_000);

  afterAll(async () => {
    await probeStores?.close();
    await proc?.stop();
    await redis?.kill();
    await servers?.cleanup();
    for (const dir of [redisDir, dataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the month\'s count goes on from where it was after redis-server restarts empty', async () => {
    const redisUrl = `redis://127.0.0.1:${redis.port}`;
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

    await redis.kill();
    await redis.start();
    // The restart lost the counter (asked until the probe's connection is back).
    expect(await until('the probe back on redis', async () => ({ value: await probe.get(counter) }))).toEqual({ value: null });
    await until('the gateway ready again', async () => (await fetch(`http://127.0.0.1:${running.adminPort}/readyz`)).status === 200, 30_000);

    for (let n = 0; n < 5; n += 1) expect(await me(key)).toBe(200);
    expect(await probe.get(counter)).toBe('17');
    await until('the flush of 17', async () => (await storedCount(ws)) === 17, QUOTA_FLUSH_INTERVAL_MS * 3);
  }, 120_000);
});
