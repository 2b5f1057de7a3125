// One in-process Sightline with the ingest and attribution modules on the embedded stores and the
// in-memory bus (started through the CLI's module registry, as `sightline start
// --target=ingest,attribution` would), plus a listener that keeps what ingest publishes. Datagen
// batches go in through ingest's RPC, exactly as the gateway forwards them.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTargets, TARGET_NAMES } from '@sightline/cli';
import { generateWorkspace, type IngestBatch } from '@sightline/datagen';
import { createLogger, defineStandIn, loadConfig, startModules, type ClickHouseStore, type Envelope, type MessageHandler, type RunnableModule, type RunningProcess } from '@sightline/kit';
import type { ApiRequest, ApiResponse, ClassifiedEventV1, ConversionCreatedV1, EventBatchV1, IdentityMergedV1, IngestWebsiteV1 } from '@sightline/proto-schemas';
import { createAttributionModule } from '../../../src/index';
import { gatewayQuery } from '@sightline/kit/testing/gateway-query';

export interface SeedSpec {
  seed: number;
  days: number;
  visitors: number;
  endDate: Date;
}

export interface LoadedSite {
  spec: SeedSpec;
  website: IngestWebsiteV1;
  /** Classified events in the order ingest published them. */
  events: ClassifiedEventV1[];
  conversions: ConversionCreatedV1[];
  merges: IdentityMergedV1[];
  startMs: number;
  endMs: number;
}

interface Captured {
  ids: Set<string>;
  events: Map<string, ClassifiedEventV1>;
  conversions: Map<string, ConversionCreatedV1>;
  merges: Map<string, IdentityMergedV1>;
}

const POLL_MS = 150;
const MAX_IN_FLIGHT = 24;
const SETTLE_TIMEOUT_MS = 120_000;

/** What ingest published, per workspace, each message kept once (delivery is at least once). */
class Capture {
  private readonly byWorkspace = new Map<string, Captured>();

  of(workspaceId: string): Captured {
    const found = this.byWorkspace.get(workspaceId);
    if (found) return found;
    const fresh: Captured = { ids: new Set(), events: new Map(), conversions: new Map(), merges: new Map() };
    this.byWorkspace.set(workspaceId, fresh);
    return fresh;
  }

  private keep(envelope: Envelope, store: (c: Captured) => void): void {
    const c = this.of(String(envelope.workspace_id));
    if (c.ids.has(envelope.id)) return;
    c.ids.add(envelope.id);
    store(c);
  }

  module() {
    return defineStandIn({
      name: 'differential-capture',
      needs: {},
      create: async () => ({
        consumers: {
          'events.classified': async (e: Envelope) => this.keep(e, (c) => { (e.payload as EventBatchV1).events.forEach((ev) => c.events.set(ev.event_id, ev)); }),
          'conversion.created': async (e: Envelope) => this.keep(e, (c) => c.conversions.set((e.payload as ConversionCreatedV1).conversion_id, e.payload as ConversionCreatedV1)),
          'identity.merged': async (e: Envelope) => this.keep(e, (c) => c.merges.set(e.id, e.payload as IdentityMergedV1)),
        },
      }),
    });
  }
}

/** Attribution's consumers, counted while they run: a message settles only once the read model is maintained. */
class Activity {
  inFlight = 0;

  wrap(module: RunnableModule): RunnableModule {
    return {
      ...module,
      create: async (ctx) => {
        const instance = await module.create(ctx);
        const consumers = instance.consumers as Record<string, MessageHandler> | undefined;
        if (!consumers) return instance;
        const counted = Object.fromEntries(Object.entries(consumers).map(([type, handler]): [string, MessageHandler] => [type, async (envelope) => {
          this.inFlight += 1;
          try {
            await handler(envelope);
          } finally {
            this.inFlight -= 1;
          }
        }]));
        return { ...instance, consumers: counted };
      },
    };
  }
}

export class DifferentialHarness {
  private constructor(
    private readonly proc: RunningProcess,
    private readonly ch: ClickHouseStore,
    private readonly capture: Capture,
    private readonly dataDir: string,
    private readonly activity: Activity,
  ) {}

  /** `env` picks the driver profile (empty: embedded; PostgreSQL, Redis and RabbitMQ URLs: distributed). */
  static async start(env: Record<string, string> = {}): Promise<DifferentialHarness> {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-differential-'));
    const [ingestEntry] = resolveTargets(['ingest']);
    if (!ingestEntry) throw new Error('the module registry has no ingest');
    const capture = new Capture();
    const activity = new Activity();
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off', SIGHTLINE_RPC_TIMEOUT_MS: '120000', ...env });
    const proc = await startModules({
      config,
      logger: createLogger({ level: 'silent' }),
      modules: [await ingestEntry.create(config, TARGET_NAMES), activity.wrap(createAttributionModule()), capture.module()],
    });
    return new DifferentialHarness(proc, await proc.stores.clickhouse('attribution'), capture, dataDir, activity);
  }

  /** Loads seeds two at a time: one settles in attribution while the next goes through ingest. */
  async loadAll(specs: readonly SeedSpec[], parallel = 2): Promise<LoadedSite[]> {
    const sites: LoadedSite[] = new Array(specs.length);
    let next = 0;
    const worker = async () => {
      while (next < specs.length) {
        const i = next++;
        sites[i] = await this.load(specs[i] as SeedSpec);
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return sites;
  }

  /** Generates a seed's workspace, sends every batch through ingest, and waits until attribution stored it all. */
  async load(spec: SeedSpec): Promise<LoadedSite> {
    const website: IngestWebsiteV1 = { id: randomUUID(), workspace_id: randomUUID(), domain: `seed-${spec.seed}.example`, timezone: 'UTC', currency: 'USD' };
    const ws = generateWorkspace({ seed: spec.seed, days: spec.days, visitors: spec.visitors, domain: website.domain, endDate: spec.endDate, currency: 'USD' });
    // Requests of one device go one after another, as its browser sends them (sessions depend on
    // the order hits arrive in); different devices overlap, so ingest groups their batches.
    let accepted = 0;
    const lastOfDevice = new Map<string, Promise<void>>();
    const inFlight = new Set<Promise<void>>();
    for (const batch of ws.batches()) {
      const device = batch.kind === 'collect' ? String(batch.body.aid) : `server:${randomUUID()}`;
      const previous = lastOfDevice.get(device) ?? Promise.resolve();
      // Await first, then add: `accepted += await ...` would read `accepted` before the await and lose concurrent counts.
      const sent: Promise<void> = previous.then(async () => {
        const n = await this.send(website, batch, spec.seed);
        accepted += n;
      });
      lastOfDevice.set(device, sent);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent)).catch(() => undefined);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(lastOfDevice.values());
    await this.settle(website, accepted);
    const c = this.capture.of(website.workspace_id);
    return {
      spec, website,
      events: [...c.events.values()],
      conversions: [...c.conversions.values()],
      merges: [...c.merges.values()],
      startMs: ws.options.start,
      endMs: ws.options.end,
    };
  }

  /** Sends one datagen request; resolves to the number of events ingest accepted. */
  private async send(website: IngestWebsiteV1, batch: IngestBatch, seed: number): Promise<number> {
    if (batch.kind === 'collect') {
      const reply = await this.proc.bus.rpc<{ accepted: number }>('ingest.collect', { website, ip: batch.ip, user_agent: batch.userAgent, body: batch.body }, { timeoutMs: 60_000 });
      return reply.accepted;
    }
    const request: ApiRequest<Record<string, unknown>, unknown> = {
      operation: 'postEvents', request_id: randomUUID(),
      workspace: { id: website.workspace_id, name: website.domain, timezone: website.timezone, currency: website.currency, plan: 'internal' },
      website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
      key: { id: 'differential', scopes: ['events:write'] }, params: {}, query: {}, body: batch.body, headers: {},
    };
    const reply = await this.proc.bus.rpc<ApiResponse<{ accepted: number; rejected: number }>>('ingest.postEvents', request, { timeoutMs: 60_000 });
    if (reply.body.rejected > 0) throw new Error(`ingest rejected events of seed ${seed}: ${JSON.stringify(reply.body)}`);
    return reply.body.accepted;
  }

  /**
   * Waits until ingest published every event it accepted (and a conversion for each conversion
   * event), and attribution stored what ingest published: as many distinct events, conversions and
   * merge edges, and a person root for every identity a merge touched, with no attribution consumer
   * still running (each maintains the read model before its message settles); then one more poll
   * to see nothing still moving (a merge's roots are written right after the merge edge).
   */
  private async settle(website: IngestWebsiteV1, accepted: number): Promise<void> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    let previous = '';
    for (;;) {
      const c = this.capture.of(website.workspace_id);
      const conversionEvents = [...c.events.values()].filter((e) => e.event_type === 'conversion' || e.event_type === 'purchase').length;
      if (c.events.size < accepted || c.conversions.size < conversionEvents) {
        if (Date.now() > deadline) throw new Error(`ingest published ${c.events.size} of the ${accepted} events of ${website.domain} it accepted`);
        await new Promise((r) => setTimeout(r, POLL_MS));
        continue;
      }
      const merged = [...new Set([...c.merges.values()].flatMap((m) => [m.from_identity_id, m.into_identity_id]))];
      const edges = new Set([...c.merges.values()].map((m) => `${m.from_identity_id}>${m.into_identity_id}`)).size;
      const [stored] = await this.ch.query<{ events: string; conversions: string; merges: string; roots: string }>(
        `SELECT
           (SELECT uniqExact(event_id) FROM touch_events WHERE website_id = {website:UUID}) AS events,
           (SELECT uniqExact(conversion_id) FROM conversions WHERE website_id = {website:UUID}) AS conversions,
           (SELECT uniqExact(from_identity_id, into_identity_id) FROM identity_merges WHERE workspace_id = {workspace:UUID}) AS merges,
           (SELECT uniqExact(identity_id) FROM identity_roots WHERE workspace_id = {workspace:UUID} AND identity_id IN {merged:Array(String)}) AS roots`,
        { website: website.id, workspace: website.workspace_id, merged },
      );
      const expected = { events: c.events.size, conversions: c.conversions.size, merges: edges, roots: merged.length };
      const got = { events: Number(stored?.events), conversions: Number(stored?.conversions), merges: Number(stored?.merges), roots: Number(stored?.roots) };
      const fingerprint = JSON.stringify(got);
      if (fingerprint === JSON.stringify(expected) && fingerprint === previous && this.activity.inFlight === 0) return;
      previous = fingerprint;
      if (Date.now() > deadline) throw new Error(`attribution did not settle for ${website.domain}: stored ${fingerprint}, published ${JSON.stringify(expected)}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** Calls an attribution read as the gateway would after validating `GET <path>?<raw>`. */
  async call<B>(method: string, path: string, site: LoadedSite, raw: Record<string, string>): Promise<ApiResponse<B>> {
    const request: ApiRequest = {
      operation: method.split('.')[1] as string,
      request_id: randomUUID(),
      workspace: { id: site.website.workspace_id, name: site.website.domain, timezone: site.website.timezone, currency: site.website.currency, plan: 'internal' },
      website: { id: site.website.id, domain: site.website.domain, timezone: site.website.timezone, currency: site.website.currency },
      key: { id: 'differential', scopes: ['analytics:read', 'conversions:read'] },
      params: {},
      query: gatewayQuery(path, raw),
      body: null,
      headers: {},
    };
    return this.proc.bus.rpc<ApiResponse<B>>(method, request, { timeoutMs: 120_000 });
  }

  async deadLetters(): Promise<number> {
    const lost = await Promise.all(['ingest', 'attribution', 'differential-capture'].map((s) => this.proc.bus.takeDeadLetters(s, 100)));
    return lost.flat().length;
  }

  async stop(): Promise<void> {
    await this.proc.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
