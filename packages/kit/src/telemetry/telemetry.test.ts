// What every module gets from the runner without code of its own, on the embedded drivers: RPC and
// consumer RED metrics by method and type, queue depth, store operation metrics, cache sizes, and
// (with an OTLP endpoint set) spans for HTTP, RPC, publish/consume and stores joined into one trace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_EXAMPLES, type ApiRequest } from '@sightline/proto-schemas';
import { Registry } from 'prom-client';
import { loadConfig } from '../config';
import { ProblemError } from '../errors';
import { createLogger } from '../logger';
import { defineStandIn, type ModuleContext } from '../module';
import { startModules, type RunningProcess } from '../runner';
import { serviceLabel } from '../bus/bus-metrics';
import { NonRetryableError } from '../bus/types';
import { otlpJsonExporter, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../testing/otlp-receiver';
import { registerCacheSize } from './metric-families';
import { sqlOperationOf } from './store-telemetry';

const silent = () => createLogger({ level: 'silent' });

const apiRequest = (operation: string): ApiRequest => ({
  operation,
  request_id: 'telemetry-test',
  workspace: { id: 'w', name: 'W', timezone: 'UTC', currency: 'USD', plan: 'free' },
  website: null,
  key: { id: 'k', scopes: [] },
  params: {},
  query: {},
  body: null,
  headers: {},
});

/** The value of one series in Prometheus text, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const [series, value] = [line.slice(0, line.lastIndexOf(' ')), line.slice(line.lastIndexOf(' ') + 1)];
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) return Number(value);
  }
  return undefined;
}

async function waitUntil(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stand-ins for three services: attribution answers an RPC (reading its KV store), the gateway calls it from a route, changefeed consumes. */
function standIns(gate: Promise<void>, handled: string[]) {
  let gatewayBus: ModuleContext['bus'] | null = null;
  const attribution = defineStandIn({
    name: 'attribution',
    needs: { kv: true },
    async create(ctx) {
      return {
        rpc: {
          'attribution.getMetrics': async () => {
            await ctx.kv.get('telemetry-test');
            return { status: 200, body: { ok: true } };
          },
          'attribution.getPaths': async () => {
            throw new ProblemError('not-found', { detail: 'No such path.', remediation: 'None.' });
          },
        },
      };
    },
  });
  const gateway = defineStandIn({
    name: 'gateway',
    needs: {},
    async create(ctx) {
      gatewayBus = ctx.bus;
      return {
        publicRoutes(router) {
          router.get('/probe/:id', (_req, res, next) => {
            ctx.bus.call('attribution.getMetrics', apiRequest('getMetrics')).then((reply) => res.json(reply), next);
          });
        },
      };
    },
  });
  const changefeed = defineStandIn({
    name: 'changefeed',
    needs: {},
    async create() {
      return {
        consumers: {
          'conversion.created': async () => {
            await gate;
            handled.push('conversion.created');
          },
          'deal.created': async () => {
            throw new NonRetryableError('cannot take deals');
          },
        },
      };
    },
  });
  return { modules: [attribution, gateway, changefeed], call: (method: 'attribution.getMetrics' | 'attribution.getPaths') => (gatewayBus as NonNullable<typeof gatewayBus>).call(method, apiRequest(method.slice('attribution.'.length))) };
}

const conversion = () => ({ type: 'conversion.created' as const, source: 'ingest', workspace_id: null, website_id: null, payload: MESSAGE_EXAMPLES['conversion.created'] });

describe('runner telemetry (embedded drivers)', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let call: ReturnType<typeof standIns>['call'];
  let open: () => void = () => undefined;
  const handled: string[] = [];
  const scrape = () => proc.metrics.metrics();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-telemetry-'));
    const gate = new Promise<void>((r) => (open = r));
    const built = standIns(gate, handled);
    call = built.call;
    proc = await startModules({
      // Queue depths are read from the broker on every scrape here (by default at most every 10 s).
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `telemetry${Date.now()}`, SIGHTLINE_QUEUE_POLL_MS: '0' }),
      modules: built.modules,
      logger: silent(),
    });
  });
  afterAll(async () => {
    open();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('measures each RPC on both sides by catalog method and outcome', async () => {
    await expect(call('attribution.getMetrics')).resolves.toEqual({ status: 200, body: { ok: true } });
    await expect(call('attribution.getPaths')).rejects.toThrow('No such path.');
    const text = await scrape();
    expect(sample(text, 'sightline_rpc_server_duration_seconds_count', { service: 'attribution', method: 'attribution.getMetrics', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'sightline_rpc_server_duration_seconds_count', { service: 'attribution', method: 'attribution.getPaths', outcome: 'client_error' })).toBe(1);
    expect(sample(text, 'sightline_rpc_client_duration_seconds_count', { caller: 'gateway', method: 'attribution.getMetrics', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'sightline_rpc_client_duration_seconds_count', { caller: 'gateway', method: 'attribution.getPaths', outcome: 'client_error' })).toBe(1);
  });

  it('counts a call nobody serves as no_consumer, at once', async () => {
    const failed = await proc.bus.rpc('contacts.listContacts', apiRequest('listContacts'), { timeoutMs: 120_000, caller: 'gateway' }).catch((e: unknown) => e);
    expect(String(failed)).toContain('no consumer serves contacts');
    expect(sample(await scrape(), 'sightline_rpc_client_duration_seconds_count', { caller: 'gateway', method: 'contacts.listContacts', outcome: 'no_consumer' })).toBe(1);
  });

  it('measures the store operations a module makes, by service, driver and operation', async () => {
    await call('attribution.getMetrics');
    const count = sample(await scrape(), 'sightline_store_query_duration_seconds_count', { service: 'attribution', store: 'memory', operation: 'get', outcome: 'ok' });
    expect(count).toBeGreaterThanOrEqual(1);
  });

  it('measures handled messages by service, type and outcome, with their wait, and reports what is queued', async () => {
    // The consumer holds its prefetch (32) in flight; the rest waits in the queue.
    await proc.bus.publishMany(Array.from({ length: 35 }, conversion));
    await proc.bus.publish({ type: 'deal.created', source: 'crm-sync', workspace_id: null, website_id: null, payload: MESSAGE_EXAMPLES['deal.created'] });
    await waitUntil(async () => (await proc.bus.queueStats('changefeed', ['main']))[0]?.messages === 4, 'four waiting messages');
    const queued = await scrape();
    expect(sample(queued, 'sightline_bus_queue_messages', { service: 'changefeed', queue: 'main' })).toBe(4);
    expect(sample(queued, 'sightline_bus_queue_consumers', { service: 'changefeed', queue: 'main' })).toBe(1);
    expect(sample(queued, 'sightline_bus_queue_consumers', { service: 'attribution', queue: 'rpc' })).toBe(1);
    open();
    await waitUntil(() => handled.length === 35, 'every conversion handled');
    await waitUntil(async () => sample(await scrape(), 'sightline_bus_consume_duration_seconds_count', { service: 'changefeed', type: 'deal.created', outcome: 'dead_letter' }) === 1, 'the dead letter counted');
    const text = await scrape();
    expect(sample(text, 'sightline_bus_consume_duration_seconds_count', { service: 'changefeed', type: 'conversion.created', outcome: 'ack' })).toBe(35);
    expect(sample(text, 'sightline_bus_consume_lag_seconds_count', { service: 'changefeed', type: 'conversion.created' })).toBe(35);
    expect(sample(text, 'sightline_bus_messages_total', { direction: 'dead_lettered', service: 'changefeed' })).toBe(1);
  });
});

describe('metric helpers', () => {
  it('exports a registered cache size when scraped, until it is unregistered', async () => {
    const registry = new Registry();
    let size = 3;
    const stop = registerCacheSize(registry, { service: 'gateway', cache: 'site_ids', size: () => size });
    expect(sample(await registry.metrics(), 'sightline_cache_entries', { service: 'gateway', cache: 'site_ids' })).toBe(3);
    size = 5;
    expect(sample(await registry.metrics(), 'sightline_cache_entries', { service: 'gateway', cache: 'site_ids' })).toBe(5);
    stop();
    expect(sample(await registry.metrics(), 'sightline_cache_entries', { service: 'gateway', cache: 'site_ids' })).toBeUndefined();
  });

  it('labels bus messages by their source\'s leading word, never by an API key or other free text', () => {
    expect(serviceLabel('gateway')).toBe('gateway');
    expect(serviceLabel('crm-sync')).toBe('crm-sync');
    expect(serviceLabel('api:0f1e2d3c')).toBe('api');
    expect(serviceLabel('crm:hubspot')).toBe('crm');
    expect(serviceLabel('Robert\'); DROP')).toBe('other');
    expect(serviceLabel('')).toBe('other');
  });

  it('names a SQL statement by its leading keyword from a fixed set', () => {
    expect(sqlOperationOf('SELECT 1')).toBe('select');
    expect(sqlOperationOf('  -- why\n/* a */ (select 1) union (select 2)')).toBe('select');
    expect(sqlOperationOf('insert into t values ($1)')).toBe('insert');
    expect(sqlOperationOf('WITH x AS (SELECT 1) UPDATE t SET a = 1')).toBe('with');
    expect(sqlOperationOf('CREATE TABLE IF NOT EXISTS t (a int)')).toBe('ddl');
    expect(sqlOperationOf('BEGIN')).toBe('other');
    expect(sqlOperationOf('')).toBe('other');
  });
});

describe('tracing settings', () => {
  it('is off unless an endpoint is set, and off again with OTEL_SDK_DISABLED', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ SIGHTLINE_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
  });

  it('sends to <base>/v1/traces, or to the traces URL as given, which wins', () => {
    expect(loadConfig({ SIGHTLINE_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({ endpoint: 'http://collector:4318/v1/traces', sampleRatio: 1, exportDelayMs: 5000 });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example' }).tracing?.endpoint).toBe('https://otel.example/v1/traces');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' }).tracing?.endpoint).toBe('http://b:4318/custom');
  });

  it('takes a sample ratio from 0 to 1 and names the variable when it is outside', () => {
    expect(loadConfig({ SIGHTLINE_OTLP_ENDPOINT: 'http://c:4318', SIGHTLINE_TRACE_SAMPLE_RATIO: '0' }).tracing?.sampleRatio).toBe(0);
    expect(loadConfig({ SIGHTLINE_OTLP_ENDPOINT: 'http://c:4318', SIGHTLINE_TRACE_SAMPLE_RATIO: '1' }).tracing?.sampleRatio).toBe(1);
    expect(() => loadConfig({ SIGHTLINE_TRACE_SAMPLE_RATIO: '1.01' })).toThrow(/SIGHTLINE_TRACE_SAMPLE_RATIO/);
    expect(() => loadConfig({ SIGHTLINE_TRACE_SAMPLE_RATIO: '-0.01' })).toThrow(/SIGHTLINE_TRACE_SAMPLE_RATIO/);
    expect(() => loadConfig({ SIGHTLINE_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/SIGHTLINE_OTLP_ENDPOINT/);
  });
});

describe('tracing (embedded drivers, OTLP/HTTP to a local receiver)', () => {
  let dataDir: string;
  let receiver: OtlpReceiver;
  let proc: RunningProcess;
  const handled: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-tracing-'));
    receiver = await startOtlpReceiver();
    const config = loadConfig({
      SIGHTLINE_PORT: '0',
      SIGHTLINE_ADMIN_PORT: '0',
      SIGHTLINE_DATA_DIR: dataDir,
      SIGHTLINE_BUS_NAMESPACE: `tracing${Date.now()}`,
      SIGHTLINE_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    expect(config.tracing?.endpoint).toBe(`${receiver.url}/v1/traces`);
    // Under jest the OTLP/HTTP exporter cannot load node:http; this one sends the same JSON (the
    // distributed test in test-e2e exercises the real exporter from separate processes).
    proc = await startModules({
      config: { ...config, tracing: { ...(config.tracing as NonNullable<typeof config.tracing>), exporter: otlpJsonExporter(receiver.url) } },
      modules: standIns(Promise.resolve(), handled).modules,
      logger: silent(),
    });
  });
  afterAll(async () => {
    await proc?.stop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spansOf = (id: string) => receiver.spans().filter((s) => s.traceId === id);
  const one = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
    const found = spans.filter((s) => s.name === name);
    expect(found.map((s) => s.name)).toEqual([name]);
    return found[0] as ReceivedSpan;
  };

  it('continues a caller\'s trace through HTTP, the RPC client and server, and the store', async () => {
    const response = await fetch(`http://127.0.0.1:${proc.publicPort}/probe/abc`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(response.status).toBe(200);
    await waitUntil(() => spansOf(traceId).length >= 4, 'four spans');
    const spans = spansOf(traceId);
    const http = one(spans, 'GET /probe/:id');
    const store = one(spans, 'memory get');
    expect(http).toMatchObject({ parentSpanId: '00f067aa0ba902b7', kind: 2, service: 'sightline-all' });
    expect(http.attributes['http.response.status_code']).toBe(200);
    // The client and server spans share the method's name; kind tells them apart (3 client, 2 server).
    const rpc = spans.filter((s) => s.name === 'rpc attribution.getMetrics');
    expect(rpc.map((s) => s.kind).sort()).toEqual([2, 3]);
    const rpcClient = rpc.find((s) => s.kind === 3) as ReceivedSpan;
    const rpcServer = rpc.find((s) => s.kind === 2) as ReceivedSpan;
    expect(rpcClient.parentSpanId).toBe(http.spanId);
    expect(rpcServer.parentSpanId).toBe(rpcClient.spanId);
    expect(store.parentSpanId).toBe(rpcServer.spanId);
  });

  it('makes a consumer span the publisher\'s child, linked to it', async () => {
    const envelope = await proc.bus.publish(conversion());
    await waitUntil(() => handled.length === 1, 'the conversion handled');
    let process: ReceivedSpan | undefined;
    await waitUntil(() => (process = receiver.spans().find((s) => s.name === 'process conversion.created')) !== undefined, 'the consumer span');
    const consumer = process as ReceivedSpan;
    const publish = receiver.spans().find((s) => s.spanId === consumer.parentSpanId) as ReceivedSpan;
    expect(publish).toMatchObject({ name: 'publish conversion.created', kind: 4, traceId: consumer.traceId });
    expect(consumer).toMatchObject({ kind: 5, links: [{ traceId: publish.traceId, spanId: publish.spanId }] });
    expect(consumer.attributes['messaging.consumer.group.name']).toBe('changefeed');
    expect(envelope.type).toBe('conversion.created');
  });
});
