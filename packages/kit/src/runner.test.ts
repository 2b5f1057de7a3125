import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_EXAMPLES, messageValidator } from '@sightline/proto-schemas';
import { createBus } from './bus';
import type { Bus, DeadLetter, Envelope } from './bus/types';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { defineStandIn, type RunnableModule } from './module';
import { startModules } from './runner';

describe('module runner', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-runner-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const namespace = `runner${Date.now()}`;
  const configEnv = () => ({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
  const config = () => loadConfig(configEnv());

  it('stop() lets an in-flight RPC finish and reply before the stores close', async () => {
    const events: string[] = [];
    // Stands in as the attribution service so its RPC passes the product's schema checks.
    const slow = defineStandIn({
      name: 'attribution',
      needs: {},
      async create() {
        return {
          rpc: {
            'attribution.getMetrics': async () => {
              events.push('handler started');
              await new Promise((r) => setTimeout(r, 300));
              events.push('handler finished');
              return { status: 200, body: { ok: true } };
            },
          },
          async stop() {
            events.push('module stopped');
          },
        };
      },
    });
    const proc = await startModules({ config: config(), modules: [slow], logger: createLogger({ level: 'silent' }) });
    expect(proc.isReady()).toBe(true);
    const request = {
      operation: 'getMetrics',
      request_id: 'runner-test',
      workspace: { id: 'w', name: 'W', timezone: 'UTC', currency: 'USD', plan: 'free' },
      website: null,
      key: { id: 'k', scopes: [] },
      params: {},
      query: {},
      body: null,
      headers: {},
    };
    // The caller is another bus client, as a gateway in another process would be.
    const caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: messageValidator, logger: createLogger({ level: 'silent' }) });
    const reply = caller.rpc('attribution.getMetrics', request, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 50));
    const stopped = proc.stop();
    expect(proc.isReady()).toBe(false);
    await expect(reply).resolves.toEqual({ status: 200, body: { ok: true } });
    await stopped;
    expect(events).toEqual(['handler started', 'handler finished', 'module stopped']);
    await caller.close();
  });

  it('a module that fails to start stops the process instead of limping on', async () => {
    const broken = defineStandIn({
      name: 'broken',
      needs: {},
      async create() {
        return { start: async () => Promise.reject(new Error('cannot start')) };
      },
    });
    await expect(startModules({ config: config(), modules: [broken], logger: createLogger({ level: 'silent' }) })).rejects.toThrow('cannot start');
  });

  const silent = () => createLogger({ level: 'silent' });
  const example = (type: 'deal.created' | 'conversion.created') => ({ type, source: 'test', workspace_id: null, website_id: null, payload: MESSAGE_EXAMPLES[type] });

  it('declares every consuming service\'s queue from the catalog, so a message waits for a service not running here', async () => {
    const proc = await startModules({ config: config(), modules: [], logger: silent() });
    try {
      // Nobody in this process consumes deal.created, yet its consumers' queues hold it.
      await proc.bus.publish(example('deal.created'));
      const dead = await proc.bus.takeDeadLetters('changefeed');
      expect(dead).toEqual([]);
      const waiting = await drainQueue(proc.bus, 'changefeed');
      expect(waiting).toEqual(['deal.created']);
    } finally {
      await proc.stop();
    }
  });

  it('dead-letters a delivered type its consumer has no handler for, instead of acking it', async () => {
    const handled: string[] = [];
    // A stand-in for changefeed that handles conversion.created only.
    const partial = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        return { consumers: { 'conversion.created': async (e: Envelope) => void handled.push(e.type) } };
      },
    });
    const proc = await startModules({ config: config(), modules: [partial], logger: silent() });
    try {
      await proc.bus.publish(example('deal.created'));
      await proc.bus.publish(example('conversion.created'));
      await waitUntil(() => handled.length === 1);
      let dead: DeadLetter[] = [];
      await waitUntil(async () => (dead = [...dead, ...(await proc.bus.takeDeadLetters('changefeed'))]).length > 0);
      expect(handled).toEqual(['conversion.created']);
      expect(dead.map((d) => [d.envelope?.type, d.reason])).toEqual([['deal.created', expect.stringContaining('no handler for deal.created')]]);
    } finally {
      await proc.stop();
    }
  });

  it('refuses to start a service whose handler map differs from the catalog', async () => {
    // Typed as the registry holds modules, past defineModule's check (as a cast or a spread could).
    const widened: RunnableModule = {
      name: 'contacts',
      needs: {},
      async create() {
        return { consumers: { 'conversion.created': async () => undefined } };
      },
    };
    await expect(startModules({ config: config(), modules: [widened], logger: silent() })).rejects.toThrow(/contacts's consumers do not match the catalog: missing .*identity.merged/);
  });

  it('registers the bus counters, so published and unroutable messages are visible', async () => {
    const proc = await startModules({ config: config(), modules: [], logger: silent() });
    try {
      const revoked = MESSAGE_EXAMPLES['gateway.key_revoked'];
      await proc.bus.publish({ type: 'gateway.key_revoked', source: 'gateway', workspace_id: revoked.workspace_id, payload: revoked });
      const text = await proc.metrics.metrics();
      expect(text).toMatch(/sightline_bus_messages_total\{direction="published",service="gateway"\} 1/);
      // Kept for later: no queue binds it, so it is counted as unroutable rather than lost silently.
      expect(text).toMatch(/sightline_bus_messages_total\{direction="unroutable",service="gateway"\} 1/);
    } finally {
      await proc.stop();
    }
  });

  it('answers /readyz 503 while starting, 200 when ready and 503 while draining', async () => {
    const adminPort = await freePort();
    const readyz = async () => {
      const r = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
      return { status: r.status, body: (await r.json()) as { problems: string[] } };
    };
    let startedUp: () => void = () => undefined;
    const starting = new Promise<void>((r) => (startedUp = r));
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const slow = defineStandIn({
      name: 'attribution',
      needs: {},
      async create() {
        return { start: () => starting, stop: () => held };
      },
    });
    const running = startModules({ config: loadConfig({ ...configEnv(), SIGHTLINE_ADMIN_PORT: String(adminPort) }), modules: [slow], logger: silent() });
    await waitUntil(async () => (await readyz().catch(() => null)) !== null);
    expect(await readyz()).toEqual({ status: 503, body: expect.objectContaining({ problems: ['starting'] }) });
    startedUp();
    const proc = await running;
    expect((await readyz()).status).toBe(200);
    const stopping = proc.stop();
    // The admin port stays open while modules drain, so probes see the 503.
    expect(await readyz()).toEqual({ status: 503, body: expect.objectContaining({ problems: ['draining'] }) });
    release();
    await stopping;
    await expect(readyz()).rejects.toThrow();
  });

  it('lists a module\'s readiness details under warnings on /readyz without answering 503', async () => {
    const adminPort = await freePort();
    let details: () => string[] = () => ['google_ads v26 reaches its sunset on 2027-11-01 (12 days left)'];
    const warned = defineStandIn({
      name: 'attribution',
      needs: {},
      async create() {
        return { readinessDetails: () => details() };
      },
    });
    const proc = await startModules({ config: loadConfig({ ...configEnv(), SIGHTLINE_ADMIN_PORT: String(adminPort) }), modules: [warned], logger: silent() });
    try {
      const readyz = async () => {
        const r = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
        return { status: r.status, body: (await r.json()) as { problems: string[]; warnings: string[] } };
      };
      expect(await readyz()).toEqual({ status: 200, body: expect.objectContaining({ status: 'ready', problems: [], warnings: ['attribution: google_ads v26 reaches its sunset on 2027-11-01 (12 days left)'] }) });
      details = () => {
        throw new Error('broken');
      };
      expect(await readyz()).toEqual({ status: 200, body: expect.objectContaining({ warnings: ['attribution: readiness details unavailable'] }) });
    } finally {
      await proc.stop();
    }
  });
});

async function waitUntil(probe: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The types waiting in a service's queue (consumed and acked here, so the queue ends empty). */
async function drainQueue(bus: Bus, service: string): Promise<string[]> {
  const seen: string[] = [];
  const consumer = await bus.consume({ service, types: [], handler: async (e) => void seen.push(e.type) });
  await waitUntil(() => seen.length > 0, 2_000).catch(() => undefined);
  await consumer.drain();
  return seen;
}

/** A port nothing listens on now (the test needs to know the admin port before start returns). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}
