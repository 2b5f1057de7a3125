// Issue 24, finding 3: gathering runs inside the workspace's cap of four concurrent analytics
// queries, the cap the gateway applies to people's reads. The real gateway module serves the slots
// (gateway.acquireAnalyticsSlot over the bus); a stand-in attribution holds people's queries open
// and counts how many gather queries run at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineStandIn, loadConfig, serviceBus, startModules, type RunningProcess } from '@sightline/kit';
import { createGatewayModule } from '@sightline/service-gateway';
import type { ApiRequest } from '@sightline/proto-schemas';
import { createAnalyticsSlots } from './analytics-slots';
import { createGatherer, type GatherAsk, type Gatherer } from './gather';

type Json = Record<string, unknown>;
const logger = createLogger({ level: 'silent' });

describe('gathering within the workspace\'s analytics cap (issue 24)', () => {
  let proc: RunningProcess;
  let dataDir: string;
  let key: string;
  let ask: Omit<GatherAsk, 'gather' | 'key'>;
  const now = new Date();
  // People's queries wait on `gate`; gather queries take 150 ms. Counted while they run.
  const openers: (() => void)[] = [];
  const openGate = (): void => openers.splice(0).forEach((open) => open());
  let gate = Promise.resolve();
  const running = { people: 0, gather: 0, gatherMost: 0, gatherCalls: 0 };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-slots-'));
    const attribution = defineStandIn({
      name: 'attribution',
      needs: {},
      async create() {
        return {
          rpc: {
            'attribution.getMetrics': async (req: ApiRequest) => {
              const gathering = req.request_id.startsWith('automations-gather');
              if (gathering) {
                running.gather += 1;
                running.gatherCalls += 1;
                running.gatherMost = Math.max(running.gatherMost, running.gather);
                await new Promise((r) => setTimeout(r, 150));
                running.gather -= 1;
              } else {
                running.people += 1;
                await gate;
                running.people -= 1;
              }
              return { status: 200, body: { data: [{ visitors: 7 }] } };
            },
          },
        };
      },
    });
    proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off', SIGHTLINE_RPC_TIMEOUT_MS: '20000' }),
      logger,
      modules: [createGatewayModule({ demo: false }), attribution],
    });
    const admin = async (path: string, body: Json): Promise<Json> => {
      const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await r.json()) as Json;
    };
    const ws = await admin('/workspaces', { name: 'Slots', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
    const site = await admin(`/workspaces/${String(ws['id'])}/websites`, { domain: 'slots.test' });
    key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    ask = {
      workspace: { id: String(ws['id']), name: 'Slots', timezone: 'UTC', currency: 'EUR', plan: 'internal' },
      website: { id: String(site['id']), domain: 'slots.test', timezone: 'UTC', currency: 'EUR' },
      previous: [],
    };
  }, 120_000);
  afterAll(async () => {
    openGate();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const gatherer = (waitMs: number, perWorkspace = 2): Gatherer => createGatherer(serviceBus(proc.bus, 'automations'), {
    concurrency: 4, perWorkspace, timeoutMs: 10_000,
    slots: createAnalyticsSlots(serviceBus(proc.bus, 'automations'), { leaseMs: 15_000, waitMs, callTimeoutMs: 5_000, logger, backoffMs: 20, maxBackoffMs: 100 }),
  });
  /** Six different windows: six queries. */
  const sixFigures = Object.fromEntries(['today', 'yesterday', 'last 7 days', 'last 14 days', 'last 30 days', 'this month'].map((period, i) => [`f${i}`, { metric: 'visitors' as const, period }]));
  const peopleAsk = (): Promise<Response> => fetch(`http://127.0.0.1:${proc.publicPort}/v1/metrics?website=slots.test&metrics=visitors`, { headers: { authorization: `Bearer ${key}` } });
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const holdPeople = (n: number): Promise<Response>[] => {
    gate = new Promise<void>((resolve) => openers.push(resolve));
    return Array.from({ length: n }, () => peopleAsk());
  };

  it('waits while people\'s queries hold all four slots, then gathers, never more than two at once', async () => {
    const people = holdPeople(4);
    await until('four people\'s queries running', () => running.people === 4);
    running.gatherMost = 0;
    // Four at once asked (as two replicas would): the gateway's share is what holds it to two.
    const gathered = gatherer(20_000, 4).gather([{ key: 'a', gather: sixFigures, ...ask }], now);
    await new Promise((r) => setTimeout(r, 400));
    expect(running.gatherCalls).toBe(0);
    openGate();
    expect((await Promise.all(people)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const { results, stats } = await gathered;
    expect(stats.queries).toBe(6);
    expect(results.get('a')).toMatchObject({ ok: true });
    expect(running.gatherCalls).toBe(6);
    expect(running.gatherMost).toBe(2);
  });

  it('leaves people two slots while it gathers', async () => {
    running.gatherMost = 0;
    const gathered = gatherer(20_000).gather([{ key: 'b', gather: sixFigures, ...ask }], now);
    await until('gathering under way', () => running.gather === 2);
    const people = holdPeople(2);
    await until('two people\'s queries running beside the gathering', () => running.people === 2);
    openGate();
    expect((await Promise.all(people)).map((r) => r.status)).toEqual([200, 200]);
    expect((await gathered).results.get('b')).toMatchObject({ ok: true });
    expect(running.gatherMost).toBe(2);
  });

  it('gives up after its bounded wait, with a readable error, when the slots stay busy', async () => {
    const people = holdPeople(4);
    await until('four people\'s queries running', () => running.people === 4);
    const calls = running.gatherCalls;
    const started = Date.now();
    const { results } = await gatherer(300).gather([{ key: 'c', gather: { v: { metric: 'visitors', period: 'today' } }, ...ask }], now);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(results.get('c')).toMatchObject({ ok: false, error: expect.stringContaining('analytics queries stayed at their limit') });
    expect(running.gatherCalls).toBe(calls);
    openGate();
    await Promise.all(people);
  });
});
