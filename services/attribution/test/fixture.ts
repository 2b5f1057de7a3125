// Test fixture shared by the attribution suites: the module's consumers and RPC handlers over a
// fresh embedded chDB with the real migrations, and builders for the messages it consumes.
// Handlers are called directly (no bus), so a test's deliveries are stored (and the read model
// maintained) when the call returns; the conversion.attributed messages it publishes are recorded.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, runClickHouseMigrations, type ClickHouseStore, type Envelope, type MessageHandler } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type ApiRequest, type ApiResponse, type ClassifiedEventV1, type ConversionCreatedV1, type EventBatchV1 } from '@sightline/proto-schemas';
import { attributionHandlers, type AttributedMessage, type AttributionHandlers, type ReadModel } from '../src/index';

export const EXAMPLE_BATCH = MESSAGE_EXAMPLES['events.classified'];
export const BASE_EVENT = EXAMPLE_BATCH.events[0] as ClassifiedEventV1;
export const BASE_CONVERSION = MESSAGE_EXAMPLES['conversion.created'];
export type FixtureWebsite = EventBatchV1['website'];

/** A website of its own per call, so suites sharing a store never see each other's rows. */
export function newWebsite(o: Partial<FixtureWebsite> = {}): FixtureWebsite {
  return { ...EXAMPLE_BATCH.website, id: randomUUID(), workspace_id: randomUUID(), domain: `site-${randomUUID().slice(0, 8)}.example`, timezone: 'UTC', currency: 'EUR', ...o };
}

export interface AttributionFixture {
  ch: ClickHouseStore;
  /** The read model the consumers maintain (rebuilds go through it). */
  readModel: ReadModel;
  /** conversion.attributed messages published so far, in order. */
  published: AttributedMessage[];
  /** The module's handler maps (typed by the catalog). */
  handlers: AttributionHandlers;
  /**
   * Runs the consumer of `type` on one envelope carrying `payload` (envelope source `test` unless
   * given; a fresh id unless given: the same id is a redelivery).
   */
  deliver(type: string, payload: unknown, website: FixtureWebsite, source?: string, id?: string): Promise<void>;
  /** Calls an RPC method (`attribution.getMetrics`, ...) as the gateway would. */
  call<B = Record<string, unknown>>(method: string, website: FixtureWebsite, query?: Record<string, unknown>, params?: Record<string, string>): Promise<ApiResponse<B>>;
  close(): Promise<void>;
}

export async function openFixture(): Promise<AttributionFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-attribution-'));
  const provider = createStoreProvider({ dataDir: dir, logger: createLogger({ level: 'silent' }) });
  const ch = await provider.clickhouse('attribution');
  await runClickHouseMigrations(ch, join(__dirname, '..', 'migrations', 'clickhouse'));
  const published: AttributedMessage[] = [];
  const handlers = attributionHandlers(ch, async (messages) => void published.push(...messages));
  const { consumers, rpc, readModel } = handlers;
  return {
    ch,
    readModel,
    published,
    handlers,
    async deliver(type, payload, website, source = 'test', id = randomUUID()) {
      // Dispatch by name, as the runner does: the test names the type at run time.
      const handler = (consumers as unknown as Record<string, MessageHandler>)[type];
      if (!handler) throw new Error(`attribution does not consume ${type}`);
      const envelope: Envelope = { id, type, version: 1, occurred_at: new Date().toISOString(), workspace_id: website.workspace_id, website_id: website.id, source, payload };
      await handler(envelope);
    },
    async call<B>(method: string, website: FixtureWebsite, query: Record<string, unknown> = {}, params: Record<string, string> = {}) {
      const handler = (rpc as unknown as Record<string, (request: ApiRequest) => Promise<ApiResponse<unknown>>>)[method];
      if (!handler) throw new Error(`attribution does not answer ${method}`);
      const request: ApiRequest = {
        operation: method.split('.')[1] as string,
        request_id: 'test',
        workspace: { id: website.workspace_id, name: 'Acme', timezone: website.timezone, currency: website.currency, plan: 'pro' },
        website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
        key: { id: 'k', scopes: ['analytics:read', 'conversions:read'] },
        params,
        query,
        body: null,
        headers: {},
      };
      return (await handler(request)) as ApiResponse<B>;
    },
    async close() {
      await provider.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HitInput {
  identity: string;
  session: string;
  /** Session start (ISO). */
  startedAt: string;
  /** Minutes after the session start; default 0. */
  minutes?: number;
  anon?: string;
  type?: string;
  name?: string | null;
  page?: string;
  channel?: string;
  source?: string | null;
  medium?: string | null;
  campaign?: string | null;
  clickIds?: Record<string, string>;
  country?: string | null;
  deviceType?: string | null;
  revenue?: number | null;
}

/** A classified tracker hit of one session, built on the catalog example. */
export function hit(o: HitInput): ClassifiedEventV1 {
  const occurredAt = new Date(Date.parse(o.startedAt) + (o.minutes ?? 0) * 60_000).toISOString();
  const base = BASE_EVENT.session as NonNullable<ClassifiedEventV1['session']>;
  const source = o.source === undefined ? base.source : o.source;
  const medium = o.medium === undefined ? base.medium : o.medium;
  const campaign = o.campaign === undefined ? base.campaign : o.campaign;
  const clickIds = o.clickIds ?? {};
  return {
    ...BASE_EVENT,
    event_id: randomUUID(),
    event_type: o.type ?? 'pageview',
    event_name: o.name ?? null,
    occurred_at: occurredAt,
    received_at: occurredAt,
    anonymous_id: o.anon ?? o.identity,
    identity_id: o.identity,
    session_id: o.session,
    page: o.page ?? '/pricing',
    country: o.country === undefined ? BASE_EVENT.country : o.country,
    device_type: o.deviceType === undefined ? BASE_EVENT.device_type : o.deviceType,
    revenue: o.revenue ?? null,
    channel: o.channel ?? base.channel,
    source, medium, campaign,
    click_ids: clickIds,
    session: { ...base, started_at: o.startedAt, channel: o.channel ?? base.channel, source, medium, campaign, click_ids: clickIds },
  };
}

export function batch(website: FixtureWebsite, events: ClassifiedEventV1[]): EventBatchV1 {
  return { batch_id: randomUUID(), website, events };
}

export function conversion(website: FixtureWebsite, o: Partial<ConversionCreatedV1> = {}): ConversionCreatedV1 {
  return { ...BASE_CONVERSION, conversion_id: randomUUID(), website_id: website.id, workspace_id: website.workspace_id, ...o };
}
