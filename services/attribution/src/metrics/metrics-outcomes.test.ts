// GET /metrics on outcomes beyond plain conversions: customers and their lifetime figures, the
// cohort retention curve, resolution, milestones (stages), identity merges, written-back values,
// the lookback edge, and the shape of the reply against the OpenAPI document.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { MESSAGE_EXAMPLES, openApiDocument } from '@sightline/proto-schemas';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import type { MetricsBody } from './metrics.rpc';

const DAY = 86_400_000;
const WINDOW = { from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' };
const MARCH_20 = Date.parse('2026-03-20T12:00:00.000Z');
const at = (daysBefore: number, ms = 0): string => new Date(MARCH_20 - daysBefore * DAY + ms).toISOString();

describe('GET /metrics outcomes (chDB)', () => {
  let fx: AttributionFixture;
  beforeAll(async () => { fx = await openFixture(); }, 60_000);
  afterAll(() => fx?.close());

  const call = async (site: FixtureWebsite, query: Record<string, unknown>): Promise<MetricsBody> =>
    (await fx.call<MetricsBody>('attribution.getMetrics', site, { ...WINDOW, ...query })).body;

  it('customers, lifetime value, repeat rate and average orders look at every payment of the window\'s customers', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: 'a1', startedAt: '2026-01-10T10:00:00.000Z', channel: 'Email' }),
      hit({ identity: b, session: 'b1', startedAt: at(2), channel: 'Referral' }),
    ]), site);
    // a paid in January (before the window) and in March; b only in March; a zero-value signup is no payment.
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: '2026-01-10T11:00:00.000Z', revenue: 30 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 70 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0), revenue: 50 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0), revenue: null, event_type: 'conversion' }), site);
    const body = await call(site, { metrics: ['customers', 'lifetime_value', 'avg_ltv', 'repeat_rate', 'avg_orders', 'revenue_per_customer', 'revenue'] });
    expect(body.data).toEqual([{ customers: 2, lifetime_value: 150, avg_ltv: 75, repeat_rate: 0.5, avg_orders: 1.5, revenue_per_customer: 60, revenue: 120 }]);
    // Grouped by the acquiring touch: a came by Email in January, b by Referral.
    const grouped = await call(site, { metrics: ['customers', 'lifetime_value'], group_by: ['channel'] });
    expect(grouped.data).toEqual([
      { channel: 'Email', customers: 1, lifetime_value: 100 },
      { channel: 'Referral', customers: 1, lifetime_value: 50 },
    ]);
  });

  it('ratio metrics divide figures of the same window and filters, null on a zero denominator', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: 'a1', startedAt: at(1) }),
      hit({ identity: a, session: 'a1', startedAt: at(1), minutes: 1 }),
      hit({ identity: b, session: 'b1', startedAt: at(1) }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 90 }), site);
    const body = await call(site, { metrics: ['conversion_rate', 'pageviews_per_session', 'revenue_per_visitor'] });
    expect(body.data).toEqual([{ conversion_rate: 0.5, pageviews_per_session: 1.5, revenue_per_visitor: 45 }]);
    const empty = await call(site, { metrics: ['conversion_rate'], from: '2025-01-01T00:00:00Z', to: '2025-02-01T00:00:00Z' });
    expect(empty.data).toEqual([{ conversion_rate: null }]);
  });

  it('group_by=cohort answers a retention curve keyed by (cohort, period_index); the window picks cohorts, not payments', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    for (const [person, when, value] of [[a, '2026-01-05T10:00:00.000Z', 10], [a, '2026-02-05T10:00:00.000Z', 10], [a, '2026-04-05T10:00:00.000Z', 12], [b, '2026-02-10T10:00:00.000Z', 20]] as const) {
      await fx.deliver('conversion.created', conversion(site, { identity_id: person, occurred_at: when, revenue: value }), site);
    }
    const body = await call(site, { metrics: ['cohort_mrr', 'customers'], group_by: ['cohort'], from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' });
    expect(body.data).toEqual([
      { cohort: '2026-01', period_index: 0, cohort_mrr: 10, customers: 1 },
      { cohort: '2026-01', period_index: 1, cohort_mrr: 10, customers: 1 },
      { cohort: '2026-01', period_index: 3, cohort_mrr: 12, customers: 1 },
    ]);
  });

  it('group_by=resolution splits credited outcomes by why they have no journey', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [hit({ identity: a, session: 'a1', startedAt: at(1) })]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 1 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0), revenue: 2 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: null, anonymous_id: null, occurred_at: at(0), revenue: 4, origin: 'import' }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: null, anonymous_id: null, occurred_at: at(0), revenue: 8, relationship_started_at: '2025-01-01T00:00:00.000Z' }), site);
    const body = await call(site, { metrics: ['conversions', 'revenue'], group_by: ['resolution'] });
    const byResolution = Object.fromEntries(body.data.map((r) => [r['resolution'], r['revenue']]));
    expect(byResolution).toEqual({ attributed: 1, unmatched: 2, imported_contact: 4, predates_tracking: 8 });
    const filtered = await call(site, { metrics: ['conversions'], filter: ['resolution:in:unmatched|imported_contact'] });
    expect(filtered.data).toEqual([{ conversions: 2 }]);
  });

  it('stages count milestones credited by last_touch unless a model is given, named in meta.definitions', async () => {
    const site = newWebsite();
    const a = randomUUID();
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: 'a1', startedAt: at(9), channel: 'Paid Social' }),
      hit({ identity: a, session: 'a2', startedAt: at(3), channel: 'Email' }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, email: 'lead@acme.test', occurred_at: at(8) }), site);
    const milestone = MESSAGE_EXAMPLES['milestone.reached'];
    for (const stage of ['mql', 'deal_won']) {
      await fx.deliver('milestone.reached', { ...milestone, milestone_id: randomUUID(), website_id: site.id, workspace_id: site.workspace_id, stage, email: 'LEAD@acme.test', occurred_at: at(0) }, site);
    }
    const body = await call(site, { metrics: ['milestones'], stages: ['deal_won'], group_by: ['channel'] });
    expect(body.data).toEqual([{ channel: 'Email', milestones: 1 }, { channel: 'Paid Social', milestones: 0 }]);
    expect(body.meta.definitions['attribution_model']).toMatch(/^last_touch/);
    expect(body.meta.definitions['stages']).toMatch(/deal_won/);
    const first = await call(site, { metrics: ['milestones'], stages: ['deal_won', 'mql'], group_by: ['channel'], attribution: ['first_touch'] });
    expect(first.data[0]).toEqual({ channel: 'Paid Social', milestones: 2 });
    // The same lifecycle stage echoed onto the contact by a CRM sync (stage.changed, source crm:...) is not a second milestone.
    const stage = { ...MESSAGE_EXAMPLES['stage.changed'], conversion_id: randomUUID(), website_id: site.id, workspace_id: site.workspace_id, identity_id: a, changed_at: at(0) };
    await fx.deliver('stage.changed', { ...stage, changes: [{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'mql' }] }, site, 'crm:hubspot');
    const again = await call(site, { metrics: ['milestones'], stages: ['mql'] });
    expect(again.data).toEqual([{ milestones: 1 }]);
    // Set through the API it is the contact's own milestone.
    await fx.deliver('stage.changed', { ...stage, changes: [{ field: 'lifecycle_stage_raw', old_value: null, new_value: 'mql' }] }, site, 'api:k1');
    expect((await call(site, { metrics: ['milestones'], stages: ['mql'] })).data).toEqual([{ milestones: 2 }]);
  });

  it('credits the touches of merged identities, and uses a written-back sales value as revenue', async () => {
    const site = newWebsite();
    const [phone, laptop] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: phone, session: 'p1', startedAt: at(4), channel: 'Paid Social' }),
      hit({ identity: laptop, session: 'l1', startedAt: at(1), channel: 'Direct' }),
    ]), site);
    const c = conversion(site, { identity_id: laptop, occurred_at: at(0), revenue: 10 });
    await fx.deliver('conversion.created', c, site);
    await fx.deliver('identity.merged', { workspace_id: site.workspace_id, from_identity_id: phone, into_identity_id: laptop }, site);
    await fx.deliver('conversion.value_changed', { ...MESSAGE_EXAMPLES['conversion.value_changed'], conversion_id: c.conversion_id, website_id: site.id, workspace_id: site.workspace_id, sales_value: 500, changed_at: at(0, 1000) }, site);
    const body = await call(site, { metrics: ['conversions', 'revenue'], group_by: ['channel'], attribution: ['first_touch'] });
    expect(body.data[0]).toEqual({ channel: 'Paid Social', conversions: 1, revenue: 500 });
    const visitors = await call(site, { metrics: ['visitors'] });
    expect(visitors.data).toEqual([{ visitors: 1 }]);
  });

  it('a touch exactly 90 days before the conversion is in its journey; one a millisecond earlier is not', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: 'a1', startedAt: at(90), channel: 'Email' }),
      hit({ identity: b, session: 'b1', startedAt: at(90, -1), channel: 'Referral' }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0) }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0) }), site);
    const body = await call(site, { metrics: ['conversions'], group_by: ['channel'] });
    expect(body.data).toEqual([{ channel: 'Email', conversions: 1 }, { channel: 'Unattributed', conversions: 1 }]);
  });

  it('group_by=ad_campaign joins spend to the acquiring campaign: spend, clicks, roas, cac and ltv_cac', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: 'a1', startedAt: at(2), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', clickIds: { gclid: 'g' } }),
      hit({ identity: b, session: 'b1', startedAt: at(2), channel: 'Organic Search', source: 'google', medium: 'organic', campaign: null }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 200 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0), revenue: 50 }), site);
    const report = MESSAGE_EXAMPLES['ads.report_imported'];
    await fx.deliver('ads.report_imported', { ...report, website_id: site.id, workspace_id: site.workspace_id, rows: [{ ...report.rows[0]!, date: at(1).slice(0, 10), campaign_name: 'spring', spend: 100, clicks: 20, impressions: 1000 }] }, site);
    const body = await call(site, { metrics: ['spend', 'clicks', 'revenue', 'roas', 'cac', 'ltv_cac'], group_by: ['ad_campaign'] });
    expect(body.data.find((r) => r['ad_campaign'] === 'spring')).toEqual({ ad_campaign: 'spring', spend: 100, clicks: 20, revenue: 200, roas: 2, cac: 100, ltv_cac: 2 });
    // Unpaid credit has no campaign and no spend: roas over zero spend is null, not infinite; cac is 0.
    expect(body.data.find((r) => r['ad_campaign'] === '(none)')).toMatchObject({ spend: 0, revenue: 50, roas: null, cac: 0 });
    const platform = await call(site, { metrics: ['spend', 'impressions'], group_by: ['platform'] });
    expect(platform.data.find((r) => r['platform'] === 'google_ads')).toMatchObject({ spend: 100, impressions: 1000 });
  });

  it('outcome filters keep whole outcomes: identified, company_domain, event_name', async () => {
    const site = newWebsite();
    const [a, b] = [randomUUID(), randomUUID()];
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, email: 'ann@acme.test', occurred_at: at(0), event_name: 'signup' }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, email: null, occurred_at: at(0), event_name: 'order_completed' }), site);
    const count = async (filter: string[]) => (await call(site, { metrics: ['conversions'], filter })).data[0]?.['conversions'];
    expect(await count(['identified:eq:true'])).toBe(1);
    expect(await count(['identified:ne:true'])).toBe(1);
    expect(await count(['company_domain:eq:acme.test'])).toBe(1);
    expect(await count(['event_name:eq:order_completed'])).toBe(1);
    expect(await count(['match_type:eq:exact'])).toBe(0);
  });

  it('replies conform to the OpenAPI MetricsResponse', async () => {
    const site = newWebsite();
    const a = randomUUID();
    await fx.deliver('events.classified', batch(site, [hit({ identity: a, session: 'a1', startedAt: at(1) })]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 3 }), site);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
    const validate = ajv.compile({ $ref: 'https://sightline.test/openapi.json#/components/schemas/MetricsResponse' });
    for (const query of [
      { metrics: ['visitors', 'conversions'] },
      { metrics: ['conversions', 'revenue'], group_by: ['channel', 'source'], attribution: ['linear', 'time_decay'] },
      { metrics: ['sessions'], granularity: 'day', group_by: ['channel'] },
      { metrics: ['cohort_mrr'], group_by: ['cohort'] },
    ]) {
      const body = await call(site, query);
      expect(validate(body) ? [] : validate.errors).toEqual([]);
    }
  });
});
