// GET /paths on embedded chDB: each suite case uses a website of its own, so cases share one store.
import { randomUUID } from 'node:crypto';
import type { MilestoneReachedV1 } from '@sightline/proto-schemas';
import { newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import type { PathsBody } from './paths.rpc';
import { DAY, responseValidator, sale, shift, visits, type VisitInput } from '../../test/paths.fixtures';

const FROM = '2026-03-01T00:00:00.000Z';
const TO = '2026-04-01T00:00:00.000Z';
const MID = '2026-03-15T12:00:00.000Z';
const validatePaths = responseValidator('PathsResponse');

describe('GET /paths', () => {
  let fx: AttributionFixture;
  beforeAll(async () => { fx = await openFixture(); }, 60_000);
  afterAll(async () => { await fx?.close(); });

  /** The answer for the March window; every answer must conform to the OpenAPI document. */
  async function paths(site: FixtureWebsite, query: Record<string, unknown> = {}): Promise<PathsBody> {
    const res = await fx.call<PathsBody>('attribution.getPaths', site, { from: FROM, to: TO, ...query });
    expect(res.status).toBe(200);
    expect(validatePaths(res.body)).toEqual([]);
    return res.body;
  }
  /** Rows as [path, outcomes] pairs. */
  const counts = (body: PathsBody): [string[], number][] => body.data.map((r) => [r.path, r.outcomes]);

  /** A person with these touches (hours before MID, oldest first) who converts at MID. */
  async function journey(site: FixtureWebsite, touches: Omit<VisitInput, 'identity' | 'at'>[], revenue: number | null = 10): Promise<string> {
    const person = randomUUID();
    if (touches.length > 0) {
      await visits(fx, site, touches.map((t, i) => ({ ...t, identity: person, at: shift(MID, -(touches.length - i) * 3_600_000) })));
    }
    await sale(fx, site, { identity_id: person, occurred_at: MID, revenue });
    return person;
  }

  describe('step labels', () => {
    let site: FixtureWebsite;
    beforeAll(async () => {
      site = newWebsite();
      await journey(site, [
        { channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring' },
        { channel: 'Direct', source: null, medium: null, campaign: null },
        { channel: 'Email', source: 'newsletter', medium: 'email', campaign: 'april' },
      ]);
    });

    it('labels steps by channel by default', async () => {
      const body = await paths(site);
      expect(counts(body)).toEqual([[['Paid Search', 'Direct', 'Email'], 1]]);
      expect(body.meta.definitions['path']).toContain('labelled by its channel');
    });

    it.each([
      ['source', ['google', '(none)', 'newsletter']],
      ['medium', ['cpc', '(none)', 'email']],
      ['campaign', ['spring', '(none)', 'april']],
      ['channel', ['Paid Search', 'Direct', 'Email']],
    ])('labels steps by %s, an empty value as (none)', async (step, expected) => {
      expect(counts(await paths(site, { step }))).toEqual([[expected, 1]]);
    });

    it('refuses an unknown step with the allowed values', async () => {
      await expect(fx.call('attribution.getPaths', site, { from: FROM, to: TO, step: 'country' }))
        .rejects.toMatchObject({ kind: 'invalid-request', allowed: ['channel', 'source', 'medium', 'campaign'] });
    });
  });

  it('keeps every touch as a step: consecutive identical labels are not collapsed', async () => {
    const site = newWebsite();
    await journey(site, [{ channel: 'Organic Search' }, { channel: 'Organic Search' }, { channel: 'Direct', source: null }]);
    await journey(site, [{ channel: 'Organic Search' }, { channel: 'Direct', source: null }]);
    const body = await paths(site);
    expect(counts(body)).toEqual([
      [['Organic Search', 'Direct'], 1],
      [['Organic Search', 'Organic Search', 'Direct'], 1],
    ]);
    expect(body.meta.definitions['path']).toContain('not collapsed');
  });

  describe('max_touches', () => {
    const channels = (names: string[]) => names.map((channel) => ({ channel }));
    let site: FixtureWebsite;
    beforeAll(async () => {
      site = newWebsite();
      // Seven touches; a second journey shares its first two; a third has exactly five.
      await journey(site, channels(['A', 'B', 'C', 'D', 'E', 'F', 'G']));
      await journey(site, channels(['A', 'B', 'X']));
      await journey(site, channels(['A', 'B', 'C', 'D', 'E']));
    });

    it('keeps the first five steps by default and ends a longer path with ...', async () => {
      expect(counts(await paths(site))).toEqual([
        [['A', 'B', 'C', 'D', 'E'], 1],
        [['A', 'B', 'C', 'D', 'E', '...'], 1],
        [['A', 'B', 'X'], 1],
      ]);
    });

    it('groups journeys that share their first N steps', async () => {
      const body = await paths(site, { max_touches: 2 });
      expect(counts(body)).toEqual([[['A', 'B', '...'], 3]]);
      expect(body.data[0]?.revenue).toBe(30);
      expect(body.data[0]?.share).toBe(1);
    });

    it('does not mark a journey of exactly N steps', async () => {
      expect(counts(await paths(site, { max_touches: 3 }))).toEqual([
        [['A', 'B', 'C', '...'], 2],
        [['A', 'B', 'X'], 1],
      ]);
    });

    it('cuts max_touches above 10 to 10', async () => {
      const long = newWebsite();
      const twelve = 'abcdefghijkl'.split('');
      await journey(long, channels(twelve));
      const body = await paths(long, { max_touches: 50 });
      expect(counts(body)).toEqual([[[...twelve.slice(0, 10), '...'], 1]]);
      expect(counts(await paths(long, { max_touches: 10 }))).toEqual(counts(body));
    });

    it.each([0, -1, 2.5, 'many'])('refuses max_touches=%p', async (max) => {
      await expect(fx.call('attribution.getPaths', site, { from: FROM, to: TO, max_touches: max })).rejects.toMatchObject({ kind: 'invalid-request' });
    });
  });

  it('gives an outcome with no journey the path [Unattributed]', async () => {
    const site = newWebsite();
    await sale(fx, site, { occurred_at: MID, revenue: 7 }); // no visitor at all
    await journey(site, [], 3); // a visitor without sessions
    await journey(site, [{ channel: 'Direct', source: null }], 1);
    const body = await paths(site);
    expect(body.data).toEqual([
      { path: ['Unattributed'], outcomes: 2, revenue: 10, share: 2 / 3 },
      { path: ['Direct'], outcomes: 1, revenue: 1, share: 1 / 3 },
    ]);
    expect(body.meta).toMatchObject({ total_outcomes: 3, distinct_paths: 2, row_count: 2, truncated: false });
  });

  it('orders by outcomes, then revenue, then path', async () => {
    const site = newWebsite();
    await journey(site, [{ channel: 'Z' }], 1);
    await journey(site, [{ channel: 'Z' }], 1);
    await journey(site, [{ channel: 'Y' }], 50);
    await journey(site, [{ channel: 'C' }], 10);
    await journey(site, [{ channel: 'B' }], 10);
    await journey(site, [{ channel: 'B' }, { channel: 'A' }], 10);
    expect((await paths(site)).data.map((r) => [r.path.join('>'), r.outcomes, r.revenue])).toEqual([
      ['Z', 2, 2],
      ['Y', 1, 50],
      ['B', 1, 10],
      ['B>A', 1, 10],
      ['C', 1, 10],
    ]);
  });

  describe('limit', () => {
    let site: FixtureWebsite;
    beforeAll(async () => {
      site = newWebsite();
      const people = Array.from({ length: 55 }, (_, i) => ({ person: randomUUID(), campaign: `c${String(i).padStart(2, '0')}` }));
      await visits(fx, site, people.map((p) => ({ identity: p.person, at: shift(MID, -3_600_000), campaign: p.campaign })));
      for (const p of people) await sale(fx, site, { identity_id: p.person, occurred_at: MID, revenue: 1 });
    });

    it('returns 50 paths by default and says more exist', async () => {
      const body = await paths(site, { step: 'campaign' });
      expect(body.data).toHaveLength(50);
      expect(body.data[0]?.path).toEqual(['c00']);
      expect(body.data[0]?.share).toBeCloseTo(1 / 55, 12);
      expect(body.meta).toMatchObject({ row_count: 50, truncated: true, total_outcomes: 55, distinct_paths: 55 });
    });

    it('honours a smaller limit and clamps a larger one to 200', async () => {
      expect((await paths(site, { step: 'campaign', limit: 3 })).data.map((r) => r.path[0])).toEqual(['c00', 'c01', 'c02']);
      const all = await paths(site, { step: 'campaign', limit: 1000 });
      expect(all.data).toHaveLength(55);
      expect(all.meta.truncated).toBe(false);
    });

    it('is not truncated when the limit equals the number of paths', async () => {
      expect((await paths(site, { step: 'campaign', limit: 55 })).meta.truncated).toBe(false);
    });
  });

  describe('types and events', () => {
    let site: FixtureWebsite;
    beforeAll(async () => {
      site = newWebsite();
      const person = randomUUID();
      await visits(fx, site, [{ identity: person, at: shift(MID, -DAY), channel: 'Email' }]);
      await sale(fx, site, { identity_id: person, occurred_at: MID, revenue: 100, event_type: 'purchase', event_name: 'order_completed' });
      await sale(fx, site, { identity_id: person, occurred_at: MID, revenue: null, event_type: 'signup', event_name: 'trial_started' });
      await sale(fx, site, { identity_id: person, occurred_at: MID, revenue: null, event_type: 'custom', event_name: 'demo_booked' });
      await sale(fx, site, { occurred_at: MID, revenue: 20, event_type: 'purchase', event_name: 'upsell' });
    });

    it('counts every conversion without filters', async () => {
      expect(counts(await paths(site))).toEqual([[['Email'], 3], [['Unattributed'], 1]]);
    });

    it('filters by event type (a list), and share is of the filtered outcomes', async () => {
      const body = await paths(site, { types: ['purchase'] });
      expect(body.data).toEqual([
        { path: ['Email'], outcomes: 1, revenue: 100, share: 0.5 },
        { path: ['Unattributed'], outcomes: 1, revenue: 20, share: 0.5 },
      ]);
      expect(counts(await paths(site, { types: 'signup,custom' }))).toEqual([[['Email'], 2]]);
    });

    it('filters by event name, and combines with types', async () => {
      // Equal counts: the upsell's revenue (20) puts its path first.
      expect(counts(await paths(site, { events: ['upsell', 'demo_booked'] }))).toEqual([[['Unattributed'], 1], [['Email'], 1]]);
      expect(counts(await paths(site, { types: ['purchase'], events: ['upsell'] }))).toEqual([[['Unattributed'], 1]]);
      const none = await paths(site, { events: ['nothing_like_this'] });
      expect(none.data).toEqual([]);
      expect(none.meta).toMatchObject({ row_count: 0, truncated: false, total_outcomes: 0 });
    });
  });

  describe('stages', () => {
    let site: FixtureWebsite;
    const milestone = (o: Partial<MilestoneReachedV1> & { stage: string }): MilestoneReachedV1 => ({
      milestone_id: randomUUID(), website_id: site.id, workspace_id: site.workspace_id, occurred_at: MID,
      identity_id: null, conversion_id: null, email: null, deal_id: null, company_id: null, amount: null, currency: null, ...o,
    });
    beforeAll(async () => {
      site = newWebsite();
      const lead = randomUUID();
      const buyer = randomUUID();
      await visits(fx, site, [
        { identity: lead, at: shift(MID, -2 * DAY), channel: 'Paid Social' },
        { identity: buyer, at: shift(MID, -3 * DAY), channel: 'Organic Search' },
        { identity: buyer, at: shift(MID, -DAY), channel: 'Direct', source: null },
      ]);
      // The buyer's conversion ties the email to the identity (milestones resolve by email).
      await sale(fx, site, { identity_id: buyer, email: 'Buyer@Example.com', occurred_at: shift(MID, -DAY + 60_000), revenue: 5 });
      for (const m of [
        milestone({ stage: 'mql', identity_id: lead }),
        milestone({ stage: 'mql', email: 'buyer@example.com' }),
        milestone({ stage: 'deal_won', email: 'buyer@example.com', amount: 12000 }),
        milestone({ stage: 'deal_won' }),
        milestone({ stage: 'deal_won', identity_id: lead, occurred_at: shift(TO, 1) }),
      ]) await fx.deliver('milestone.reached', m, site);
    });

    it('gives the paths to milestones of the stages instead of conversions', async () => {
      const won = await paths(site, { stages: ['deal_won'] });
      expect(won.data).toEqual([
        { path: ['Organic Search', 'Direct'], outcomes: 1, revenue: 12000, share: 0.5 },
        { path: ['Unattributed'], outcomes: 1, revenue: 0, share: 0.5 },
      ]);
      expect(won.meta.definitions['outcomes']).toContain('milestones');
      expect(counts(await paths(site, { stages: ['mql'] }))).toEqual([[['Organic Search', 'Direct'], 1], [['Paid Social'], 1]]);
      expect(counts(await paths(site, { stages: 'mql,deal_won' }))).toEqual([
        [['Organic Search', 'Direct'], 2], [['Paid Social'], 1], [['Unattributed'], 1],
      ]);
    });

    it('answers a known stage nobody reached with no rows', async () => {
      expect((await paths(site, { stages: ['trial_started'] })).data).toEqual([]);
    });

    it('refuses a stage the workspace does not use, listing its vocabulary', async () => {
      const rejected = fx.call('attribution.getPaths', site, { from: FROM, to: TO, stages: ['deal_wonn'] });
      await expect(rejected).rejects.toMatchObject({ kind: 'invalid-request' });
      const allowed = ((await rejected.catch((e: { allowed: string[] }) => e)) as { allowed: string[] }).allowed;
      expect(allowed).toEqual(expect.arrayContaining(['deal_won', 'mql', 'trial_started']));
    });

    it('never blends stages with conversion filters', async () => {
      await expect(fx.call('attribution.getPaths', site, { from: FROM, to: TO, stages: ['mql'], types: ['purchase'] }))
        .rejects.toMatchObject({ kind: 'unsupported-combination' });
    });
  });

  it('follows a person through identity merges', async () => {
    const site = newWebsite();
    const phone = randomUUID();
    const laptop = randomUUID();
    await visits(fx, site, [
      { identity: phone, at: shift(MID, -5 * DAY), channel: 'Paid Social' },
      { identity: laptop, at: shift(MID, -4 * DAY), channel: 'Email' },
      { identity: phone, at: shift(MID, -3 * DAY), channel: 'Direct', source: null },
    ]);
    await sale(fx, site, { identity_id: laptop, occurred_at: MID, revenue: 10 });
    expect(counts(await paths(site))).toEqual([[['Email'], 1]]);
    await fx.deliver('identity.merged', { workspace_id: site.workspace_id, from_identity_id: phone, into_identity_id: laptop }, site);
    expect(counts(await paths(site))).toEqual([[['Paid Social', 'Email', 'Direct'], 1]]);
  });

  describe('lookback and window', () => {
    it('counts a touch exactly 90 days before the outcome, not one 90 days and 1 ms before', async () => {
      const site = newWebsite();
      const edge = randomUUID();
      const beyond = randomUUID();
      await visits(fx, site, [
        { identity: edge, at: shift(MID, -90 * DAY), channel: 'Edge' },
        { identity: beyond, at: shift(MID, -90 * DAY - 1), channel: 'Beyond' },
        { identity: beyond, at: shift(MID, 1), channel: 'After' }, // after the outcome: not a touch of it
      ]);
      await sale(fx, site, { identity_id: edge, occurred_at: MID, revenue: 1 });
      await sale(fx, site, { identity_id: beyond, occurred_at: MID, revenue: 2 });
      expect(counts(await paths(site))).toEqual([[['Unattributed'], 1], [['Edge'], 1]]);
    });

    it('counts a touch 90 days before an outcome at the very start of the window', async () => {
      const site = newWebsite();
      const person = randomUUID();
      await visits(fx, site, [{ identity: person, at: shift(FROM, -90 * DAY), channel: 'Edge' }, { identity: person, at: FROM, channel: 'Same instant' }]);
      await sale(fx, site, { identity_id: person, occurred_at: FROM, revenue: 1 });
      expect(counts(await paths(site))).toEqual([[['Edge', 'Same instant'], 1]]);
    });

    it('counts outcomes in [from, to): the start is in, the end is out', async () => {
      const site = newWebsite();
      await sale(fx, site, { occurred_at: FROM, revenue: 1 });
      await sale(fx, site, { occurred_at: shift(TO, -1), revenue: 2 });
      await sale(fx, site, { occurred_at: TO, revenue: 4 });
      await sale(fx, site, { occurred_at: shift(FROM, -1), revenue: 8 });
      const body = await paths(site);
      expect(body.data).toEqual([{ path: ['Unattributed'], outcomes: 2, revenue: 3, share: 1 }]);
      expect(body.meta.window).toEqual({ from: FROM, to: TO, expression: null });
    });

    it('refuses a reversed window', async () => {
      await expect(fx.call('attribution.getPaths', newWebsite(), { from: TO, to: FROM })).rejects.toMatchObject({ kind: 'invalid-window' });
    });
  });

  it('uses a written-back sales value as the revenue', async () => {
    const site = newWebsite();
    const c = await sale(fx, site, { occurred_at: MID, revenue: 10 });
    const changed = (sales: number | null, at: string) => ({
      conversion_id: c.conversion_id, website_id: site.id, workspace_id: site.workspace_id, identity_id: null, changed_at: at,
      conversion_occurred_at: MID, sales_value: sales, quote_value: null, currency: 'EUR',
      changes: [{ field: 'sales_value', old_value: null, new_value: sales }],
    });
    await fx.deliver('conversion.value_changed', changed(2500, shift(MID, DAY)), site);
    expect((await paths(site)).data[0]?.revenue).toBe(2500);
    // A cleared sales value falls back to the tracked revenue.
    await fx.deliver('conversion.value_changed', changed(null, shift(MID, 2 * DAY)), site);
    expect((await paths(site)).data[0]?.revenue).toBe(10);
  });
});
