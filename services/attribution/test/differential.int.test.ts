// The differential test on the distributed profile: the same 22 seeds go through ingest and
// attribution over RabbitMQ (redeliveries, prefetch and concurrent consumers as in production),
// with ingest on PostgreSQL and Redis, and the read model's answers are held to the oracle. Fewer
// reads than the embedded run (differential.test.ts): what differs between the profiles is how
// facts arrive, which every read below depends on.
import { distributedServers } from '@sightline/kit/testing/servers';
import { ATTRIBUTION_MODELS } from './oracle';
import { checkCoverage, checkCredited, checkPaths, checkPlain, checkSessions } from './oracle/harness/checks';
import { DifferentialHarness } from './oracle/harness/process';
import { mapLimit, oracleSiteOf, SEED_SPECS, type NamedWindow, type OracleSite } from './oracle/harness/sites';

const PARALLEL_READS = 3;

describe('attribution agrees with the oracle on generated workspaces (RabbitMQ, PostgreSQL, Redis)', () => {
  let servers: Awaited<ReturnType<typeof distributedServers>>;
  let harness: DifferentialHarness;
  let sites: OracleSite[] = [];

  beforeAll(async () => {
    servers = await distributedServers(['ingest', 'attribution', 'differential-capture']);
    harness = await DifferentialHarness.start({
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
    });
    sites = (await harness.loadAll(SEED_SPECS)).map(oracleSiteOf);
  }, 600_000);

  afterAll(async () => {
    await harness?.stop();
    await servers?.cleanup();
  }, 60_000);

  const everyWindow = (): [OracleSite, NamedWindow][] => sites.flatMap((s) => s.windows.map((w) => [s, w] as [OracleSite, NamedWindow]));
  const expectAgreement = (lines: string[][]) => expect(lines.flat()).toEqual([]);

  it('loads every seed with nothing dead-lettered; sessions are the oracle\'s', async () => {
    expect(sites).toHaveLength(SEED_SPECS.length);
    expect(await harness.deadLetters()).toBe(0);
    expectAgreement(sites.map(checkSessions));
  });

  it('/metrics: all five models by channel, and the plain counts, in every window', async () => {
    expectAgreement(await mapLimit(everyWindow(), PARALLEL_READS, ([s, w]) => checkCredited(harness, s, w, ATTRIBUTION_MODELS, 'channel')));
    expectAgreement(await mapLimit(everyWindow(), PARALLEL_READS, ([s, w]) => checkPlain(harness, s, w)));
  }, 180_000);

  it('/paths by channel and /attribution/coverage in every window', async () => {
    expectAgreement(await mapLimit(everyWindow(), PARALLEL_READS, ([s, w]) => checkPaths(harness, s, w, 'channel')));
    expectAgreement(await mapLimit(everyWindow(), PARALLEL_READS, ([s, w]) => checkCoverage(harness, s, w)));
  }, 180_000);
});
