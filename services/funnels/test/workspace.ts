// Generated workspaces for the differential suite: datagen's browsing and server-side events go
// through ingest (one process, embedded stores) exactly as the gateway forwards them, its revenue
// milestones go on the bus as crm-sync publishes them, and a few server-side events are added at the
// very millisecond of an existing page view (events sharing a timestamp). A capture stand-in keeps
// what ingest published: the oracle's input.
import { randomUUID } from 'node:crypto';
import { resolveTargets, TARGET_NAMES } from '@sightline/cli';
import { generateWorkspace, type IngestBatch } from '@sightline/datagen';
import { defineStandIn, type Envelope, type RunnableModule } from '@sightline/kit';
import { REVENUE_EVENTS, type ApiRequest, type ApiResponse, type ClassifiedEventV1, type EventBatchV1, type IngestWebsiteV1, type MilestoneReachedV1 } from '@sightline/proto-schemas';
import { FunnelsHarness } from './harness';
import { People } from './oracle/identity';
import type { OracleEvent, OracleRevenueFact } from './oracle/types';
import type { OracleInput } from './oracle/funnel';

export interface SeedSpec {
  seed: number;
  days: number;
  visitors: number;
}

export interface LoadedSite {
  spec: SeedSpec;
  website: IngestWebsiteV1;
  startMs: number;
  endMs: number;
  events: ClassifiedEventV1[];
  milestones: MilestoneReachedV1[];
  oracle: OracleInput;
}

const END = new Date('2025-03-01T00:00:00.000Z');
const MAX_IN_FLIGHT = 16;

/** What ingest published, per website, each event once. */
class Capture {
  readonly events = new Map<string, Map<string, ClassifiedEventV1>>();

  of(websiteId: string): Map<string, ClassifiedEventV1> {
    return this.events.get(websiteId) ?? this.events.set(websiteId, new Map()).get(websiteId)!;
  }

  module(): RunnableModule {
    return defineStandIn({
      name: 'funnels-capture',
      needs: {},
      create: async () => ({
        consumers: {
          'events.classified': async (e: Envelope) => {
            const batch = e.payload as EventBatchV1;
            const mine = this.of(batch.website.id);
            for (const ev of batch.events) mine.set(ev.event_id, ev);
          },
        },
      }),
    });
  }
}

export class WorkspaceLoader {
  private constructor(readonly harness: FunnelsHarness, private readonly capture: Capture) {}

  static async start(): Promise<WorkspaceLoader> {
    const capture = new Capture();
    const harness = await FunnelsHarness.start({
      modules: async (config) => {
        const [ingest] = resolveTargets(['ingest']);
        if (!ingest) throw new Error('the module registry has no ingest');
        return [await ingest.create(config, TARGET_NAMES), capture.module()];
      },
    });
    return new WorkspaceLoader(harness, capture);
  }

  async loadAll(specs: readonly SeedSpec[], parallel = 2): Promise<LoadedSite[]> {
    const out: LoadedSite[] = new Array(specs.length);
    let next = 0;
    await Promise.all(Array.from({ length: parallel }, async () => {
      while (next < specs.length) {
        const i = next++;
        out[i] = await this.load(specs[i] as SeedSpec);
      }
    }));
    return out;
  }

  async load(spec: SeedSpec): Promise<LoadedSite> {
    const website: IngestWebsiteV1 = { id: randomUUID(), workspace_id: randomUUID(), domain: `seed-${spec.seed}.example`, timezone: 'UTC', currency: 'USD' };
    const ws = generateWorkspace({ seed: spec.seed, days: spec.days, visitors: spec.visitors, domain: website.domain, endDate: END, currency: 'USD' });
    let accepted = 0;
    // One device's requests go in order (sessions depend on it); devices overlap.
    const lastOfDevice = new Map<string, Promise<void>>();
    const inFlight = new Set<Promise<void>>();
    for (const batch of ws.batches()) {
      const device = batch.kind === 'collect' ? String(batch.body.aid) : `server:${randomUUID()}`;
      const sent: Promise<void> = (lastOfDevice.get(device) ?? Promise.resolve()).then(async () => {
        const n = await this.send(website, batch);
        accepted += n;
      });
      lastOfDevice.set(device, sent);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent)).catch(() => undefined);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(lastOfDevice.values());
    await this.settle(website, accepted);

    // Two server-side events at the very millisecond of every seventh page view of a known visitor.
    const pageviews = [...this.capture.of(website.id).values()].filter((e) => e.event_type === 'pageview' && e.anonymous_id).sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
    const ties = pageviews.filter((_, i) => i % 7 === 0).flatMap((e) => ['tie_a', 'tie_b'].map((name) => ({ event_type: 'custom', event_name: name, anonymous_id: e.anonymous_id as string, occurred_at: e.occurred_at })));
    for (let i = 0; i < ties.length; i += 200) accepted += await this.send(website, { kind: 'events', body: { events: ties.slice(i, i + 200) } } as unknown as IngestBatch);
    await this.settle(website, accepted);

    const milestones: MilestoneReachedV1[] = [...ws.milestones()]
      .filter((m) => (REVENUE_EVENTS as readonly string[]).includes(m.stage))
      .map((m, i) => ({ milestone_id: `seed-${spec.seed}:${i}`, website_id: website.id, workspace_id: website.workspace_id, stage: m.stage, occurred_at: m.occurred_at, identity_id: null, email: m.email, amount: m.amount ?? null, currency: m.currency ?? null }));
    if (milestones.length > 0) await this.harness.milestones(website, milestones);

    const events = [...this.capture.of(website.id).values()];
    return { spec, website, startMs: ws.options.start, endMs: ws.options.end, events, milestones, oracle: oracleInput(events, milestones) };
  }

  private async send(website: IngestWebsiteV1, batch: IngestBatch): Promise<number> {
    const bus = this.harness.proc.bus;
    if (batch.kind === 'collect') {
      return (await bus.rpc<{ accepted: number }>('ingest.collect', { website, ip: batch.ip, user_agent: batch.userAgent, body: batch.body }, { timeoutMs: 60_000 })).accepted;
    }
    const request: ApiRequest = {
      operation: 'postEvents', request_id: randomUUID(),
      workspace: { id: website.workspace_id, name: website.domain, timezone: website.timezone, currency: website.currency, plan: 'internal' },
      website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
      key: { id: 'differential', scopes: ['events:write'] }, params: {}, query: {}, body: batch.body, headers: {},
    };
    const reply = await bus.rpc<ApiResponse<{ accepted: number; rejected: number }>>('ingest.postEvents', request, { timeoutMs: 60_000 });
    if (reply.body.rejected > 0) throw new Error(`ingest rejected events: ${JSON.stringify(reply.body)}`);
    return reply.body.accepted;
  }

  /** Waits until ingest published every accepted event and the projection holds every one that names a person. */
  private async settle(website: IngestWebsiteV1, accepted: number): Promise<void> {
    await this.harness.until(`ingest to publish ${accepted} events of ${website.domain}`, async () => this.capture.of(website.id).size >= accepted, 120_000);
    const expected = [...this.capture.of(website.id).values()].filter((e) => e.identity_id).length;
    await this.harness.until(`the projection to hold ${expected} events`, async () => {
      const [row] = await this.harness.ch.query<{ n: string }>('SELECT uniqExact(event_id) AS n FROM identity_events WHERE website_id = {w:UUID}', { w: website.id });
      return Number(row?.n) >= expected;
    }, 120_000);
  }

  async stop(): Promise<void> {
    await this.harness.stop();
  }
}

/** The oracle's view: people by union-find over anonymous id, email and phone; revenue facts by email. */
export function oracleInput(published: readonly ClassifiedEventV1[], milestones: readonly MilestoneReachedV1[]): OracleInput {
  const people = new People();
  const keysOf = (e: ClassifiedEventV1) => [e.anonymous_id ? `anon:${e.anonymous_id}` : '', e.email ? `email:${e.email}` : '', e.phone ? `phone:${e.phone}` : ''];
  for (const e of published) people.link(keysOf(e));
  const events: OracleEvent[] = [];
  const identified = new Set<string>();
  for (const e of published) {
    const key = keysOf(e).find((k) => k !== '');
    if (!key) continue;
    const person = people.personOf(key);
    if (e.email || e.phone) identified.add(person);
    const text = typeof e.properties['text'] === 'string' ? (e.properties['text'] as string).trim() : '';
    const s = e.session;
    const sessionAttrs: Record<string, string> = s ? {
      channel: s.channel, source: s.source ?? '', medium: s.medium ?? '', campaign: s.campaign ?? '', utm_term: s.term ?? '', utm_content: s.content ?? '',
      referrer_domain: s.referrer_domain ?? '', landing_page: s.landing_page ?? '',
    } : {};
    events.push({
      id: e.event_id, person, ts: Date.parse(e.occurred_at), type: e.event_type, name: e.event_name, page: e.page, url: e.url, text: text === '' ? null : text,
      attrs: {
        channel: s ? s.channel : e.channel, source: (s ? s.source : e.source) ?? '', country: e.country ?? '', device_type: e.device_type ?? '', browser: e.browser ?? '',
        operating_system: e.operating_system ?? '', region: e.region ?? '', city: e.city ?? '', page: e.page ?? '', event_name: e.event_name ?? '', event_type: e.event_type,
      },
      session: s && e.session_id ? { id: e.session_id, startedAt: Date.parse(s.started_at), attrs: sessionAttrs } : null,
    });
  }
  const facts = new Map<string, OracleRevenueFact>();
  for (const m of milestones) {
    const key = m.identity_id ? `id:${m.identity_id}` : m.email ? `email:${m.email.trim().toLowerCase()}` : '';
    if (!key || !people.has(key)) continue;
    const person = people.personOf(key);
    identified.add(person);
    const ts = Date.parse(m.occurred_at);
    const seen = facts.get(m.milestone_id);
    if (!seen || ts < seen.ts) facts.set(m.milestone_id, { id: m.milestone_id, person, ts, stage: m.stage });
  }
  return { events, facts: [...facts.values()], identified };
}
