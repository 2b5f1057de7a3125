// The automations module on embedded drivers (PGlite, in-memory KV, in-process bus) beside the
// local servers it talks to: SMTP (smtp-server), Slack's Web API and an OpenAI-compatible model.
// attribution stands in with a getMetrics whose numbers a test sets; changefeed stands in as a
// recorder of the change messages. Requests are made as the gateway makes them (ApiRequest over
// the bus); the clock is the test's.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineStandIn, loadConfig, ProblemError, RpcRemoteError, startModules, type Envelope, type RemoteProblem, type RunningProcess } from '@sightline/kit';
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { createAutomationsModule, type AutomationsOptions } from '../src/index';
import { startLlmServer, type TestLlmServer } from './llm-server';
import { startSlackServer, type TestSlackServer } from './slack-server';
import { startSmtpServer, type TestSmtpServer } from './smtp-server';

export const WORKSPACE = { id: randomUUID(), name: 'Shop', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'pro' as const };
export const WEBSITE = { id: randomUUID(), domain: 'shop.test', timezone: 'Europe/Berlin', currency: 'EUR' };

export type Json = Record<string, unknown>;
export type MetricsFn = (query: { metrics: string[]; filter?: string[]; from: string; to: string }) => Record<string, number | null>;

export interface Harness {
  proc: RunningProcess;
  smtp: TestSmtpServer;
  slack: TestSlackServer;
  llm: TestLlmServer;
  clock: { now: Date };
  metrics: { fn: MetricsFn; calls: number };
  /** The funnels stand-in: funnel id → the last step's conv_vs_first; an id not here is not-found. */
  funnels: Map<string, number | null>;
  changes: Envelope[];
  call(method: string, init?: Partial<ApiRequest>): Promise<ApiResponse<Json & { data: Json & Json[] }>>;
  problem(method: string, init?: Partial<ApiRequest>): Promise<RemoteProblem>;
  create(body: Json): Promise<Json>;
  publish(type: string, payload: Json, id?: string): Promise<void>;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** Waits until `probe` gives a value (polling), or fails naming `what`. */
  until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  smtp?: boolean;
  llm?: boolean;
  options?: Partial<AutomationsOptions>;
}

/** What a new key gets (every scope): alerts may then gather and show anything (access/output-scopes.ts). */
export const FULL_SCOPES = ['analytics:read', 'conversions:read', 'deals:read', 'funnels:read', 'automations:read', 'automations:write', 'pii:read'] as const;
/** A key that may manage alerts and read nothing else. */
export const AUTOMATIONS_ONLY = ['automations:read', 'automations:write'] as const;

export function request(operation: string, init: Partial<ApiRequest> = {}): ApiRequest {
  return {
    operation, request_id: `test-${operation}`, workspace: WORKSPACE, website: WEBSITE, key: { id: 'key1', scopes: [...FULL_SCOPES] },
    params: {}, query: {}, body: null, headers: {}, ...init,
  };
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const smtp = await startSmtpServer();
  const slack = await startSlackServer();
  const llm = await startLlmServer();
  const clock = { now: new Date('2026-03-10T09:00:30.000Z') };
  const metrics = { fn: (() => ({})) as MetricsFn, calls: 0 };
  const changes: Envelope[] = [];
  const funnelSteps = new Map<string, number | null>();
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-automations-'));

  const attribution = defineStandIn({
    name: 'attribution',
    needs: {},
    async create() {
      return {
        rpc: {
          'attribution.getMetrics': async (req: ApiRequest<{ metrics: string[]; filter?: string[]; from: string; to: string }>) => {
            metrics.calls += 1;
            const values = metrics.fn(req.query);
            const row = Object.fromEntries(req.query.metrics.map((m) => [m, values[m] ?? 0]));
            return { status: 200, body: { data: [row], meta: { website_id: WEBSITE.id, currency: 'EUR', timezone: WEBSITE.timezone } } };
          },
        },
      };
    },
  });
  const funnels = defineStandIn({
    name: 'funnels',
    needs: {},
    async create() {
      return {
        rpc: {
          'funnels.getFunnelSteps': async (req: ApiRequest) => {
            const id = String(req.params['id'] ?? '');
            if (!funnelSteps.has(id)) throw new ProblemError('not-found', { detail: `No funnel ${id} on this website.`, remediation: 'Check the id.' });
            return { status: 200, body: { data: [{ conv_vs_first: 1 }, { conv_vs_first: funnelSteps.get(id) ?? null }] } };
          },
        },
      };
    },
  });
  const recorder = defineStandIn({
    name: 'changefeed',
    needs: {},
    async create() {
      const record = async (e: Envelope) => void changes.push(e);
      return { consumers: { 'automation.created': record, 'automation.updated': record, 'automation.deleted': record, 'automation.ran': record } };
    },
  });
  const module = createAutomationsModule({
    slackApiUrl: slack.url,
    ...(opts.smtp === false ? {} : { smtpUrl: smtp.url }),
    ...(opts.llm ? { llm: { url: llm.url, model: 'test-model', apiKey: 'sk-test' } } : {}),
    callTimeoutMs: 3_000,
    deliveryLeaseMs: 10_000,
    retry: { baseDelayMs: 60_000, maxAttempts: 3 },
    // The tests tick and work the queue themselves; the crons stay out of the way.
    tickCron: '0 0 1 1 *',
    pollCron: '0 0 1 1 *',
    now: () => clock.now,
    ...opts.options,
  });
  const proc = await startModules({
    config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_PUBLIC_URL: 'https://sightline.example' }),
    logger: createLogger({ level: 'silent' }),
    modules: [attribution, funnels, recorder, module],
  });

  const call: Harness['call'] = (method, init = {}) => proc.bus.rpc(`automations.${method}`, request(method, init), { timeoutMs: 20_000 });
  const admin: Harness['admin'] = async (method, path, body) => {
    const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const until: Harness['until'] = async (what, probe, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return {
    proc, smtp, slack, llm, clock, metrics, funnels: funnelSteps, changes, call, admin, until,
    async problem(method, init) {
      try {
        await call(method, init);
      } catch (error) {
        if (error instanceof RpcRemoteError) return error.problem;
        throw error;
      }
      throw new Error(`${method} succeeded; a problem was expected`);
    },
    async create(body) {
      const r = await call('createAutomation', { body });
      return r.body.data;
    },
    async publish(type, payload, id) {
      await proc.bus.publish({ type, payload, source: 'test', workspace_id: WORKSPACE.id, website_id: WEBSITE.id, ...(id ? { id } : {}) });
    },
    async stop() {
      await proc.stop();
      await Promise.all([smtp.close(), slack.close(), llm.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Connects the harness's Slack workspace to WORKSPACE through the admin API. */
export async function connectSlack(h: Harness): Promise<void> {
  const r = await h.admin('POST', '/automations/chat/connections', { workspace_id: WORKSPACE.id, bot_token: h.slack.token });
  if (r.status !== 201 && r.status !== 200) throw new Error(`connecting Slack failed: ${JSON.stringify(r.body)}`);
}

export function conversion(overrides: Json = {}): Json {
  return {
    conversion_id: randomUUID(), website_id: WEBSITE.id, workspace_id: WORKSPACE.id, identity_id: null, anonymous_id: 'a1', email: 'ada@example.com', phone: null,
    event_type: 'purchase', event_name: 'Order', occurred_at: '2026-03-10T08:59:00.000Z', revenue: 1234.5, currency: 'EUR', properties: { plan: 'pro' }, origin: 'api',
    ...overrides,
  };
}
