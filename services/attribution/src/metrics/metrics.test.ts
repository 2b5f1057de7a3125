// GET /metrics on embedded chDB: each rule of the spec's /metrics section, on small hand-built data
// whose answers can be worked out by hand.
import { randomUUID } from 'node:crypto';
import { batch, conversion, hit, newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import type { MetricsBody } from './metrics.rpc';

const DAY = 86_400_000;
const CONVERTED_AT = Date.parse('2026-03-20T12:00:00.000Z');
const at = (daysBefore: number): string => new Date(CONVERTED_AT - daysBefore * DAY).toISOString();
const WINDOW = { from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' };

describe('GET /metrics (chDB)', () => {
  let fx: AttributionFixture;
  let site: FixtureWebsite;
  const people = { a: randomUUID(), b: randomUUID(), c: randomUUID() };

  beforeAll(async () => {
    fx = await openFixture();
    site = newWebsite();
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: people.a, session: 's1', startedAt: at(10), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', clickIds: { gclid: 'g1' } }),
      hit({ identity: people.a, session: 's1', startedAt: at(10), minutes: 3, channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', clickIds: { gclid: 'g1' }, page: '/shoes' }),
      hit({ identity: people.a, session: 's2', startedAt: at(2), channel: 'Organic Search', source: 'google', medium: 'organic', campaign: null }),
      hit({ identity: people.c, session: 's3', startedAt: at(1), channel: 'Direct', source: null, medium: null, campaign: null }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: people.a, occurred_at: at(0), revenue: 100 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: people.b, anonymous_id: null, occurred_at: at(0), revenue: 50 }), site);
  }, 60_000);
  afterAll(() => fx?.close());

  const metrics = async (query: Record<string, unknown>): Promise<MetricsBody> => {
    const reply = await fx.call<MetricsBody>('attribution.getMetrics', site, { ...WINDOW, ...query });
    expect(reply.status).toBe(200);
    return reply.body;
  };

  it('answers one total row without group_by', async () => {
    const body = await metrics({ metrics: ['visitors', 'sessions', 'pageviews', 'events', 'conversions', 'revenue'] });
    expect(body.data).toEqual([{ visitors: 2, sessions: 3, pageviews: 4, events: 4, conversions: 2, revenue: 150 }]);
    expect(body.meta.window).toEqual({ from: '2026-03-01T00:00:00.000Z', to: '2026-04-01T00:00:00.000Z', expression: null });
  });

  it('credits conversions and revenue by channel with the default last_touch, with totals', async () => {
    const body = await metrics({ metrics: ['conversions', 'revenue'], group_by: ['channel'] });
    // Every channel that appears in a journey has a row, with zero credit when the model gives it none.
    expect(body.data).toEqual([
      { channel: 'Organic Search', conversions: 1, revenue: 100 },
      { channel: 'Unattributed', conversions: 1, revenue: 50 },
      { channel: 'Paid Search', conversions: 0, revenue: 0 },
    ]);
    expect(body.totals).toEqual({ conversions: 2, revenue: 150 });
    expect(body.meta.definitions['attribution_model']).toMatch(/^last_touch/);
  });

  it('nests five models side by side', async () => {
    const body = await metrics({ metrics: ['conversions'], group_by: ['channel'], attribution: ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'] });
    const paid = body.data.find((r) => r['channel'] === 'Paid Search') as Record<string, { conversions: number }>;
    expect(paid['first_touch']?.conversions).toBe(1);
    expect(paid['last_touch']?.conversions).toBe(0);
    expect(paid['linear']?.conversions).toBe(0.5);
    expect(paid['u_shaped']?.conversions).toBe(0.5);
    const w10 = 0.5 ** (10 / 7);
    const w2 = 0.5 ** (2 / 7);
    expect(paid['time_decay']?.conversions).toBeCloseTo(w10 / (w10 + w2), 9);
    expect(body.meta['truncated_models']).toEqual([]);
  });
});

describe('GET /metrics rules (chDB)', () => {
  let fx: AttributionFixture;
  beforeAll(async () => { fx = await openFixture(); }, 60_000);
  afterAll(() => fx?.close());

  const call = async (site: FixtureWebsite, query: Record<string, unknown>): Promise<MetricsBody> => {
    const reply = await fx.call<MetricsBody>('attribution.getMetrics', site, { ...WINDOW, ...query });
    return reply.body;
  };
  const refused = (site: FixtureWebsite, query: Record<string, unknown>) =>
    expect(fx.call('attribution.getMetrics', site, { ...WINDOW, ...query })).rejects;

  /** Three visitors on paid and organic traffic from two countries; two convert. */
  async function seeded(): Promise<FixtureWebsite> {
    const site = newWebsite();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: a, session: `${a}-1`, startedAt: at(5), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', country: 'DE', clickIds: { gclid: 'x' } }),
      hit({ identity: a, session: `${a}-1`, startedAt: at(5), minutes: 2, channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', country: 'DE', page: '/cart', clickIds: { gclid: 'x' } }),
      hit({ identity: b, session: `${b}-1`, startedAt: at(3), channel: 'Organic Social', source: 'facebook', medium: 'social', campaign: null, country: 'FR' }),
      hit({ identity: b, session: `${b}-2`, startedAt: at(1), channel: 'Email', source: 'newsletter', medium: 'email', campaign: 'march', country: 'FR' }),
      hit({ identity: c, session: `${c}-1`, startedAt: at(2), channel: 'Organic Search', source: 'google', medium: 'organic', campaign: null, country: 'DE', type: 'custom', name: 'signup_click' }),
    ]), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: a, occurred_at: at(0), revenue: 80, event_name: 'order_completed' }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: b, occurred_at: at(0), revenue: 20, event_type: 'conversion', event_name: 'demo_request' }), site);
    return site;
  }

  it('nests up to four dimensions, each row carrying every dimension, and totals', async () => {
    const site = await seeded();
    const body = await call(site, { metrics: ['sessions', 'conversions'], group_by: ['channel', 'source', 'country', 'device_type'] });
    expect(body.data).toHaveLength(4);
    expect(body.data[0]).toEqual({ channel: 'Email', source: 'newsletter', country: 'FR', device_type: 'desktop', sessions: 1, conversions: 1 });
    expect(body.totals).toEqual({ sessions: 4, conversions: 2 });
  });

  it('filters with each operator, combined by conjunction', async () => {
    const site = await seeded();
    const sessions = async (filter: string[], conjunction?: string): Promise<unknown> =>
      (await call(site, { metrics: ['sessions'], filter, ...(conjunction ? { conjunction } : {}) })).data[0]?.['sessions'];
    expect(await sessions(['country:eq:DE'])).toBe(2);
    expect(await sessions(['country:ne:DE'])).toBe(2);
    expect(await sessions(['channel:in:Email|Paid Search'])).toBe(2);
    expect(await sessions(['channel:nin:Email|Paid Search'])).toBe(2);
    expect(await sessions(['source:contains:GOOG'])).toBe(2);
    expect(await sessions(['source:not_contains:goog'])).toBe(2);
    expect(await sessions(['country:eq:DE', 'channel:eq:Email'])).toBe(0);
    expect(await sessions(['country:eq:DE', 'channel:eq:Email'], 'or')).toBe(3);
    expect(await sessions(['event_name:eq:signup_click'])).toBe(1);
  });

  it('refuses an unknown filter dimension or operator with allowed, and a malformed filter', async () => {
    const site = newWebsite();
    await refused(site, { metrics: ['sessions'], filter: ['colour:eq:red'] }).toMatchObject({ kind: 'unknown-dimension', allowed: expect.arrayContaining(['channel']) });
    await refused(site, { metrics: ['sessions'], filter: ['identified:contains:t'] }).toMatchObject({ kind: 'unknown-filter-operator', allowed: ['eq', 'ne'] });
    await refused(site, { metrics: ['sessions'], filter: ['channel:like:x'] }).toMatchObject({ kind: 'unknown-filter-operator' });
    await refused(site, { metrics: ['sessions'], filter: ['channel'] }).toMatchObject({ kind: 'invalid-request' });
    await refused(site, { metrics: ['conversions'], filter: ['resolution:eq:lost'] }).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['unmatched']) });
  });

  it('only_paid keeps paid traffic and the credit of paid touches', async () => {
    const site = await seeded();
    const body = await call(site, { metrics: ['sessions', 'conversions'], only_paid: true });
    expect(body.data).toEqual([{ sessions: 1, conversions: 1 }]);
  });

  it('cuts at limit and says so in meta.truncated', async () => {
    const site = await seeded();
    const body = await call(site, { metrics: ['sessions'], group_by: ['channel'], limit: 2 });
    expect(body.data).toHaveLength(2);
    expect(body.meta.truncated).toBe(true);
    expect((await call(site, { metrics: ['sessions'], group_by: ['channel'], limit: 10 })).meta.truncated).toBe(false);
  });

  it('a model whose own ranking was cut before a row gives null there and is listed in truncated_models', async () => {
    const site = newWebsite();
    const events = [];
    // Person p1: Email then Referral; p2: Referral then Direct... first_touch and last_touch rank channels differently.
    const people = [randomUUID(), randomUUID(), randomUUID()];
    events.push(hit({ identity: people[0]!, session: 'p0a', startedAt: at(4), channel: 'Email' }));
    events.push(hit({ identity: people[0]!, session: 'p0b', startedAt: at(2), channel: 'Direct' }));
    events.push(hit({ identity: people[1]!, session: 'p1a', startedAt: at(4), channel: 'Email' }));
    events.push(hit({ identity: people[1]!, session: 'p1b', startedAt: at(2), channel: 'Direct' }));
    events.push(hit({ identity: people[2]!, session: 'p2a', startedAt: at(4), channel: 'Referral' }));
    await fx.deliver('events.classified', batch(site, events), site);
    for (const p of people) await fx.deliver('conversion.created', conversion(site, { identity_id: p, occurred_at: at(0), revenue: 10 }), site);
    const body = await call(site, { metrics: ['conversions'], group_by: ['channel'], attribution: ['first_touch', 'last_touch'], limit: 1 });
    expect(body.data).toEqual([{ channel: 'Email', first_touch: { conversions: 2 }, last_touch: { conversions: null } }]);
    expect(body.meta['truncated_models']).toEqual(['last_touch']);
  });

  it('counts influenced conversions fully in every row they touched', async () => {
    const site = await seeded();
    const body = await call(site, { metrics: ['influenced_conversions', 'conversions'], group_by: ['channel'] });
    const row = (channel: string) => body.data.find((r) => r['channel'] === channel);
    expect(row('Organic Social')).toMatchObject({ influenced_conversions: 1, conversions: 0 });
    expect(row('Email')).toMatchObject({ influenced_conversions: 1, conversions: 1 });
    expect(body.totals).toMatchObject({ influenced_conversions: 2, conversions: 2 });
  });

  it('granularity=day computes each day separately and fills empty days', async () => {
    const site = newWebsite();
    const p = randomUUID();
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: p, session: 'd1', startedAt: '2026-03-02T10:00:00.000Z' }),
      hit({ identity: p, session: 'd2', startedAt: '2026-03-04T10:00:00.000Z' }),
    ]), site);
    const body = await call(site, { metrics: ['visitors', 'sessions'], granularity: 'day', from: '2026-03-02T00:00:00Z', to: '2026-03-05T00:00:00Z' });
    expect(body.data).toEqual([
      { date: '2026-03-02', visitors: 1, sessions: 1 },
      { date: '2026-03-03', visitors: 0, sessions: 0 },
      { date: '2026-03-04', visitors: 1, sessions: 1 },
    ]);
    expect(body.totals).toEqual({ visitors: 1, sessions: 2 });
    await refused(site, { metrics: ['visitors'], granularity: 'week' }).toMatchObject({ kind: 'invalid-request', allowed: ['day'] });
  });

  it('refuses combinations the spec rules out', async () => {
    const site = newWebsite();
    await refused(site, { metrics: ['conversions'], attribution: ['linear'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['visitors'], group_by: ['channel'], attribution: ['linear'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['spend'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['spend'], group_by: ['platform', 'channel'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['conversions'], group_by: ['ad_campaign', 'country'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['milestones'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['conversions'], stages: ['deal_won'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['cohort_mrr'], group_by: ['channel'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['visitors'], group_by: ['cohort'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['visitors'], group_by: ['resolution'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: ['conversions'], group_by: ['page'] }).toMatchObject({ kind: 'unsupported-combination' });
    await refused(site, { metrics: [] }).toMatchObject({ kind: 'invalid-request' });
  });

  it('refuses a bad window', async () => {
    const site = newWebsite();
    await expect(fx.call('attribution.getMetrics', site, { metrics: ['visitors'], period: 'the day after never' })).rejects.toMatchObject({ kind: 'invalid-window' });
    await expect(fx.call('attribution.getMetrics', site, { metrics: ['visitors'], from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' })).rejects.toMatchObject({ kind: 'invalid-window' });
    await expect(fx.call('attribution.getMetrics', site, { metrics: ['visitors'], from: '2020-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' })).rejects.toMatchObject({ kind: 'window-too-large' });
    const reply = await fx.call<MetricsBody>('attribution.getMetrics', site, { metrics: ['visitors'], period: 'March 2026' });
    expect(reply.body.meta.window).toEqual({ from: '2026-03-01T00:00:00.000Z', to: '2026-04-01T00:00:00.000Z', expression: 'March 2026' });
  });

  it('explains every returned metric in meta.definitions', async () => {
    const site = await seeded();
    const all = ['visitors', 'sessions', 'pageviews', 'events', 'conversions', 'influenced_conversions', 'unique_converters', 'revenue', 'lifetime_value', 'customers', 'avg_ltv', 'repeat_rate', 'avg_orders', 'revenue_per_customer', 'conversion_rate', 'pageviews_per_session', 'revenue_per_visitor'];
    const body = await call(site, { metrics: all, group_by: ['channel'] });
    for (const m of all) expect(body.meta.definitions[m]).toEqual(expect.any(String));
    expect(body.meta.definitions['attribution_model']).toMatch(/last_touch/);
  });
});

describe('GET /metrics figures without float noise (chDB)', () => {
  let fx: AttributionFixture;
  let site: FixtureWebsite;

  beforeAll(async () => {
    fx = await openFixture();
    site = newWebsite();
    const person = randomUUID();
    await fx.deliver('events.classified', batch(site, [
      hit({ identity: person, session: 'n1', startedAt: at(3), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', clickIds: { gclid: 'g9' } }),
    ]), site);
    // 0.1 + 0.2 is 0.30000000000000004 in binary floating point.
    await fx.deliver('conversion.created', conversion(site, { identity_id: person, occurred_at: at(0), revenue: 0.1 }), site);
    await fx.deliver('conversion.created', conversion(site, { identity_id: person, occurred_at: at(0), revenue: 0.2 }), site);
  }, 60_000);
  afterAll(() => fx?.close());

  it('answers sums of fractions as the decimal they are, in rows and totals', async () => {
    const reply = await fx.call<MetricsBody>('attribution.getMetrics', site, { ...WINDOW, metrics: ['revenue', 'revenue_per_visitor'], group_by: ['channel'] });
    expect(reply.status).toBe(200);
    expect(JSON.stringify(reply.body.totals)).toBe('{"revenue":0.3,"revenue_per_visitor":0.3}');
    expect(reply.body.data).toEqual([{ channel: 'Paid Search', revenue: 0.3, revenue_per_visitor: 0.3 }]);
  });
});
