// GET /attribution/coverage on embedded chDB: each case uses a website of its own.
import { randomUUID } from 'node:crypto';
import { newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { DAY, responseValidator, sale, shift, visits } from '../../test/paths.fixtures';
import type { CoverageBody, CoverageBucket } from './coverage.rpc';

const FROM = '2026-03-01T00:00:00.000Z';
const TO = '2026-04-01T00:00:00.000Z';
const MID = '2026-03-15T12:00:00.000Z';
/** Tracking of the websites below begins with a session on this day. */
const TRACKING_BEGAN = '2025-06-01T00:00:00.000Z';
const validateCoverage = responseValidator('CoverageResponse');

describe('GET /attribution/coverage', () => {
  let fx: AttributionFixture;
  beforeAll(async () => { fx = await openFixture(); }, 60_000);
  afterAll(async () => { await fx?.close(); });

  async function coverage(site: FixtureWebsite, query: Record<string, unknown> = { from: FROM, to: TO }): Promise<CoverageBody> {
    const res = await fx.call<CoverageBody>('attribution.getAttributionCoverage', site, query);
    expect(res.status).toBe(200);
    expect(validateCoverage(res.body)).toEqual([]);
    return res.body;
  }
  /** bucket → [amount, facts], for every bucket. */
  const buckets = (body: CoverageBody): Record<string, [number, number]> =>
    Object.fromEntries(body.data.map((r) => [r.bucket, [r.amount, r.facts]]));
  const only = (bucket: CoverageBucket, amount: number, facts = 1): Record<string, [number, number]> => ({
    attributed: [0, 0], predates_tracking: [0, 0], imported_contact: [0, 0], no_visitor: [0, 0], no_sessions: [0, 0], [bucket]: [amount, facts],
  });

  /** A website whose tracking began at TRACKING_BEGAN (someone else's session). */
  async function trackedSite(): Promise<FixtureWebsite> {
    const site = newWebsite();
    await visits(fx, site, [{ identity: randomUUID(), at: TRACKING_BEGAN }]);
    return site;
  }

  it('answers all five buckets, zero when empty, with their expected flags', async () => {
    const body = await coverage(newWebsite());
    expect(body.data).toEqual([
      { bucket: 'attributed', amount: 0, facts: 0, share: 0, expected: true },
      { bucket: 'predates_tracking', amount: 0, facts: 0, share: 0, expected: true },
      { bucket: 'imported_contact', amount: 0, facts: 0, share: 0, expected: true },
      { bucket: 'no_visitor', amount: 0, facts: 0, share: 0, expected: false },
      { bucket: 'no_sessions', amount: 0, facts: 0, share: 0, expected: false },
    ]);
    expect(body.meta).toMatchObject({ row_count: 5, truncated: false, expected_gap_amount: 0, worth_investigating_amount: 0, total_amount: 0, total_facts: 0 });
    expect(body.meta.definitions['amount']).toContain('do not tie line for line to /metrics credit');
    expect(body.meta.definitions['precedence']).toContain('attributed, imported_contact, predates_tracking, no_visitor, no_sessions');
  });

  describe('each bucket', () => {
    it('attributed: a touch of the person in the lookback', async () => {
      const site = await trackedSite();
      const person = randomUUID();
      await visits(fx, site, [{ identity: person, at: shift(MID, -DAY) }]);
      await sale(fx, site, { identity_id: person, occurred_at: MID, revenue: 100 });
      expect(buckets(await coverage(site))).toEqual(only('attributed', 100));
    });

    it('imported_contact: origin import', async () => {
      const site = await trackedSite();
      await sale(fx, site, { origin: 'import', email: 'old@example.com', occurred_at: MID, revenue: 40 });
      expect(buckets(await coverage(site))).toEqual(only('imported_contact', 40));
    });

    it('predates_tracking: relationship_started_at before the first tracked session, whatever the payment date', async () => {
      const site = await trackedSite();
      await sale(fx, site, { identity_id: randomUUID(), relationship_started_at: shift(TRACKING_BEGAN, -1), occurred_at: MID, revenue: 30 });
      await sale(fx, site, { relationship_started_at: shift(TRACKING_BEGAN, -DAY), occurred_at: MID, revenue: 20 });
      expect(buckets(await coverage(site))).toEqual(only('predates_tracking', 50, 2));
    });

    it('predates_tracking: the person converted before tracking began (first known conversion)', async () => {
      const site = await trackedSite();
      const customer = randomUUID();
      await sale(fx, site, { identity_id: customer, occurred_at: '2025-01-10T00:00:00.000Z', revenue: 10 });
      await sale(fx, site, { identity_id: customer, occurred_at: MID, revenue: 10 }); // a renewal
      expect(buckets(await coverage(site))).toEqual(only('predates_tracking', 10));
    });

    it('predates_tracking: an earlier conversion of a merged identity or of the same email', async () => {
      const site = await trackedSite();
      const before = randomUUID();
      const now = randomUUID();
      await sale(fx, site, { identity_id: before, occurred_at: '2025-02-01T00:00:00.000Z', revenue: 5 });
      await sale(fx, site, { identity_id: now, occurred_at: MID, revenue: 60 });
      await sale(fx, site, { email: 'Renewal@Example.com ', occurred_at: '2025-03-01T00:00:00.000Z', revenue: 5 });
      await sale(fx, site, { email: 'renewal@example.com', occurred_at: MID, revenue: 70 }); // no visitor, same email
      expect(buckets(await coverage(site))).toMatchObject({ predates_tracking: [70, 1], no_sessions: [60, 1] });
      await fx.deliver('identity.merged', { workspace_id: site.workspace_id, from_identity_id: before, into_identity_id: now }, site);
      expect(buckets(await coverage(site))).toEqual(only('predates_tracking', 130, 2));
    });

    it('no_visitor: no identity, and the relationship began after tracking', async () => {
      const site = await trackedSite();
      await sale(fx, site, { occurred_at: MID, revenue: 15, email: 'new@example.com' });
      await sale(fx, site, { occurred_at: MID, revenue: 5, relationship_started_at: shift(TRACKING_BEGAN, 1) });
      expect(buckets(await coverage(site))).toEqual(only('no_visitor', 20, 2));
    });

    it('no_sessions: a visitor with no session ever, or only sessions older than the lookback', async () => {
      const site = await trackedSite();
      const never = randomUUID();
      const lapsed = randomUUID();
      await visits(fx, site, [{ identity: lapsed, at: shift(MID, -90 * DAY - 1) }]);
      await sale(fx, site, { identity_id: never, occurred_at: MID, revenue: 8 });
      await sale(fx, site, { identity_id: lapsed, occurred_at: MID, revenue: 4 });
      expect(buckets(await coverage(site))).toEqual(only('no_sessions', 12, 2));
    });
  });

  describe('precedence', () => {
    it('attributed beats every other reason', async () => {
      const site = await trackedSite();
      const person = randomUUID();
      await visits(fx, site, [{ identity: person, at: shift(MID, -90 * DAY) }]); // exactly at the lookback edge
      await sale(fx, site, { identity_id: person, origin: 'import', relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 9 });
      expect(buckets(await coverage(site))).toEqual(only('attributed', 9));
    });

    it('imported_contact beats predates_tracking and no_visitor', async () => {
      const site = await trackedSite();
      await sale(fx, site, { origin: 'import', relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 9 });
      expect(buckets(await coverage(site))).toEqual(only('imported_contact', 9));
    });

    it('predates_tracking beats no_visitor and no_sessions', async () => {
      const site = await trackedSite();
      await sale(fx, site, { relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 3 });
      await sale(fx, site, { identity_id: randomUUID(), relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 4 });
      expect(buckets(await coverage(site))).toEqual(only('predates_tracking', 7, 2));
    });

    it('nothing predates a website that has never tracked a session', async () => {
      const site = newWebsite();
      await sale(fx, site, { relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 3 });
      await sale(fx, site, { identity_id: randomUUID(), relationship_started_at: '2020-01-01T00:00:00.000Z', occurred_at: MID, revenue: 4 });
      expect(buckets(await coverage(site))).toMatchObject({ predates_tracking: [0, 0], no_visitor: [3, 1], no_sessions: [4, 1] });
    });
  });

  describe('revenue facts', () => {
    const changed = (site: FixtureWebsite, conversionId: string, sales: number | null, at: string) => ({
      conversion_id: conversionId, website_id: site.id, workspace_id: site.workspace_id, identity_id: null, changed_at: at,
      conversion_occurred_at: MID, sales_value: sales, quote_value: null, currency: 'EUR',
      changes: [{ field: 'sales_value', old_value: null, new_value: sales }],
    });

    it('counts conversions with a value above zero, a written-back sales value replacing the revenue', async () => {
      const site = await trackedSite();
      await sale(fx, site, { occurred_at: MID, revenue: null }); // no value: not a revenue fact
      await sale(fx, site, { occurred_at: MID, revenue: 0 });
      const quoted = await sale(fx, site, { occurred_at: MID, revenue: null });
      const refunded = await sale(fx, site, { occurred_at: MID, revenue: 50 });
      const upsold = await sale(fx, site, { occurred_at: MID, revenue: 50 });
      await fx.deliver('conversion.value_changed', changed(site, quoted.conversion_id, 1200, shift(MID, DAY)), site);
      await fx.deliver('conversion.value_changed', changed(site, refunded.conversion_id, 0, shift(MID, DAY)), site);
      await fx.deliver('conversion.value_changed', changed(site, upsold.conversion_id, 80, shift(MID, DAY)), site);
      expect(buckets(await coverage(site))).toEqual(only('no_visitor', 1280, 2));
    });

    it('counts facts in [from, to) only', async () => {
      const site = await trackedSite();
      await sale(fx, site, { occurred_at: FROM, revenue: 1 });
      await sale(fx, site, { occurred_at: shift(TO, -1), revenue: 2 });
      await sale(fx, site, { occurred_at: TO, revenue: 4 });
      await sale(fx, site, { occurred_at: shift(FROM, -1), revenue: 8 });
      const body = await coverage(site);
      expect(buckets(body)).toEqual(only('no_visitor', 3, 2));
      expect(body.meta.window).toEqual({ from: FROM, to: TO, expression: null });
    });

    it('refuses a reversed window', async () => {
      await expect(fx.call('attribution.getAttributionCoverage', newWebsite(), { from: TO, to: FROM })).rejects.toMatchObject({ kind: 'invalid-window' });
    });
  });

  it('splits the meta amounts into the expected gap and what is worth investigating, with shares of the amount', async () => {
    const site = await trackedSite();
    const visitor = randomUUID();
    await visits(fx, site, [{ identity: visitor, at: shift(MID, -DAY) }]);
    await sale(fx, site, { identity_id: visitor, occurred_at: MID, revenue: 400 }); // attributed
    await sale(fx, site, { origin: 'import', occurred_at: MID, revenue: 100 }); // imported_contact
    await sale(fx, site, { relationship_started_at: '2024-01-01T00:00:00.000Z', occurred_at: MID, revenue: 200.1 }); // predates_tracking
    await sale(fx, site, { occurred_at: MID, revenue: 0.2 }); // no_visitor
    await sale(fx, site, { occurred_at: MID, revenue: 0.1 }); // no_visitor
    await sale(fx, site, { identity_id: randomUUID(), occurred_at: MID, revenue: 99.6 }); // no_sessions
    const body = await coverage(site);
    expect(buckets(body)).toEqual({
      attributed: [400, 1], predates_tracking: [200.1, 1], imported_contact: [100, 1], no_visitor: [0.3, 2], no_sessions: [99.6, 1],
    });
    expect(body.meta).toMatchObject({ expected_gap_amount: 300.1, worth_investigating_amount: 99.9, total_amount: 800, total_facts: 6 });
    expect(body.data.map((r) => r.share)).toEqual([0.5, 200.1 / 800, 0.125, 0.3 / 800, 99.6 / 800]);
  });

  it('resolves the window from a period in the website timezone', async () => {
    const site = newWebsite({ timezone: 'Europe/Berlin' });
    await sale(fx, site, { occurred_at: '2026-02-28T23:30:00.000Z', revenue: 5 }); // 00:30 on 1 March in Berlin
    await sale(fx, site, { occurred_at: '2026-03-31T22:30:00.000Z', revenue: 7 }); // 00:30 on 1 April in Berlin
    const body = await coverage(site, { period: '2026-03-01..2026-03-31' });
    expect(body.meta.window).toMatchObject({ from: '2026-02-28T23:00:00.000Z', to: '2026-03-31T22:00:00.000Z' });
    expect(body.meta.timezone).toBe('Europe/Berlin');
    expect(buckets(body)['no_visitor']).toEqual([5, 1]);
  });
});
