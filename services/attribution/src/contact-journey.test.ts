import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, runClickHouseMigrations, type ClickHouseStore, type Envelope, type MessageHandler } from '@sightline/kit';
import {
  MESSAGE_EXAMPLES,
  type ApiRequest,
  type ClassifiedEventV1,
  type ConversionCreatedV1,
  type EventBatchV1,
  type IdentityMergedV1,
} from '@sightline/proto-schemas';
import { attributionConsumers } from './core.consumers';
import { ConversionsRepo } from './conversions.repo';
import { IdentityMergesRepo } from './identity-merges.repo';
import { journeyRpcHandlers, type ContactJourneyBody, type JourneyQuery } from './journeys.rpc';
import { OutcomesRepo } from './outcomes.repo';
import { ReadModel } from './read-model/read-model';
import { TouchesRepo } from './touches.repo';

const EXAMPLE_BATCH = MESSAGE_EXAMPLES['events.classified'];
const BASE_EVENT = EXAMPLE_BATCH.events[0] as ClassifiedEventV1;
const BASE_CONVERSION = MESSAGE_EXAMPLES['conversion.created'];
const WEBSITE = EXAMPLE_BATCH.website;
const OTHER_WEBSITE = { ...WEBSITE, id: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b', domain: 'other.com' };
const CONVERTED_AT = '2026-03-05T09:00:00.000Z';
const DAY = 86_400_000;

const at = (daysBefore: number, minutes = 0): string => new Date(Date.parse(CONVERTED_AT) - daysBefore * DAY + minutes * 60_000).toISOString();

/** A tracker hit of one visitor's session, built on the catalog example. */
function hit(o: { identity: string; anon: string; session: string; startedAt: string; minutes?: number; type?: string; page?: string; channel?: string }): ClassifiedEventV1 {
  const occurredAt = new Date(Date.parse(o.startedAt) + (o.minutes ?? 0) * 60_000).toISOString();
  const channel = o.channel ?? 'Paid Search';
  return {
    ...BASE_EVENT,
    event_id: randomUUID(),
    event_type: o.type ?? 'pageview',
    occurred_at: occurredAt,
    received_at: occurredAt,
    anonymous_id: o.anon,
    identity_id: o.identity,
    session_id: o.session,
    page: o.page ?? '/pricing',
    session: { ...(BASE_EVENT.session as NonNullable<ClassifiedEventV1['session']>), started_at: o.startedAt, channel },
  };
}

function envelope<P>(type: string, payload: P, website = WEBSITE, id: string = randomUUID()): Envelope {
  return { id, type, version: 1, occurred_at: new Date().toISOString(), workspace_id: website.workspace_id, website_id: website.id, source: 'test', payload };
}

const batch = (events: ClassifiedEventV1[], website = WEBSITE): EventBatchV1 => ({ batch_id: randomUUID(), website, events });

function conversion(o: Partial<ConversionCreatedV1> = {}): ConversionCreatedV1 {
  return { ...BASE_CONVERSION, conversion_id: randomUUID(), occurred_at: CONVERTED_AT, ...o };
}

function request(id: string, query: JourneyQuery = {}, website = WEBSITE): ApiRequest<JourneyQuery> {
  return {
    operation: 'getContactJourney',
    request_id: 'test',
    workspace: { id: website.workspace_id, name: 'Acme', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'pro' },
    website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
    key: { id: 'k', scopes: ['conversions:read'] },
    params: { id },
    query,
    body: null,
    headers: {},
  };
}

describe('attribution: contact journey (chDB)', () => {
  let dir: string;
  let ch: ClickHouseStore;
  let close: () => Promise<void>;
  let consume: Record<string, MessageHandler>;
  let rpc: ReturnType<typeof journeyRpcHandlers>;
  let outcomes: OutcomesRepo;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-attribution-'));
    const provider = createStoreProvider({ dataDir: dir, logger: createLogger({ level: 'silent' }) });
    ch = await provider.clickhouse('attribution');
    await runClickHouseMigrations(ch, join(__dirname, '..', 'migrations', 'clickhouse'));
    close = () => provider.close();
    outcomes = new OutcomesRepo(ch);
    const readModel = new ReadModel(ch, async () => undefined);
    const deps = { touches: new TouchesRepo(ch), conversions: new ConversionsRepo(ch), merges: new IdentityMergesRepo(ch), outcomes, readModel };
    // Dispatched by name, as the runner does: the test names the type at run time.
    consume = attributionConsumers(deps) as unknown as Record<string, MessageHandler>;
    rpc = journeyRpcHandlers(deps);
  }, 60_000);
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (type: string, payload: unknown, id?: string, website = WEBSITE): Promise<void> =>
    (consume[type] as MessageHandler)(envelope(type, payload, website, id));
  const journey = async (id: string, query: JourneyQuery = {}, website = WEBSITE): Promise<ContactJourneyBody> => {
    const reply = await rpc['attribution.getContactJourney'](request(id, query, website));
    expect(reply.status).toBe(200);
    return reply.body;
  };

  it('answers the sessions of the converting person, oldest first, with their events', async () => {
    const identity = randomUUID();
    const anon = randomUUID();
    const s1 = randomUUID();
    const s2 = randomUUID();
    await deliver('events.classified', batch([
      hit({ identity, anon, session: s1, startedAt: at(3), page: '/' }),
      hit({ identity, anon, session: s1, startedAt: at(3), minutes: 5, page: '/pricing' }),
      hit({ identity, anon, session: s1, startedAt: at(3), minutes: 6, type: 'form_submit', page: '/pricing' }),
      hit({ identity, anon, session: s2, startedAt: at(1), channel: 'Organic Search' }),
    ]));
    const c = conversion({ identity_id: identity, anonymous_id: anon });
    await deliver('conversion.created', c);

    const body = await journey(c.conversion_id);
    expect(body.synthetic).toBe(false);
    expect(body.contact_id).toBe(c.conversion_id);
    expect(body.identity_id).toBe(identity);
    expect(body.data.map((s) => s.session_id)).toEqual([s1, s2]);
    const first = body.data[0]!;
    expect(first).toMatchObject({
      started_at: at(3),
      ended_at: at(3, 6),
      channel: 'Paid Search',
      source: 'google',
      medium: 'cpc',
      landing_page: '/pricing',
      referrer_domain: 'google.com',
      device_type: 'desktop',
      country: 'DE',
      click_ids: { gclid: 'abc' },
      pageviews: 2,
      event_count: 3,
      anonymous_id: anon,
      identity_id: identity,
    });
    expect(first.events.map((e) => [e.event_type, e.page])).toEqual([['pageview', '/'], ['pageview', '/pricing'], ['form_submit', '/pricing']]);
    expect(body.data[1]!.channel).toBe('Organic Search');
    expect(body.conversions).toEqual([
      { conversion_id: c.conversion_id, occurred_at: CONVERTED_AT, event_type: 'purchase', event_name: 'order_completed', revenue: 129.5, currency: 'EUR' },
    ]);
    expect(body.meta).toMatchObject({
      website_id: WEBSITE.id,
      website: WEBSITE.domain,
      timezone: WEBSITE.timezone,
      currency: WEBSITE.currency,
      window: { from: new Date(Date.parse(CONVERTED_AT) - 365 * DAY).toISOString(), to: '2026-03-05T09:00:00.001Z', expression: null },
      row_count: 2,
      truncated: false,
    });
    expect(body.meta.note).toBeUndefined();
  });

  it('a redelivered events.classified message adds no session and no event', async () => {
    const identity = randomUUID();
    const anon = randomUUID();
    const session = randomUUID();
    const events = [
      hit({ identity, anon, session, startedAt: at(2) }),
      hit({ identity, anon, session, startedAt: at(2), minutes: 1, page: '/signup' }),
    ];
    const payload = batch(events);
    const messageId = randomUUID();
    await deliver('events.classified', payload, messageId);
    await deliver('events.classified', payload, messageId);
    // Past the deduplication window (a new message id carrying the same events): still exact.
    await deliver('events.classified', payload);
    const c = conversion({ identity_id: identity, anonymous_id: anon });
    await deliver('conversion.created', c);
    await deliver('conversion.created', c);

    const body = await journey(c.conversion_id);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ session_id: session, pageviews: 2, event_count: 2 });
    expect(body.data[0]!.events.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    expect(body.conversions).toHaveLength(1);
  });

  it('an identity merge brings a second device into the journey', async () => {
    const phone = randomUUID();
    const laptop = randomUUID();
    const phoneSession = randomUUID();
    const laptopSession = randomUUID();
    await deliver('events.classified', batch([hit({ identity: phone, anon: randomUUID(), session: phoneSession, startedAt: at(20), channel: 'Organic Social' })]));
    await deliver('events.classified', batch([hit({ identity: laptop, anon: randomUUID(), session: laptopSession, startedAt: at(2) })]));
    const c = conversion({ identity_id: laptop });
    await deliver('conversion.created', c);

    expect((await journey(c.conversion_id)).data.map((s) => s.session_id)).toEqual([laptopSession]);

    const merge: IdentityMergedV1 = { workspace_id: WEBSITE.workspace_id, from_identity_id: laptop, into_identity_id: phone };
    const id = randomUUID();
    await deliver('identity.merged', merge, id);
    await deliver('identity.merged', merge, id);
    const body = await journey(c.conversion_id);
    expect(body.identity_id).toBe(phone);
    expect(body.data.map((s) => [s.session_id, s.channel, s.identity_id])).toEqual([
      [phoneSession, 'Organic Social', phone],
      [laptopSession, 'Paid Search', phone],
    ]);
  });

  it('follows merge chains in both directions', async () => {
    const [a, b, c3] = [randomUUID(), randomUUID(), randomUUID()];
    const sessions = [randomUUID(), randomUUID(), randomUUID()];
    await deliver('events.classified', batch([
      hit({ identity: a, anon: randomUUID(), session: sessions[0]!, startedAt: at(9) }),
      hit({ identity: b, anon: randomUUID(), session: sessions[1]!, startedAt: at(8) }),
      hit({ identity: c3, anon: randomUUID(), session: sessions[2]!, startedAt: at(7) }),
    ]));
    await deliver('identity.merged', { workspace_id: WEBSITE.workspace_id, from_identity_id: a, into_identity_id: b });
    await deliver('identity.merged', { workspace_id: WEBSITE.workspace_id, from_identity_id: b, into_identity_id: c3 });
    const conv = conversion({ identity_id: a });
    await deliver('conversion.created', conv);
    const body = await journey(conv.conversion_id);
    expect(body.identity_id).toBe(c3);
    expect(body.data.map((s) => s.session_id)).toEqual(sessions);
  });

  it('answers a synthetic, empty timeline for a conversion without identity', async () => {
    const c = conversion({ identity_id: null, anonymous_id: null });
    await deliver('conversion.created', c);
    const body = await journey(c.conversion_id);
    expect(body.synthetic).toBe(true);
    expect(body.identity_id).toBeNull();
    expect(body.data).toEqual([]);
    expect(body.conversions.map((x) => x.conversion_id)).toEqual([c.conversion_id]);
    expect(body.meta.note).toMatch(/not a complete history/);
    expect(body.meta.row_count).toBe(0);
  });

  it('answers a synthetic timeline for an identity without sessions, rebuilt from stored touches', async () => {
    const identity = randomUUID();
    const c = conversion({ identity_id: identity });
    await new ConversionsRepo(ch).insert(randomUUID(), c, {
      first: { at: at(30), channel: 'Paid Social', source: 'facebook', medium: 'paid', campaign: 'spring' },
      last: { at: at(1), channel: 'Email', source: 'newsletter', medium: 'email' },
    });
    const body = await journey(c.conversion_id);
    expect(body.synthetic).toBe(true);
    expect(body.identity_id).toBe(identity);
    expect(body.data.map((s) => [s.touch, s.channel, s.started_at, s.session_id, s.events])).toEqual([
      ['first', 'Paid Social', at(30), null, []],
      ['last', 'Email', at(1), null, []],
    ]);
    expect(body.meta.note).toMatch(/not a complete history/);
  });

  it('is 404 not-found for an unknown id and for a conversion of another website', async () => {
    await expect(rpc['attribution.getContactJourney'](request(randomUUID()))).rejects.toMatchObject({ kind: 'not-found', status: 404 });
    const elsewhere = conversion({ website_id: OTHER_WEBSITE.id });
    await deliver('conversion.created', elsewhere, undefined, OTHER_WEBSITE);
    await expect(rpc['attribution.getContactJourney'](request(elsewhere.conversion_id))).rejects.toMatchObject({ kind: 'not-found' });
    expect((await journey(elsewhere.conversion_id, {}, OTHER_WEBSITE)).contact_id).toBe(elsewhere.conversion_id);
  });

  it('never shows sessions of the same person on another website', async () => {
    const identity = randomUUID();
    const here = randomUUID();
    await deliver('events.classified', batch([hit({ identity, anon: randomUUID(), session: here, startedAt: at(1) })]));
    await deliver('events.classified', batch([hit({ identity, anon: randomUUID(), session: randomUUID(), startedAt: at(2) })], OTHER_WEBSITE), undefined, OTHER_WEBSITE);
    const c = conversion({ identity_id: identity });
    await deliver('conversion.created', c);
    expect((await journey(c.conversion_id)).data.map((s) => s.session_id)).toEqual([here]);
  });

  it('days bounds the window before the conversion; later sessions are left out', async () => {
    const identity = randomUUID();
    const [old, recent, after] = [randomUUID(), randomUUID(), randomUUID()];
    await deliver('events.classified', batch([
      hit({ identity, anon: randomUUID(), session: old, startedAt: at(40) }),
      hit({ identity, anon: randomUUID(), session: recent, startedAt: at(10) }),
      hit({ identity, anon: randomUUID(), session: after, startedAt: at(-1) }),
    ]));
    const c = conversion({ identity_id: identity });
    await deliver('conversion.created', c);
    expect((await journey(c.conversion_id)).data.map((s) => s.session_id)).toEqual([old, recent]);
    const body = await journey(c.conversion_id, { days: 30 });
    expect(body.data.map((s) => s.session_id)).toEqual([recent]);
    expect(body.meta.window.from).toBe(at(30));
  });

  it('limit keeps the sessions nearest the conversion and says the answer is truncated', async () => {
    const identity = randomUUID();
    const sessions = [randomUUID(), randomUUID(), randomUUID()];
    await deliver('events.classified', batch(sessions.map((session, i) => hit({ identity, anon: randomUUID(), session, startedAt: at(5 - i) }))));
    const c = conversion({ identity_id: identity });
    await deliver('conversion.created', c);
    const body = await journey(c.conversion_id, { limit: 2 });
    expect(body.data.map((s) => s.session_id)).toEqual(sessions.slice(1));
    expect(body.meta).toMatchObject({ row_count: 2, truncated: true });
  });

  it('records outcome values written back, the latest change winning, once per delivery', async () => {
    const example = MESSAGE_EXAMPLES['conversion.value_changed'];
    const conversion = randomUUID();
    const first = { ...example, conversion_id: conversion, website_id: WEBSITE.id, sales_value: 100, changed_at: '2026-03-01T10:00:00.000Z' };
    const second = { ...first, sales_value: 250, changed_at: '2026-03-02T10:00:00.000Z' };
    expect(await outcomes.latest(WEBSITE.id, conversion)).toBeNull();
    await deliver('conversion.value_changed', second, 'outcome-2');
    await deliver('conversion.value_changed', first, 'outcome-1');
    await deliver('conversion.value_changed', second, 'outcome-2');
    expect(await outcomes.latest(WEBSITE.id, conversion)).toMatchObject({ sales_value: 250 });
  });
});
