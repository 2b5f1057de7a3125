// Property tests of attribution's invariants on small generated scenarios delivered straight to the
// module's consumers (fixture): each conversion's credit sums to one under every model, grouped
// rows add up to the ungrouped totals, path outcomes add up to the conversions, and, on journeys
// spread over 200 days (the 90-day lookback and its boundary), with imported conversions and
// conversions before any tracked session, the answers equal the oracle's.
import fc from 'fast-check';
import { ATTRIBUTION_MODELS, buildDataset, DAY_MS, TOUCH_DIMENSIONS, type OracleWindow, type TouchDimension } from './oracle';
import { oracleDisagreements } from './oracle/harness/agreement';
import { close } from './oracle/harness/compare';
import { gatewayQuery } from '@sightline/kit/testing/gateway-query';
import { loadScenario, SCENARIO_START_MS, scenarioArb, tiedScenarioArb, type BuiltScenario, type Scenario } from './oracle/harness/scenario';
import { openFixture, type AttributionFixture } from './fixture';

const NUM_RUNS = 10;

/**
 * Found by this property: a payment 90 days after the person's only session, whose earlier
 * conversion states a relationship start before tracking began. The relationship began at the
 * earliest time any of the person's records states, so the payment predates tracking.
 */
const PREDATES_BY_AN_EARLIER_RECORD: [Scenario, (typeof TOUCH_DIMENSIONS)[number], OracleWindow] = [
  {
    devicesPerPerson: [1],
    sessions: [{ person: 0, device: 0, slot: 0, hits: 1, channel: 'Direct', campaign: null }],
    conversions: [
      { person: 0, identity: 'device', device: 0, anchor: 0, offsetMs: 0, type: 'conversion', revenue: null, origin: 'api', relationshipDays: 1 },
      { person: 0, identity: 'device', device: 0, anchor: 0, offsetMs: 7_776_060_000, type: 'conversion', revenue: 0.01, origin: 'api', relationshipDays: null },
    ],
  } as Scenario,
  'channel',
  { fromMs: 1_735_603_200_000, toMs: 1_764_201_600_000 },
];
const FULL: OracleWindow = { fromMs: SCENARIO_START_MS - DAY_MS, toMs: SCENARIO_START_MS + 330 * DAY_MS };

type Row = Record<string, unknown>;
interface Body {
  data: Row[];
  totals?: Row;
  meta: Row;
}

const windowArb: fc.Arbitrary<OracleWindow> = fc.oneof(
  fc.constant(FULL),
  fc.tuple(fc.integer({ min: 0, max: 330 * 24 }), fc.integer({ min: 1, max: 200 * 24 })).map(([startHour, hours]) => ({
    fromMs: SCENARIO_START_MS + startHour * 3_600_000 + 17 * 60_000,
    toMs: SCENARIO_START_MS + (startHour + hours) * 3_600_000 + 17 * 60_000,
  })),
);

const iso = (ms: number) => new Date(ms).toISOString();
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const num = (v: unknown) => Number(v ?? NaN);

describe('attribution invariants on generated scenarios', () => {
  let fx: AttributionFixture;

  beforeAll(async () => {
    fx = await openFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const load = (s: Scenario): Promise<BuiltScenario> => loadScenario(fx, s);

  async function read(built: BuiltScenario, method: string, path: string, raw: Record<string, string>): Promise<Body> {
    const reply = await fx.call<Body>(method, built.website, gatewayQuery(path, raw));
    expect(reply.status).toBe(200);
    return reply.body;
  }

  const credited = (built: BuiltScenario, w: OracleWindow, dimension: string, models: readonly string[]) =>
    read(built, 'attribution.getMetrics', '/v1/metrics', { metrics: 'conversions,revenue', group_by: dimension, attribution: models.join(','), from: iso(w.fromMs), to: iso(w.toMs), limit: '1000' });

  it('credits every conversion exactly once under every model', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const built = await load(s);
        for (const c of built.conversions) {
          const t = Date.parse(c.occurred_at);
          const body = await credited(built, { fromMs: t, toMs: t + 1 }, 'channel', ATTRIBUTION_MODELS);
          for (const model of ATTRIBUTION_MODELS) {
            const credits = body.data.map((r) => (r[model] ?? {}) as Row);
            expect(close(sum(credits.map((x) => num(x['conversions']))), 1)).toBe(true);
            expect(close(sum(credits.map((x) => num(x['revenue']))), c.revenue ?? 0)).toBe(true);
            expect(credits.every((x) => num(x['conversions']) >= 0)).toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 300_000);

  it('adds grouped rows up to the ungrouped totals', async () => {
    const argsArb = fc.tuple(scenarioArb, fc.constantFrom(...TOUCH_DIMENSIONS), fc.subarray([...ATTRIBUTION_MODELS], { minLength: 1 }), windowArb);
    await fc.assert(
      fc.asyncProperty(argsArb, async ([s, dimension, models, w]) => {
        const built = await load(s);
        const grouped = await credited(built, w, dimension, models);
        const plain = await read(built, 'attribution.getMetrics', '/v1/metrics', { metrics: 'conversions,revenue', from: iso(w.fromMs), to: iso(w.toMs) });
        const total = plain.data[0] ?? {};
        for (const model of models) {
          const rowOf = (r: Row) => ((models.length === 1 ? r : r[model]) ?? {}) as Row;
          const totals = (models.length === 1 ? grouped.totals : grouped.totals?.[model]) as Row;
          for (const metric of ['conversions', 'revenue']) {
            expect(close(sum(grouped.data.map((r) => num(rowOf(r)[metric]))), num(totals[metric]))).toBe(true);
            expect(close(num(totals[metric]), num(total[metric]))).toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 300_000);

  it('adds path outcomes up to the conversions, and cuts paths at max_touches', async () => {
    const argsArb = fc.tuple(scenarioArb, fc.constantFrom(...TOUCH_DIMENSIONS), fc.integer({ min: 1, max: 10 }), windowArb);
    await fc.assert(
      fc.asyncProperty(argsArb, async ([s, step, maxTouches, w]) => {
        const built = await load(s);
        const window = { from: iso(w.fromMs), to: iso(w.toMs) };
        const paths = await read(built, 'attribution.getPaths', '/v1/paths', { step, max_touches: String(maxTouches), limit: '200', ...window });
        const plain = await read(built, 'attribution.getMetrics', '/v1/metrics', { metrics: 'conversions', ...window });
        const conversions = num(plain.data[0]?.['conversions']);
        expect(sum(paths.data.map((r) => num(r['outcomes'])))).toBe(conversions);
        expect(num(paths.meta['total_outcomes'])).toBe(conversions);
        if (conversions > 0) expect(close(sum(paths.data.map((r) => num(r['share']))), 1)).toBe(true);
        for (const r of paths.data) {
          const path = r['path'] as string[];
          expect(path.length).toBeLessThanOrEqual(maxTouches + 1);
          expect(path.length === maxTouches + 1).toBe(path[path.length - 1] === '...');
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 300_000);

  /** The service's credit (all five models), paths, coverage and counts for one scenario and window equal the oracle's. */
  async function agreesWithOracle(s: Scenario, dimension: TouchDimension, w: OracleWindow): Promise<void> {
    const built = await load(s);
    const lines = await oracleDisagreements(fx, built.website, buildDataset(built.oracleEvents), dimension, w);
    if (lines.length > 0) throw new Error(lines.join('\n'));
  }

  it("equals the oracle's credit, paths, coverage and counts over long journeys (lookback boundary included)", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.constantFrom(...TOUCH_DIMENSIONS), windowArb, agreesWithOracle),
      { numRuns: NUM_RUNS, examples: [PREDATES_BY_AN_EARLIER_RECORD] },
    );
  }, 300_000);

  it("equals the oracle's credit and paths when touches start at the same instant", async () => {
    await fc.assert(
      fc.asyncProperty(tiedScenarioArb, fc.constant('channel' as const), fc.constant(FULL), agreesWithOracle),
      { numRuns: NUM_RUNS },
    );
  }, 300_000);
});
