// One in-process Sightline for funnels tests: the funnels module on embedded stores (PGlite, chDB,
// in-process bus), optionally with ingest in front of it, and a stand-in change feed that keeps
// the funnel.* messages. Facts go in as the bus delivers them (events.classified, identity.merged,
// milestone.reached) and each call returns once the module has handled them, read model included;
// reads go through the RPC methods exactly as the gateway calls them. `steps` and `breakdown` wait
// for the funnel's read model to be built, read from it, and check that the answer from the events
// (what a read gives while the read model is building) is the same.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineStandIn, loadConfig, RpcRemoteError, startModules, type ClickHouseStore, type Envelope, type RunnableModule, type RunningProcess, type SightlineConfig } from '@sightline/kit';
import type { ApiRequest, ApiResponse, AttributionModelName, ClassifiedEventV1, IngestWebsiteV1, MessageType, MilestoneReachedV1 } from '@sightline/proto-schemas';
import type { FunnelDefinition } from '../src/definition';
import { computeBreakdown } from '../src/breakdown.reads';
import { computeSteps } from '../src/funnel.reads';
import { createFunnelsModule, type FunnelsModuleOptions } from '../src/index';
import { gatewayQuery } from '@sightline/kit/testing/gateway-query';

export type Json = Record<string, unknown>;

export interface HarnessOptions {
  /** More modules in the same process (ingest from the module registry, a capture stand-in). */
  modules?: (config: SightlineConfig) => Promise<RunnableModule[]>;
  now?: () => Date;
  /** Options of the funnels module (a paused builder, build unit sizes). */
  funnels?: Omit<FunnelsModuleOptions, 'onHandled' | 'now' | 'outbox'>;
}

type Counts = Partial<Record<MessageType, number>>;
const TOLERANCE = 1e-9;
const close = (a: unknown, b: unknown): boolean =>
  typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b)) : a === b;

export class FunnelsHarness {
  /** Messages sent by this harness and handled by the module, by type. */
  private readonly sent: Counts = {};

  private constructor(
    readonly proc: RunningProcess,
    readonly ch: ClickHouseStore,
    /** funnel.* messages as the change feed received them. */
    readonly changes: Envelope[],
    private readonly dataDir: string,
    private readonly handled: Counts,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<FunnelsHarness> {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-funnels-'));
    const changes: Envelope[] = [];
    const recorder = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        const record = async (e: Envelope) => void changes.push(e);
        return { consumers: { 'funnel.created': record, 'funnel.updated': record, 'funnel.deleted': record } };
      },
    });
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_RPC_TIMEOUT_MS: '120000', SIGHTLINE_DEMO: 'off' });
    const handled: Counts = {};
    const funnels = createFunnelsModule({
      outbox: { pollIntervalMs: 20 },
      builder: { idleMs: 200, ...options.funnels?.builder },
      ...(options.funnels?.readModel ? { readModel: options.funnels.readModel } : {}),
      ...(options.now ? { now: options.now } : {}),
      onHandled: (type, n) => void (handled[type] = (handled[type] ?? 0) + n),
    });
    const proc = await startModules({
      config,
      logger: createLogger({ level: 'silent' }),
      modules: [...(options.modules ? await options.modules(config) : []), funnels, recorder],
    });
    return new FunnelsHarness(proc, await proc.stores.clickhouse('funnels'), changes, dataDir, handled);
  }

  /** Publishes messages and waits until the module has handled every message this harness sent of that type. */
  private async send(type: MessageType, messages: Parameters<RunningProcess['bus']['publishMany']>[0]): Promise<void> {
    if (messages.length === 0) return;
    this.sent[type] = (this.sent[type] ?? 0) + messages.length;
    const wanted = this.sent[type] as number;
    await this.proc.bus.publishMany(messages);
    await this.until(`${type} to be handled`, async () => (this.handled[type] ?? 0) >= wanted);
  }

  /** Publishes classified events (one events.classified per call) and waits until they are handled. */
  async events(site: IngestWebsiteV1, events: ClassifiedEventV1[]): Promise<void> {
    if (events.length === 0) return;
    await this.send('events.classified', [{ type: 'events.classified', source: 'ingest', workspace_id: site.workspace_id, website_id: site.id, payload: { batch_id: randomUUID(), website: site, events } }]);
  }

  async merge(site: IngestWebsiteV1, from: string, into: string): Promise<void> {
    await this.send('identity.merged', [{ type: 'identity.merged', source: 'ingest', workspace_id: site.workspace_id, website_id: site.id, payload: { workspace_id: site.workspace_id, from_identity_id: from, into_identity_id: into } }]);
  }

  async milestones(site: IngestWebsiteV1, milestones: MilestoneReachedV1[]): Promise<void> {
    await this.send('milestone.reached', milestones.map((payload) => ({ type: 'milestone.reached', source: 'crm:hubspot', workspace_id: site.workspace_id, website_id: site.id, payload })));
  }

  /** The funnel as GET /funnels/{id} returns it. */
  async funnel(site: IngestWebsiteV1, id: string): Promise<Json> {
    return (await this.rpc<{ data: Json }>('getFunnel', this.request(site, 'getFunnel', { params: { id } }))).body.data;
  }

  /** Waits until the funnel's read model is built (its current generation); a failed build throws its error. */
  async ready(site: IngestWebsiteV1, id: string, timeoutMs = 120_000): Promise<void> {
    const sql = await this.proc.stores.sql('funnels');
    await this.until(`the read model of funnel ${id} to be built`, async () => {
      const [row] = (await sql.query<{ read_model: string; build_error: string | null }>('SELECT read_model, build_error FROM funnels WHERE id = $1', [id])).rows;
      if (row?.build_error) throw new Error(`the read model of funnel ${id} failed to build: ${row.build_error}`);
      return row?.read_model === 'ready';
    }, timeoutMs);
  }

  request(site: IngestWebsiteV1, operation: string, init: { params?: Record<string, string>; query?: Json; body?: unknown; keyId?: string; idempotencyKey?: string } = {}): ApiRequest {
    return {
      operation,
      request_id: randomUUID(),
      workspace: { id: site.workspace_id, name: site.domain, timezone: site.timezone, currency: site.currency, plan: 'internal' },
      website: { id: site.id, domain: site.domain, timezone: site.timezone, currency: site.currency },
      key: { id: init.keyId ?? 'key-test', scopes: ['funnels:read', 'funnels:write'] },
      params: init.params ?? {},
      query: init.query ?? {},
      body: init.body ?? null,
      headers: init.idempotencyKey ? { idempotency_key: init.idempotencyKey } : {},
    };
  }

  async rpc<B = Json>(method: string, request: ApiRequest): Promise<ApiResponse<B>> {
    return this.proc.bus.rpc<ApiResponse<B>>(`funnels.${method}`, request, { timeoutMs: 120_000 });
  }

  /** A problem document the call answered with (throws if it succeeded). */
  async problem(promise: Promise<unknown>): Promise<Json> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof RpcRemoteError) return error.problem as unknown as Json;
      throw error;
    }
    throw new Error('expected a problem document');
  }

  async create(site: IngestWebsiteV1, body: Json, keyId?: string): Promise<Json> {
    const r = await this.rpc<{ data: Json }>('createFunnel', this.request(site, 'createFunnel', { body, ...(keyId ? { keyId } : {}) }));
    return r.body.data;
  }

  /**
   * GET /funnels/{id}/steps with a raw query string map, coerced as the gateway would: from the
   * read model once built (`wait`, the default), checked against the answer from the events.
   */
  async steps(site: IngestWebsiteV1, id: string, raw: Record<string, string>, wait = true): Promise<Json & { data: Json[]; previous?: { window: Json; data: Json[] }; meta: Json }> {
    if (wait) await this.ready(site, id);
    const r = await this.rpc<Json & { data: Json[]; previous?: { window: Json; data: Json[] }; meta: Json }>('getFunnelSteps', this.request(site, 'getFunnelSteps', { params: { id }, query: gatewayQuery('/v1/funnels/{id}/steps', raw) }));
    const body = r.body;
    if (body.meta['computed_from'] === 'read_model') {
      const windows = [body.meta['window'] as Json, ...(body.previous ? [body.previous.window] : [])].map((w) => ({ fromMs: Date.parse(String(w['from'])), toMs: Date.parse(String(w['to'])) }));
      const fromEvents = await computeSteps(this.ch, await this.definition(site, id), windows, { websiteId: site.id, workspaceId: site.workspace_id }, null);
      const pick = (rows: readonly Json[]) => rows.map((s) => [s['reached'], s['median_seconds_from_previous']]);
      const got = [pick(body.data), ...(body.previous ? [pick(body.previous.data)] : [])];
      const want = fromEvents.map((rows) => pick(rows as unknown as Json[]));
      if (JSON.stringify(got) !== JSON.stringify(want) && !got.every((g, i) => g.every((s, k) => s.every((v, j) => close(v, want[i]?.[k]?.[j]))))) {
        throw new Error(`steps of funnel ${id}: the read model gives ${JSON.stringify(got)}, the events ${JSON.stringify(want)}`);
      }
    }
    return body;
  }

  /** GET /funnels/{id}/breakdown, as steps: from the read model once built, checked against the events. */
  async breakdown(site: IngestWebsiteV1, id: string, raw: Record<string, string>, wait = true): Promise<Json & { data: Json[]; totals: { entered: number; completed: number }; meta: Json }> {
    if (wait) await this.ready(site, id);
    const query = gatewayQuery('/v1/funnels/{id}/breakdown', raw);
    const r = await this.rpc<Json & { data: Json[]; totals: { entered: number; completed: number }; meta: Json }>('getFunnelBreakdown', this.request(site, 'getFunnelBreakdown', { params: { id }, query }));
    const body = r.body;
    if (body.meta['computed_from'] === 'read_model') {
      const w = body.meta['window'] as Json;
      const models = body.meta['models'] as AttributionModelName[];
      const fromEvents = await computeBreakdown(this.ch, await this.definition(site, id), { fromMs: Date.parse(String(w['from'])), toMs: Date.parse(String(w['to'])) },
        { websiteId: site.id, workspaceId: site.workspace_id }, { dimension: String(body.meta['dimension']), models, excludeDirect: (body.meta['definitions'] as Json)['exclude_direct'] !== undefined, limit: Number(query['limit'] ?? 50) }, null);
      const mismatch = fromEvents.totals.entered !== body.totals.entered || fromEvents.totals.completed !== body.totals.completed
        || fromEvents.rows.length !== body.data.length
        || fromEvents.rows.some((row, i) => {
          const got = body.data[i] as Json;
          return got['value'] !== row.value || models.some((m) => {
            const g = (models.length === 1 ? got : got[m]) as Json;
            const e = row.models[m];
            return !close(g['entered'], e?.entered) || !close(g['completed'], e?.completed);
          });
        });
      if (mismatch) throw new Error(`breakdown of funnel ${id}: the read model gives ${JSON.stringify(body.data)} ${JSON.stringify(body.totals)}, the events ${JSON.stringify(fromEvents)}`);
    }
    return body;
  }

  private async definition(site: IngestWebsiteV1, id: string): Promise<FunnelDefinition> {
    const f = await this.funnel(site, id);
    return { name: String(f['name']), scope: f['scope'], step_order: f['step_order'], window_days: Number(f['window_days']), filters: f['filters'], steps: f['steps'] } as FunnelDefinition;
  }

  async until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async deadLetters(): Promise<number> {
    return (await this.proc.bus.takeDeadLetters('funnels', 100)).length;
  }

  async stop(): Promise<void> {
    await this.proc.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
