// Differential tests of attribution: datagen workspaces go through ingest into attribution (one
// in-process Sightline, embedded stores), and every answer of /metrics, /paths and
// /attribution/coverage is compared with an independent TypeScript oracle (./oracle) computed from
// the classified events ingest published, last_non_direct, markov, shapley and exclude_direct
// included. Numbers agree within a relative 1e-6.
import { ATTRIBUTION_MODELS, oracleJourneys, oracleMarkov, TOUCH_DIMENSIONS } from './oracle';
import { checkCoverage, checkCredited, checkPaths, checkPlain, checkSessions } from './oracle/harness/checks';
import { checkDataDriven, checkExcludeDirect, type MetricsReader, type ModelsBody } from './oracle/harness/data-driven-checks';
import { DifferentialHarness } from './oracle/harness/process';
import { mapLimit, oracleSiteOf, SEED_SPECS, type NamedWindow, type OracleSite } from './oracle/harness/sites';

/** Reads at once: chDB answers them on parallel connections. */
const PARALLEL_READS = 3;

describe('attribution agrees with the oracle on generated workspaces', () => {
  let harness: DifferentialHarness;
  let sites: OracleSite[] = [];

  beforeAll(async () => {
    harness = await DifferentialHarness.start();
    sites = (await harness.loadAll(SEED_SPECS)).map(oracleSiteOf);
  }, 420_000);

  afterAll(async () => {
    await harness?.stop();
  }, 60_000);

  /** Every (site, window) pair, or one window per site chosen by `pick`. */
  const pairs = (pick?: (siteIndex: number) => number): [OracleSite, NamedWindow][] =>
    sites.flatMap((s, i) => (pick ? [[s, s.windows[pick(i) % s.windows.length] as NamedWindow] as [OracleSite, NamedWindow]] : s.windows.map((w) => [s, w] as [OracleSite, NamedWindow])));

  const expectAgreement = (lines: string[][]) => expect(lines.flat()).toEqual([]);

  it('loads every seed through ingest with nothing dead-lettered, and the data exercises the rules', async () => {
    expect(sites).toHaveLength(SEED_SPECS.length);
    expect(await harness.deadLetters()).toBe(0);
    const conversions = sites.flatMap((s) => s.data.conversions);
    expect(conversions.length).toBeGreaterThanOrEqual(60);
    expect(conversions.filter((c) => c.journey.length === 0).length).toBeGreaterThan(0);
    expect(conversions.filter((c) => c.journey.length >= 3).length).toBeGreaterThan(0);
    expect(sites.some((s) => s.site.merges.length > 0)).toBe(true);
  });

  it("ingest's sessions are the oracle's (same hits together)", () => {
    expectAgreement(sites.map(checkSessions));
  });

  it('/metrics credits conversions and revenue by channel under each model alone', async () => {
    // Half the sites per model (the nested test below covers every model on every site and window).
    const jobs = ATTRIBUTION_MODELS.flatMap((model, m) => pairs((i) => i + m).filter((_, i) => (i + m) % 2 === 0).map(([s, w]) => ({ s, w, model })));
    expectAgreement(await mapLimit(jobs, PARALLEL_READS, ({ s, w, model }) => checkCredited(harness, s, w, [model], 'channel')));
  }, 120_000);

  it('/metrics nests all five models per row, by channel in every window', async () => {
    expectAgreement(await mapLimit(pairs(), PARALLEL_READS, ([s, w]) => checkCredited(harness, s, w, ATTRIBUTION_MODELS, 'channel')));
  }, 120_000);

  it('/metrics nests all five models per row, by source, medium or campaign', async () => {
    const dimensions = TOUCH_DIMENSIONS.filter((d) => d !== 'channel');
    const jobs = pairs((i) => i + 1).map(([s, w], i) => ({ s, w, dimension: dimensions[i % dimensions.length] as (typeof dimensions)[number] }));
    expectAgreement(await mapLimit(jobs, PARALLEL_READS, ({ s, w, dimension }) => checkCredited(harness, s, w, ATTRIBUTION_MODELS, dimension)));
  }, 120_000);

  /** GET /metrics for one site and window, as the differential harness calls it. */
  const metricsReader = (s: OracleSite, w: NamedWindow): MetricsReader => async (query, diff) => {
    try {
      const reply = await harness.call<ModelsBody>('attribution.getMetrics', '/v1/metrics', s.site, { ...query, from: w.from, to: w.to });
      if (reply.status === 200) return reply.body;
      diff.note(`status ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
    } catch (error) {
      diff.note(`failed: ${String(error).slice(0, 300)}`);
    }
    return null;
  };
  const where = (s: OracleSite, w: NamedWindow) => `seed ${s.site.spec.seed} ${w.name} [${w.from}, ${w.to})`;

  it('/metrics credits by channel under last_non_direct, markov and shapley in every window, with and without exclude_direct', async () => {
    // Not vacuous: markov answers on at least 20 seeds, and on most with non-converting journeys in the chain.
    const seedsWhere = (test: (j: ReturnType<typeof oracleJourneys>) => boolean) =>
      new Set(pairs().filter(([s, w]) => test(oracleJourneys(s.data, w, false))).map(([s]) => s.site.spec.seed)).size;
    const answering = seedsWhere((j) => oracleMarkov(j).rows !== null);
    const withNonConverting = seedsWhere((j) => j.nonConverting.length > 0 && oracleMarkov(j).rows !== null);
    process.stdout.write(`markov answers on ${answering} seeds, with non-converting journeys on ${withNonConverting}\n`);
    expect(answering).toBeGreaterThanOrEqual(20);
    expect(withNonConverting).toBeGreaterThanOrEqual(15);
    const jobs = pairs().flatMap(([s, w]) => [false, true].map((exclude) => ({ s, w, exclude })));
    expectAgreement(await mapLimit(jobs, PARALLEL_READS, ({ s, w, exclude }) => checkDataDriven(metricsReader(s, w), where(s, w), s.data, w, exclude)));
  }, 240_000);

  it('/metrics drops Direct touches under all five rule models with exclude_direct=true', async () => {
    expectAgreement(await mapLimit(pairs((i) => i), PARALLEL_READS, ([s, w]) => checkExcludeDirect(metricsReader(s, w), where(s, w), s.data, w)));
  }, 120_000);

  it('/metrics counts visitors, sessions, page views and conversions', async () => {
    expectAgreement(await mapLimit(pairs(), PARALLEL_READS, ([s, w]) => checkPlain(harness, s, w)));
  }, 120_000);

  it('/paths by channel with the default max_touches', async () => {
    expectAgreement(await mapLimit(pairs(), PARALLEL_READS, ([s, w]) => checkPaths(harness, s, w, 'channel')));
  }, 120_000);

  it('/paths by source, medium and campaign, cut at 1 to 3 touches', async () => {
    const steps = ['source', 'medium', 'campaign'] as const;
    const jobs = pairs((i) => i).map(([s, w], i) => ({ s, w, step: steps[i % 3] as (typeof steps)[number], max: 1 + (i % 3) }));
    expectAgreement(await mapLimit(jobs, PARALLEL_READS, ({ s, w, step, max }) => checkPaths(harness, s, w, step, max)));
  }, 120_000);

  it('/attribution/coverage buckets every revenue fact', async () => {
    expectAgreement(await mapLimit(pairs(), PARALLEL_READS, ([s, w]) => checkCoverage(harness, s, w)));
  }, 120_000);
});
