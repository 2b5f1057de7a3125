// GET /metrics with last_non_direct, markov, shapley and exclude_direct on embedded chDB: the two
// published worked examples end to end (events and conversions in, credit by channel out), the
// rule models' new switch by hand, nulls with reasons, and the request rules.
import { randomUUID } from 'node:crypto';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../../test/fixture';
import type { MetricsBody } from '../metrics.rpc';

const DAY = 86_400_000;
const WINDOW = { from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' };
const CONVERTED_AT = Date.parse('2026-03-20T12:00:00.000Z');
const at = (daysBefore: number): string => new Date(CONVERTED_AT - daysBefore * DAY).toISOString();

type Nested = Record<string, { conversions: number | null; revenue: number | null }>;

describe('data-driven models and exclude_direct on GET /metrics (chDB)', () => {
  let fx: AttributionFixture;

  beforeAll(async () => {
    fx = await openFixture();
  }, 60_000);
  afterAll(() => fx?.close());

  /** One person per journey: sessions on these channels (oldest first), converting or not. */
  async function siteWith(journeys: { channels: string[]; converts: boolean; revenue?: number }[]): Promise<FixtureWebsite> {
    const site = newWebsite();
    const events: ReturnType<typeof hit>[] = [];
    const conversions: ReturnType<typeof conversion>[] = [];
    for (const j of journeys) {
      const person = randomUUID();
      j.channels.forEach((channel, i) => events.push(hit({ identity: person, session: `${person}-${i}`, startedAt: at(j.channels.length - i), channel, source: null, medium: null, campaign: null })));
      if (j.converts) conversions.push(conversion(site, { identity_id: person, occurred_at: at(0), revenue: j.revenue ?? 10 }));
    }
    if (events.length > 0) await fx.deliver('events.classified', batch(site, events), site);
    for (const c of conversions) await fx.deliver('conversion.created', c, site);
    return site;
  }

  const metrics = async (site: FixtureWebsite, query: Record<string, unknown>): Promise<MetricsBody> => {
    const reply = await fx.call<MetricsBody>('attribution.getMetrics', site, { ...WINDOW, metrics: ['conversions', 'revenue'], group_by: ['channel'], ...query });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const byChannel = (body: MetricsBody, model: string) => new Map(body.data.map((r) => [r['channel'] as string, (r as unknown as Record<string, Nested[string]>)[model]]));

  it('reproduces the Markov removal-effect worked example (Puzyrov 2019) end to end', async () => {
    // Serhii Puzyrov, "Markov Chain Attribution – Simple Explanation Of Removal Effect" (2019): Google
    // Ads alone converting twice, Mailing alone once, Google Ads > Mailing once, Google Ads alone
    // once without converting; credits 2.4 and 1.6 of the 4 conversions (see markov.test.ts).
    // Google Ads is the Paid Search channel here, Mailing is Email.
    const site = await siteWith([
      { channels: ['Paid Search'], converts: true }, { channels: ['Paid Search'], converts: true },
      { channels: ['Email'], converts: true }, { channels: ['Paid Search', 'Email'], converts: true },
      { channels: ['Paid Search'], converts: false },
    ]);
    const body = await metrics(site, { attribution: ['markov', 'shapley'] });
    const markov = byChannel(body, 'markov');
    expect(markov.get('Paid Search')?.conversions).toBeCloseTo(2.4, 9);
    expect(markov.get('Email')?.conversions).toBeCloseTo(1.6, 9);
    expect(markov.get('Paid Search')?.revenue).toBeCloseTo(24, 9);
    expect((body.totals as unknown as Nested)['markov']?.conversions).toBeCloseTo(4, 9);
    expect(body.meta.definitions['markov']).toMatch(/4 converting journeys .* and 1 non-converting journey/);
    // Shapley ignores the non-converting journey: Paid Search 2 + 0.5, Email 1 + 0.5.
    const shapley = byChannel(body, 'shapley');
    expect(shapley.get('Paid Search')?.conversions).toBeCloseTo(2.5, 9);
    expect(shapley.get('Email')?.conversions).toBeCloseTo(1.5, 9);
    expect(body.meta.definitions['shapley']).toMatch(/Exact: all 4 coalitions of the 2 channels/);
  });

  it('reproduces the Shapley worked example (Kinley, game-theory-attribution) end to end', async () => {
    // J. R. Kinley, "Data-Driven Marketing Attribution" (github.com/jrkinley-zz/game-theory-attribution):
    // 100 conversions by channel set, Facebook 18, Google 4, LinkedIn 8, Facebook+Google 10,
    // Facebook+LinkedIn 26, Google+LinkedIn 7, all three 27; published Shapley values 0.450, 0.215,
    // 0.335 of the total. Facebook is Paid Social here, Google is Paid Search, LinkedIn is Organic Social.
    const F = 'Paid Social';
    const G = 'Paid Search';
    const L = 'Organic Social';
    const sets: [string[], number][] = [[[F], 18], [[G], 4], [[L], 8], [[F, G], 10], [[F, L], 26], [[G, L], 7], [[F, G, L], 27]];
    const site = await siteWith(sets.flatMap(([channels, n]) => Array.from({ length: n }, () => ({ channels, converts: true, revenue: 1 }))));
    const body = await metrics(site, { attribution: ['shapley'] });
    const row = (channel: string) => body.data.find((r) => r['channel'] === channel);
    expect(row(F)?.['conversions']).toBeCloseTo(45, 9);
    expect(row(G)?.['conversions']).toBeCloseTo(21.5, 9);
    expect(row(L)?.['conversions']).toBeCloseTo(33.5, 9);
    expect(body.totals?.['conversions']).toBeCloseTo(100, 9);
  }, 60_000);

  it('last_non_direct skips Direct, and exclude_direct drops it under every model', async () => {
    const site = await siteWith([
      { channels: ['Paid Search', 'Direct'], converts: true, revenue: 100 },
      { channels: ['Direct', 'Direct'], converts: true, revenue: 50 },
    ]);
    const rules = await metrics(site, { attribution: ['last_touch', 'last_non_direct', 'linear'] });
    const last = byChannel(rules, 'last_touch');
    const lnd = byChannel(rules, 'last_non_direct');
    expect(last.get('Direct')?.conversions).toBe(2);
    expect(lnd.get('Paid Search')).toEqual({ conversions: 1, revenue: 100 });
    // A journey of only Direct credits its last (Direct) touch.
    expect(lnd.get('Direct')).toEqual({ conversions: 1, revenue: 50 });
    const dropped = await metrics(site, { attribution: ['last_touch', 'linear', 'markov'], exclude_direct: 'true' });
    expect(byChannel(dropped, 'last_touch').get('Paid Search')?.conversions).toBe(1);
    expect(byChannel(dropped, 'linear').get('Paid Search')?.conversions).toBe(1);
    expect(byChannel(dropped, 'linear').get('Direct')?.conversions).toBe(1);
    expect(byChannel(dropped, 'markov').get('Direct')?.conversions).toBeCloseTo(1, 9);
    expect(dropped.meta.definitions['exclude_direct']).toEqual(expect.any(String));
  });

  it('a model that cannot answer is null with a reason, never zero', async () => {
    const site = newWebsite();
    await fx.deliver('conversion.created', conversion(site, { identity_id: randomUUID(), anonymous_id: null, occurred_at: at(0), revenue: 5 }), site);
    const body = await metrics(site, { attribution: ['markov', 'shapley', 'linear'] });
    const unattributed = body.data.find((r) => r['channel'] === 'Unattributed') as unknown as Nested;
    expect(unattributed['markov']).toEqual({ conversions: null, revenue: null });
    expect(unattributed['shapley']).toEqual({ conversions: null, revenue: null });
    expect(unattributed['linear']).toEqual({ conversions: 1, revenue: 5 });
    expect((body.totals as unknown as Nested)['markov']).toEqual({ conversions: null, revenue: null });
    expect(body.meta.definitions['markov']).toMatch(/^markov: null\. No converting journey with a touch/);
    const single = await metrics(site, { attribution: ['shapley'] });
    expect(single.data.every((r) => r['conversions'] === null)).toBe(true);
  });

  it('refuses what the models cannot answer, unknown models and a switch that is not true or false', async () => {
    const site = newWebsite();
    const refused = (query: Record<string, unknown>) => expect(fx.call('attribution.getMetrics', site, { ...WINDOW, metrics: ['conversions'], group_by: ['channel'], ...query })).rejects;
    await refused({ attribution: ['markov'], group_by: ['source'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused({ attribution: ['shapley'], group_by: ['channel', 'country'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused({ attribution: ['markov'], filter: ['country:eq:DE'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused({ attribution: ['markov'], only_paid: true }).toMatchObject({ kind: 'unsupported-combination' });
    await refused({ attribution: ['shapley'], granularity: 'day' }).toMatchObject({ kind: 'unsupported-combination' });
    await refused({ attribution: ['markovian'] }).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['markov', 'shapley', 'last_non_direct']) });
    await refused({ attribution: ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay', 'markov'] }).toMatchObject({ kind: 'invalid-request' });
    await refused({ attribution: ['linear'], exclude_direct: 'maybe' }).toMatchObject({ kind: 'invalid-request', allowed: ['true', 'false'] });
  });
});
