// Property tests of last_non_direct, markov, shapley and exclude_direct on small generated
// scenarios delivered straight to the module's consumers (fixture): under each model, with and
// without exclude_direct, the credits by channel equal the oracle's, rows add up to the totals and
// the totals to the window's conversions and revenue; a model that cannot answer is null with a
// reason. Windows cover the whole scenario (people with and without conversions) and random cuts.
import fc from 'fast-check';
import { buildDataset, DAY_MS, oracleJourneys, type OracleWindow } from './oracle';
import { gatewayQuery } from '@sightline/kit/testing/gateway-query';
import { checkDataDriven, checkExcludeDirect, type MetricsReader, type ModelsBody } from './oracle/harness/data-driven-checks';
import { loadScenario, SCENARIO_START_MS, scenarioArb, type BuiltScenario, type Scenario } from './oracle/harness/scenario';
import { openFixture, type AttributionFixture } from './fixture';

const NUM_RUNS = 12;
const FULL: OracleWindow = { fromMs: SCENARIO_START_MS - DAY_MS, toMs: SCENARIO_START_MS + 330 * DAY_MS };
const windowArb: fc.Arbitrary<OracleWindow> = fc.oneof(
  fc.constant(FULL),
  fc.tuple(fc.integer({ min: 0, max: 330 * 24 }), fc.integer({ min: 1, max: 200 * 24 })).map(([startHour, hours]) => ({
    fromMs: SCENARIO_START_MS + startHour * 3_600_000 + 17 * 60_000,
    toMs: SCENARIO_START_MS + (startHour + hours) * 3_600_000 + 17 * 60_000,
  })),
);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Many people over 60 days (slots of 3 hours), most without a conversion and with several sessions
 * each: the non-converting journeys markov reads, which the general scenarios seldom have.
 */
const crowdArb: fc.Arbitrary<Scenario> = fc.record({
  devicesPerPerson: fc.array(fc.constant(1), { minLength: 4, maxLength: 8 }),
  sessions: fc.array(
    fc.record({
      person: fc.nat(), device: fc.constant(0), slot: fc.integer({ min: 0, max: 8 * 60 - 1 }), hits: fc.constant(1),
      channel: fc.constantFrom('Direct', 'Organic Search', 'Paid Search', 'Email'), campaign: fc.constant(null),
    }),
    { minLength: 8, maxLength: 24 },
  ),
  conversions: fc.array(
    fc.record({
      person: fc.nat(), identity: fc.constant('device'), device: fc.constant(0), anchor: fc.nat(), offsetMs: fc.integer({ min: 1, max: 3 * 24 * 60 }).map((m) => m * 60_000),
      type: fc.constant('purchase'), revenue: fc.option(fc.integer({ min: 1, max: 100_000 }).map((cents) => cents / 100)),
      origin: fc.constant('api'), relationshipDays: fc.constant(null),
    }),
    { minLength: 1, maxLength: 3 },
  ),
}) as fc.Arbitrary<Scenario>;

describe('data-driven models and exclude_direct on generated scenarios', () => {
  let fx: AttributionFixture;

  beforeAll(async () => {
    fx = await openFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const load = (s: Scenario): Promise<BuiltScenario> => loadScenario(fx, s);

  const readerOf = (built: BuiltScenario, w: OracleWindow): MetricsReader => async (query, diff) => {
    const reply = await fx.call<ModelsBody>('attribution.getMetrics', built.website, gatewayQuery('/v1/metrics', { ...query, from: iso(w.fromMs), to: iso(w.toMs) }));
    if (reply.status === 200) return reply.body;
    diff.note(`status ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
    return null;
  };

  async function agrees(s: Scenario, w: OracleWindow): Promise<BuiltScenario> {
    const built = await load(s);
    const data = buildDataset(built.oracleEvents);
    const lines = [
      ...(await checkDataDriven(readerOf(built, w), 'scenario', data, w, false)),
      ...(await checkDataDriven(readerOf(built, w), 'scenario', data, w, true)),
      ...(await checkExcludeDirect(readerOf(built, w), 'scenario', data, w)),
    ];
    if (lines.length > 0) throw new Error(lines.join('\n'));
    return built;
  }

  it("equals the oracle's credit, and each model's credits sum to the attributed totals", async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, windowArb, async (s, w) => void (await agrees(s, w))), { numRuns: NUM_RUNS });
  }, 300_000);

  it('agrees on crowds with non-converting journeys of several sessions (what markov reads)', async () => {
    let withNonConverting = 0;
    await fc.assert(
      fc.asyncProperty(crowdArb, async (s) => {
        const built = await agrees(s, FULL);
        const data = buildDataset(built.oracleEvents);
        if (oracleJourneys(data, FULL, false).nonConverting.some((j) => j.length >= 2)) withNonConverting += 1;
      }),
      { numRuns: NUM_RUNS },
    );
    // Not vacuous: most crowds have such journeys.
    expect(withNonConverting).toBeGreaterThan(NUM_RUNS / 2);
  }, 300_000);
});
