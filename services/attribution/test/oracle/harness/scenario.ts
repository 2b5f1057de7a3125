// Small attribution scenarios for the property tests: people with one or two devices, sessions
// spread over 200 days (so the 90-day lookback matters), and conversions placed relative to a
// session (at it, exactly 90 days after it, just past that, anywhere after, or before it), some
// imported or with a known relationship start. One scenario becomes both the messages attribution
// consumes (fixture builders) and the oracle's input.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ClassifiedEventV1, ConversionCreatedV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import { BASE_EVENT, batch, conversion, hit, newWebsite, type AttributionFixture, type FixtureWebsite } from '../../fixture';
import { DAY_MS, type OracleEvent } from '../types';

export const SCENARIO_START_MS = Date.parse('2025-01-01T00:00:00.000Z');
/** Sessions start on 3-hour slots, so sessions of one device never run into each other. */
const SLOT_MS = 3 * 3_600_000;
const SLOTS = 200 * 8;

const CHANNELS = ['Direct', 'Organic Search', 'Paid Search', 'Email'] as const;
const CAMPAIGNS = [null, 'spring', 'brand'] as const;

export interface ScenarioSession {
  person: number;
  device: number;
  slot: number;
  hits: number;
  channel: (typeof CHANNELS)[number];
  campaign: (typeof CAMPAIGNS)[number];
}

export interface ScenarioConversion {
  person: number;
  /** device: anonymous id and email; email: email only; none: no identity at all. */
  identity: 'device' | 'email' | 'none';
  device: number;
  /** Index of the session it is placed after (mod the number of sessions), or a free slot. */
  anchor: number;
  offsetMs: number;
  type: 'conversion' | 'purchase';
  revenue: number | null;
  /** import: brought in from a system of record (no classified event, never browsed through ingest). */
  origin: 'api' | 'import';
  /** Days before the conversion the customer relationship began, when a system of record says so. */
  relationshipDays: number | null;
}

export interface Scenario {
  devicesPerPerson: number[];
  sessions: ScenarioSession[];
  conversions: ScenarioConversion[];
}

/** Often one of the first few slots, so sessions of two devices of one person start at the same instant. */
const slotArb = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: SLOTS - 1 }));

const offsetArb = fc.oneof(
  fc.constant(0),
  fc.constant(90 * DAY_MS),
  fc.constant(90 * DAY_MS + 60_000),
  fc.integer({ min: 1, max: 120 * 24 * 60 }).map((minutes) => minutes * 60_000),
  // Before its session: possibly before the website's first tracked session (predates_tracking).
  fc.integer({ min: 1, max: 30 * 24 * 60 }).map((minutes) => -minutes * 60_000),
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  devicesPerPerson: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 4 }),
  sessions: fc.array(
    fc.record({
      person: fc.nat(), device: fc.nat(), slot: slotArb, hits: fc.integer({ min: 1, max: 3 }),
      channel: fc.constantFrom(...CHANNELS), campaign: fc.constantFrom(...CAMPAIGNS),
    }),
    { maxLength: 14 },
  ),
  conversions: fc.array(
    fc.record({
      person: fc.nat(), identity: fc.constantFrom('device', 'device', 'email', 'none'), device: fc.nat(), anchor: fc.nat(), offsetMs: offsetArb,
      type: fc.constantFrom('conversion', 'purchase'), revenue: fc.option(fc.integer({ min: 1, max: 100_000 }).map((cents) => cents / 100)),
      origin: fc.constantFrom('api', 'api', 'api', 'import'), relationshipDays: fc.option(fc.integer({ min: 0, max: 400 }), { freq: 4 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
});

/**
 * One person with two devices whose sessions start on the same two instants: journeys where
 * touches tie on start time, which journeys order by session id.
 */
export const tiedScenarioArb: fc.Arbitrary<Scenario> = fc.record({
  devicesPerPerson: fc.constant([2]),
  sessions: fc.array(
    fc.record({
      person: fc.constant(0), device: fc.integer({ min: 0, max: 1 }), slot: fc.integer({ min: 0, max: 1 }), hits: fc.constant(1),
      channel: fc.constantFrom(...CHANNELS), campaign: fc.constantFrom(...CAMPAIGNS),
    }),
    { minLength: 2, maxLength: 4 },
  ),
  conversions: fc.array(
    fc.record({
      person: fc.constant(0), identity: fc.constantFrom('device', 'email'), device: fc.nat(), anchor: fc.nat(), offsetMs: fc.constantFrom(0, SLOT_MS, 2 * SLOT_MS),
      type: fc.constant('purchase'), revenue: fc.option(fc.integer({ min: 1, max: 100_000 }).map((cents) => cents / 100)),
      origin: fc.constant('api'), relationshipDays: fc.constant(null),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});

export interface BuiltScenario {
  website: FixtureWebsite;
  events: ClassifiedEventV1[];
  merges: IdentityMergedV1[];
  conversions: ConversionCreatedV1[];
  oracleEvents: OracleEvent[];
}

/** Turns a scenario into attribution's input and the oracle's, on a website of its own. */
export function buildScenario(s: Scenario, website: FixtureWebsite): BuiltScenario {
  const people = s.devicesPerPerson.map((devices, p) => ({
    email: `person-${p}@example.com`,
    devices: Array.from({ length: devices }, () => ({ identity: randomUUID(), anon: randomUUID() })),
  }));
  const deviceOf = (person: number, device: number) => {
    const p = people[person % people.length] as (typeof people)[number];
    return { person: p, device: p.devices[device % p.devices.length] as { identity: string; anon: string } };
  };
  const events: ClassifiedEventV1[] = [];
  const oracleEvents: OracleEvent[] = [];
  const oracleBase = { event_name: null, email: null, phone: null, revenue: null, url: null, page: '/pricing', source: null, medium: null, campaign: null, term: null, content: null, click_ids: {} };

  // One session per (device, slot): a repeated slot on one device is dropped.
  const seen = new Set<string>();
  const sessions = s.sessions.filter((x) => {
    const { device } = deviceOf(x.person, x.device);
    const key = `${device.anon}:${x.slot}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  const sessionStarts: number[] = [];
  for (const x of sessions) {
    const { device } = deviceOf(x.person, x.device);
    const startMs = SCENARIO_START_MS + x.slot * SLOT_MS;
    sessionStarts.push(startMs);
    const session = randomUUID();
    for (let h = 0; h < x.hits; h += 1) {
      const e = hit({ identity: device.identity, anon: device.anon, session, startedAt: new Date(startMs).toISOString(), minutes: h * 10, channel: x.channel, source: null, medium: null, campaign: x.campaign });
      events.push(e);
      oracleEvents.push({ ...oracleBase, event_id: e.event_id, origin: 'tracker', event_type: 'pageview', occurred_at: e.occurred_at, anonymous_id: device.anon, channel: x.channel, campaign: x.campaign, ingest_session_id: session });
    }
  }
  // Every device is known to belong to its person: an identify for the oracle, a merge for attribution.
  const merges: IdentityMergedV1[] = [];
  for (const p of people) {
    p.devices.forEach((d, i) => {
      oracleEvents.push({ ...oracleBase, event_id: randomUUID(), origin: 'api', event_type: 'identify', occurred_at: new Date(SCENARIO_START_MS).toISOString(), anonymous_id: d.anon, email: p.email, channel: 'Direct' });
      if (i > 0) merges.push({ workspace_id: website.workspace_id, from_identity_id: d.identity, into_identity_id: (p.devices[0] as { identity: string }).identity });
    });
  }

  const conversions: ConversionCreatedV1[] = [];
  const usedTimes = new Set<number>();
  for (const c of s.conversions) {
    const anchorMs = sessionStarts.length > 0 ? (sessionStarts[c.anchor % sessionStarts.length] as number) : SCENARIO_START_MS + (c.anchor % SLOTS) * SLOT_MS;
    const occurredMs = anchorMs + c.offsetMs;
    if (usedTimes.has(occurredMs)) continue; // one conversion per instant, so a 1 ms window holds exactly one
    usedTimes.add(occurredMs);
    const { person, device } = deviceOf(c.person, c.device);
    const identity = c.identity === 'none' ? null : c.identity === 'device' ? device.identity : (person.devices[0] as { identity: string }).identity;
    const anonymousId = c.identity === 'device' ? device.anon : null;
    const email = c.identity === 'none' ? null : person.email;
    const occurredAt = new Date(occurredMs).toISOString();
    const relationshipStartedAt = c.relationshipDays === null ? null : new Date(occurredMs - c.relationshipDays * DAY_MS).toISOString();
    const created = conversion(website, {
      identity_id: identity, anonymous_id: anonymousId, email, phone: null, event_type: c.type, event_name: c.type, occurred_at: occurredAt,
      revenue: c.revenue, origin: c.origin, relationship_started_at: relationshipStartedAt,
    });
    conversions.push(created);
    // ingest publishes a conversion event itself too, as a server-side event without a session;
    // an imported conversion never went through ingest.
    if (c.origin === 'api') {
      events.push({
        ...BASE_EVENT, event_id: created.conversion_id, origin: 'api', event_type: c.type, event_name: c.type, occurred_at: occurredAt, received_at: occurredAt,
        anonymous_id: anonymousId, email, identity_id: identity, revenue: c.revenue, session_id: null, session: null, url: null, referrer: null, channel: 'Direct', click_ids: {},
      });
    }
    oracleEvents.push({
      ...oracleBase, event_id: created.conversion_id, origin: 'api', event_type: c.type, event_name: c.type, occurred_at: occurredAt, anonymous_id: anonymousId, email,
      revenue: c.revenue, channel: 'Direct', conversion_origin: c.origin, relationship_started_at: relationshipStartedAt,
    });
  }
  return { website, events, merges, conversions, oracleEvents };
}

/** Builds a generated scenario on a new website and delivers its facts: events, then merges, then conversions. */
export async function loadScenario(fx: AttributionFixture, scenario: Scenario): Promise<BuiltScenario> {
  const built = buildScenario(scenario, newWebsite());
  const { website } = built;
  if (built.events.length > 0) await fx.deliver('events.classified', batch(website, built.events), website);
  for (const merge of built.merges) await fx.deliver('identity.merged', merge, website);
  for (const c of built.conversions) await fx.deliver('conversion.created', c, website);
  return built;
}
