// Operability in distributed mode, each service its own `sightline start` process on RabbitMQ,
// PostgreSQL and Redis, as Kubernetes runs them:
// - one trace runs gateway → bus → attribution with its parent links intact, exported over OTLP/HTTP
//   by each process (as sightline-gateway and sightline-attribution) to a receiver in this test;
// - a request for a service nobody runs is answered 503 at once, naming the missing consumer, not
//   after the RPC deadline (set far beyond the test's own timeout, so only the fast answer passes);
// - /readyz answers 503 while the broker or a store is out of reach and 200 once it is back. The
//   outage is a TCP proxy between one process and the shared server, so nothing else is disturbed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@sightline/kit/testing/otlp-receiver';
import { startTcpProxy, type TcpProxy } from '@sightline/kit/testing/tcp-proxy';
import { adminClient } from './admin-client';
import { startSightline, type SightlineProcess } from './processes';

const ADMIN_TOKEN = 'observability-admin-token-0123';
/** Far beyond every wait in this test: a request that waited for it would fail the test by timeout. */
const RPC_DEADLINE_MS = 300_000;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Readiness {
  status: number;
  problems: string[];
}

async function readyz(proc: SightlineProcess): Promise<Readiness> {
  const response = await fetch(`${proc.adminUrl}/readyz`);
  return { status: response.status, problems: ((await response.json()) as { problems: string[] }).problems };
}

describe('observability across processes (RabbitMQ, PostgreSQL, Redis)', () => {
  let receiver: OtlpReceiver;
  let gateway: SightlineProcess;
  let attribution: SightlineProcess;
  let brokerProxy: TcpProxy;
  let postgresProxy: TcpProxy;
  let cleanup: (() => Promise<void>) | undefined;
  const dataDirs: string[] = [];
  let key: string;

  beforeAll(async () => {
    const servers = await distributedServers(['gateway', 'attribution', 'ingest', 'contacts', 'changefeed', 'crm-sync', 'funnels', 'automations']);
    cleanup = servers.cleanup;
    receiver = await startOtlpReceiver();
    const amqp = new URL(servers.amqpUrl);
    brokerProxy = await startTcpProxy({ host: amqp.hostname, port: Number(amqp.port) });
    const proxiedAmqp = new URL(servers.amqpUrl);
    proxiedAmqp.port = String(brokerProxy.port);
    const postgres = new URL(servers.postgresUrl);
    postgresProxy = await startTcpProxy({ host: postgres.hostname, port: Number(postgres.port || 5432) });
    const proxiedPostgres = new URL(servers.postgresUrl);
    proxiedPostgres.port = String(postgresProxy.port);

    const common = {
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_RPC_TIMEOUT_MS: String(RPC_DEADLINE_MS),
      SIGHTLINE_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    const dataDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'sightline-e2e-obs-'));
      dataDirs.push(dir);
      return dir;
    };
    // The gateway reaches PostgreSQL through a proxy; attribution reaches RabbitMQ through one.
    [gateway, attribution] = await Promise.all([
      startSightline(['start', '--target=gateway'], { ...common, SIGHTLINE_AMQP_URL: servers.amqpUrl, SIGHTLINE_POSTGRES_URL: proxiedPostgres.toString(), SIGHTLINE_DATA_DIR: dataDir() }),
      startSightline(['start', '--target=attribution'], { ...common, SIGHTLINE_AMQP_URL: proxiedAmqp.toString(), SIGHTLINE_POSTGRES_URL: servers.postgresUrl, SIGHTLINE_DATA_DIR: dataDir() }),
    ]);
    const admin = adminClient(gateway.adminUrl, ADMIN_TOKEN);
    const workspace = await admin('/workspaces', { name: 'Observability', plan: 'internal' });
    await admin(`/workspaces/${workspace['id']}/websites`, { domain: 'observability.test' });
    key = (await admin('/keys', { workspace_id: workspace['id'] }))['key'] as string;
  }, 180_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), attribution?.stop()]);
    await brokerProxy?.close();
    await postgresProxy?.close();
    await receiver?.close();
    await cleanup?.();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('exports one trace from gateway through the bus to attribution, parent links intact', async () => {
    const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
    const callerSpan = '00f067aa0ba902b7';
    const response = await fetch(`${gateway.baseUrl}/v1/metrics?metrics=visitors`, {
      headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(response.status).toBe(200);

    // Kinds: 2 server, 3 client. Each process sends its spans in its own batches: wait for all four kinds of span.
    const isHttp = (s: ReceivedSpan) => s.service === 'sightline-gateway' && s.kind === 2;
    const isClient = (s: ReceivedSpan) => s.service === 'sightline-gateway' && s.kind === 3 && s.name === 'rpc attribution.getMetrics';
    const isServer = (s: ReceivedSpan) => s.service === 'sightline-attribution' && s.kind === 2 && s.name === 'rpc attribution.getMetrics';
    const isQuery = (s: ReceivedSpan) => s.service === 'sightline-attribution' && s.name.startsWith('chdb ');
    const spans = await waitFor('the spans of both services', () => {
      const found = receiver.spans().filter((s) => s.traceId === traceId);
      return [isHttp, isClient, isServer, isQuery].every((is) => found.some(is)) ? found : undefined;
    });
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const only = (predicate: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
      const found = spans.filter(predicate);
      if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.map((s) => `${s.service}:${s.name}`).join(', ') || 'none'}`);
      return found[0] as ReceivedSpan;
    };
    const http = only(isHttp, 'gateway HTTP span');
    const client = only(isClient, 'RPC client span');
    const server = only(isServer, 'RPC server span');
    expect(http.parentSpanId).toBe(callerSpan);
    expect(http.attributes['http.route']).toBe('/v1/metrics');
    expect(client.parentSpanId).toBe(http.spanId);
    expect(server.parentSpanId).toBe(client.spanId);
    // Every query attribution ran for it descends from its server span.
    const queries = spans.filter(isQuery);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      let ancestor = byId.get(query.parentSpanId);
      while (ancestor && ancestor !== server) ancestor = byId.get(ancestor.parentSpanId);
      expect(ancestor).toBe(server);
    }
  }, 60_000);

  it('answers a request for a service nobody runs with 503 at once, naming the missing consumer', async () => {
    // contacts runs nowhere; the RPC deadline is 300 s, past this test's 60 s timeout.
    const response = await fetch(`${gateway.baseUrl}/v1/contacts`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(503);
    const problem = (await response.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/\/problems\/service-unavailable$/);
    expect(problem.detail).toContain('No consumer serves this request');
    expect(problem.detail).toContain('contacts');
    expect(response.headers.get('retry-after')).toBe('5');
    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/sightline_rpc_client_duration_seconds_count\{caller="gateway",method="contacts.listContacts",outcome="no_consumer"\} 1/);
  }, 60_000);

  it('is not ready while its broker is out of reach, and ready again once it is back', async () => {
    expect(await readyz(attribution)).toEqual({ status: 200, problems: [] });
    brokerProxy.cut();
    try {
      const down = await waitFor('a 503 from /readyz', async () => {
        const r = await readyz(attribution);
        return r.status === 503 ? r : undefined;
      });
      expect(down.problems.some((p) => p.startsWith('bus: '))).toBe(true);
    } finally {
      brokerProxy.restore();
    }
    await waitFor('a 200 from /readyz', async () => ((await readyz(attribution)).status === 200 ? true : undefined), 60_000);
    // The RPC consumer is back too: the gateway's request reaches attribution again.
    await waitFor('attribution answering', async () => {
      const r = await fetch(`${gateway.baseUrl}/v1/metrics?metrics=visitors`, { headers: { authorization: `Bearer ${key}` } });
      return r.status === 200 ? true : undefined;
    });
  }, 120_000);

  it('is not ready while a store is out of reach, and ready again once it is back', async () => {
    expect((await readyz(gateway)).status).toBe(200);
    postgresProxy.cut();
    try {
      const down = await waitFor('a 503 from /readyz', async () => {
        const r = await readyz(gateway);
        return r.status === 503 ? r : undefined;
      });
      expect(down.problems.some((p) => p.startsWith('postgres (schema gateway): '))).toBe(true);
    } finally {
      postgresProxy.restore();
    }
    await waitFor('a 200 from /readyz', async () => ((await readyz(gateway)).status === 200 ? true : undefined), 60_000);
  }, 120_000);
});
