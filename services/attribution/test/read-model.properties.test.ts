// The read model under random interleavings of facts: sessions in batches (late ones included, a
// session's hits split across batches), identity merges, conversions and written-back values arrive
// in any order, some twice (redeliveries), up to three handled at once. Afterwards
// - the maintained rows equal the rows a rebuild from the facts computes (and the rebuild has
//   nothing new to publish);
// - the last conversion.attributed of each conversion carries the oracle's first and last touch;
// - every read equals the oracle's.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { MESSAGE_EXAMPLES, type AttributedTouchV1, type ConversionValueChangedV1 } from '@sightline/proto-schemas';
import { batch, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from './fixture';
import { buildDataset, DAY_MS, TOUCH_DIMENSIONS, type OracleSession, type OracleWindow } from './oracle';
import { oracleDisagreements } from './oracle/harness/agreement';
import { buildScenario, SCENARIO_START_MS, scenarioArb, type BuiltScenario } from './oracle/harness/scenario';

const NUM_RUNS = 12;
const FULL: OracleWindow = { fromMs: SCENARIO_START_MS - DAY_MS, toMs: SCENARIO_START_MS + 330 * DAY_MS };

interface Step {
  type: string;
  payload: unknown;
  id: string;
}

const interleavingArb = fc.record({
  scenario: scenarioArb,
  /** Batches the classified events are split into. */
  batches: fc.integer({ min: 1, max: 4 }),
  /** Priorities that order the steps (and pick each event's batch). */
  keys: fc.array(fc.nat({ max: 1000 }), { minLength: 40, maxLength: 40 }),
  /** Sales values written back: for which conversion, and the value (null clears it). */
  values: fc.array(fc.record({ conversion: fc.nat(), sales: fc.option(fc.integer({ min: 0, max: 500_000 }).map((cents) => cents / 100)) }), { maxLength: 4 }),
  /** Steps delivered a second time with the same message id. */
  redeliver: fc.array(fc.nat(), { maxLength: 3 }),
  /** Messages handled at once (as the bus's prefetch allows): concurrent computations, coalesced groups. */
  concurrency: fc.integer({ min: 1, max: 3 }),
  dimension: fc.constantFrom(...TOUCH_DIMENSIONS),
});

type Interleaving = typeof interleavingArb extends fc.Arbitrary<infer T> ? T : never;

function stepsOf(built: BuiltScenario, x: Interleaving): Step[] {
  const { website } = built;
  const key = (i: number): number => x.keys[i % x.keys.length] as number;
  const steps: Step[] = [];
  const batches: (typeof built.events)[] = Array.from({ length: x.batches }, () => []);
  built.events.forEach((e, j) => batches[key(j * 7 + 3) % x.batches]?.push(e));
  for (const events of batches) if (events.length > 0) steps.push({ type: 'events.classified', payload: batch(website, events), id: randomUUID() });
  for (const merge of built.merges) steps.push({ type: 'identity.merged', payload: merge, id: randomUUID() });
  for (const c of built.conversions) steps.push({ type: 'conversion.created', payload: c, id: randomUUID() });
  x.values.forEach((v, i) => {
    const c = built.conversions[v.conversion % built.conversions.length];
    if (!c) return;
    const change: ConversionValueChangedV1 = {
      ...MESSAGE_EXAMPLES['conversion.value_changed'],
      conversion_id: c.conversion_id, website_id: website.id, workspace_id: website.workspace_id, identity_id: c.identity_id,
      conversion_occurred_at: c.occurred_at, sales_value: v.sales, changed_at: new Date(SCENARIO_START_MS + (i + 1) * 60_000).toISOString(),
    };
    steps.push({ type: 'conversion.value_changed', payload: change, id: randomUUID() });
  });
  const ordered = steps.map((s, i) => ({ s, rank: key(i) * 100 + i })).sort((a, b) => a.rank - b.rank).map((r) => r.s);
  for (const r of x.redeliver) {
    const again = ordered[r % Math.max(1, ordered.length)];
    if (again) ordered.splice(Math.min(ordered.length, r % (ordered.length + 1)), 0, again);
  }
  return ordered;
}

/** The oracle's input with the values written back last (by changed_at) in force. */
function oracleOf(built: BuiltScenario, steps: readonly Step[]) {
  const latest = new Map<string, { at: string; value: number | null }>();
  for (const s of steps) {
    if (s.type !== 'conversion.value_changed') continue;
    const v = s.payload as ConversionValueChangedV1;
    const seen = latest.get(v.conversion_id);
    if (!seen || seen.at < v.changed_at) latest.set(v.conversion_id, { at: v.changed_at, value: v.sales_value });
  }
  return buildDataset(built.oracleEvents.map((e) => (latest.has(e.event_id) ? { ...e, written_back_value: latest.get(e.event_id)?.value ?? null } : e)));
}

const touchOf = (t: OracleSession | undefined): AttributedTouchV1 | null =>
  t ? { occurred_at: new Date(t.startMs).toISOString(), channel: t.channel, source: t.source || null, medium: t.medium || null, campaign: t.campaign || null } : null;

describe('the read model under random interleavings of facts', () => {
  let fx: AttributionFixture;

  beforeAll(async () => {
    fx = await openFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  /** Every derived row of the website, without its version. */
  async function snapshot(website: FixtureWebsite): Promise<{ outcomes: unknown[]; sessions: unknown[] }> {
    const params = { website: website.id };
    return {
      outcomes: await fx.ch.query('SELECT * EXCEPT (computed_at) FROM outcome_journeys FINAL WHERE website_id = {website:UUID} ORDER BY kind, outcome_id', params),
      sessions: await fx.ch.query('SELECT * EXCEPT (computed_at) FROM traffic_sessions FINAL WHERE website_id = {website:UUID} ORDER BY session_id', params),
    };
  }

  it('maintains what a rebuild computes, publishes the oracle\'s touches, and answers as the oracle', async () => {
    await fc.assert(
      fc.asyncProperty(interleavingArb, async (x) => {
        const built = buildScenario(x.scenario, newWebsite());
        const { website } = built;
        const steps = stepsOf(built, x);
        for (let i = 0; i < steps.length; i += x.concurrency) {
          await Promise.all(steps.slice(i, i + x.concurrency).map((s) => fx.deliver(s.type, s.payload, website, 'test', s.id)));
        }
        const data = oracleOf(built, steps);

        const maintained = await snapshot(website);
        expect(maintained.outcomes).toHaveLength(built.conversions.length);

        // The latest first/last touch published for each conversion is the oracle's (none for an empty journey).
        const mine = fx.published.filter((m) => m.payload.website_id === website.id);
        for (const c of data.conversions) {
          const last = mine.filter((m) => m.payload.conversion_id === c.id).sort((a, b) => b.payload.touch_count - a.payload.touch_count)[0];
          const expected = { first_touch: touchOf(c.journey[0]), last_touch: touchOf(c.journey[c.journey.length - 1]), touch_count: c.journey.length };
          if (c.journey.length === 0) expect(last).toBeUndefined();
          else expect(last?.payload).toMatchObject(expected);
        }

        const before = fx.published.length;
        const result = await fx.readModel.rebuild({ websiteId: website.id, workspaceId: website.workspace_id });
        expect(result.outcomes).toBe(built.conversions.length);
        expect(result.published).toBe(0);
        expect(fx.published.length).toBe(before);
        expect(await snapshot(website)).toEqual(maintained);

        const lines = await oracleDisagreements(fx, website, data, x.dimension, FULL);
        if (lines.length > 0) throw new Error(lines.join('\n'));
      }),
      { numRuns: NUM_RUNS },
    );
  }, 600_000);
});
