// GET /ads/performance over embedded chDB: every level, breakdown on and off, the platform filter,
// every metric (ratios null on a zero denominator), restated and redelivered reports, currencies,
// the window's day edges, request checks, and conformance to the OpenAPI response schema.
import { AD_LEVEL_NAMES, AD_METRIC_NAMES, MAX_AD_ROWS, type AdLevelName } from '@sightline/proto-schemas';
import { newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { adReport, adRow, consumerOf, envelopeOf, responseValidator } from '../../test/ads.fixtures';

type Row = Record<string, unknown>;
interface Body { data: Row[]; meta: Row & { definitions: Record<string, string>; currency_source: string; truncated: boolean; row_count: number } }

const MARCH = { from: '2026-03-01', to: '2026-04-01' };
const validate = responseValidator('AdsPerformanceResponse');

let f: AttributionFixture;
beforeAll(async () => {
  f = await openFixture();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

async function ads(website: FixtureWebsite, query: Record<string, unknown>): Promise<Body> {
  const reply = await f.call<Body>('attribution.getAdsPerformance', website, { ...MARCH, ...query });
  expect(reply.status).toBe(200);
  expect(validate(reply.body) ? [] : validate.errors).toEqual([]);
  expect(reply.body.meta.row_count).toBe(reply.body.data.length);
  return reply.body;
}

const deliverAds = (website: FixtureWebsite, ...args: Parameters<typeof adReport> extends [unknown, ...infer R] ? R : never) =>
  f.deliver('ads.report_imported', adReport(website, ...args), website);

/** An account reporting every nesting level for one day, each level with its own figures. */
const NESTED_DAY = [
  adRow({ level: 'account', item_id: 'acc-1', item_name: 'Main account', spend: 100, impressions: 10_000, clicks: 200 }),
  adRow({ level: 'campaign', item_id: 'cmp-1', item_name: 'spring_sale', campaign_type: 'search', spend: 90, impressions: 9000, clicks: 180 }),
  adRow({ level: 'ad_set', item_id: 'as-1', item_name: 'Shoes', campaign_id: 'cmp-1', campaign_name: 'spring_sale', spend: 80, impressions: 8000, clicks: 160 }),
  adRow({ level: 'ad', item_id: 'ad-1', item_name: 'Spring A', campaign_id: 'cmp-1', campaign_name: 'spring_sale', ad_set_id: 'as-1', ad_set_name: 'Shoes', spend: 70, impressions: 7000, clicks: 140 }),
];

describe('levels', () => {
  it.each(AD_LEVEL_NAMES.filter((l) => !['account', 'campaign', 'ad_set', 'ad'].includes(l)))('answers level=%s from that level\'s rows only', async (level) => {
    const w = newWebsite();
    await deliverAds(w, [
      adRow({ level: level as AdLevelName, item_id: `${level}-1`, item_name: `First ${level}`, campaign_id: 'cmp-1', campaign_name: 'spring_sale', ad_set_id: 'as-1', ad_set_name: 'Shoes', spend: 12 }),
      adRow({ level: level as AdLevelName, item_id: `${level}-2`, item_name: null, spend: 30 }),
      ...NESTED_DAY,
    ]);
    const body = await ads(w, { level, breakdown: true });
    expect(body.data).toEqual([
      { platform: 'google_ads', level, id: `${level}-2`, name: null, currency: 'USD', account_id: 'acc-1', account: 'Main account', campaign_id: null, campaign: null, campaign_type: null, ad_set_id: null, ad_set: null, spend: 30, impressions: 1000, clicks: 20 },
      { platform: 'google_ads', level, id: `${level}-1`, name: `First ${level}`, currency: 'USD', account_id: 'acc-1', account: 'Main account', campaign_id: 'cmp-1', campaign: 'spring_sale', campaign_type: null, ad_set_id: 'as-1', ad_set: 'Shoes', spend: 12, impressions: 1000, clicks: 20 },
    ]);
    const total = await ads(w, { level });
    expect(total.data).toEqual([{ level, platform: 'google_ads', platforms: ['google_ads'], currency: 'USD', items: 2, spend: 42, impressions: 2000, clicks: 40 }]);
  });

  it('answers each nesting level from its own reported rows when the platform reported it', async () => {
    const w = newWebsite();
    await deliverAds(w, NESTED_DAY);
    expect((await ads(w, { level: 'account', breakdown: true })).data).toEqual([
      { platform: 'google_ads', level: 'account', id: 'acc-1', name: 'Main account', currency: 'USD', spend: 100, impressions: 10_000, clicks: 200 },
    ]);
    expect((await ads(w, { level: 'campaign', breakdown: true })).data).toEqual([
      { platform: 'google_ads', level: 'campaign', id: 'cmp-1', name: 'spring_sale', currency: 'USD', account_id: 'acc-1', account: 'Main account', campaign_type: 'search', spend: 90, impressions: 9000, clicks: 180 },
    ]);
    expect((await ads(w, { level: 'ad_set', breakdown: true })).data).toEqual([
      { platform: 'google_ads', level: 'ad_set', id: 'as-1', name: 'Shoes', currency: 'USD', account_id: 'acc-1', account: 'Main account', campaign_id: 'cmp-1', campaign: 'spring_sale', campaign_type: null, spend: 80, impressions: 8000, clicks: 160 },
    ]);
    expect((await ads(w, { level: 'ad', breakdown: true })).data).toEqual([
      { platform: 'google_ads', level: 'ad', id: 'ad-1', name: 'Spring A', currency: 'USD', account_id: 'acc-1', account: 'Main account', campaign_id: 'cmp-1', campaign: 'spring_sale', campaign_type: null, ad_set_id: 'as-1', ad_set: 'Shoes', spend: 70, impressions: 7000, clicks: 140 },
    ]);
    for (const [level, spend] of [['account', 100], ['campaign', 90], ['ad_set', 80], ['ad', 70]] as const) {
      expect((await ads(w, { level })).data).toEqual([expect.objectContaining({ level, items: 1, spend })]);
    }
  });

  it('sums account, campaign and ad_set up from ad rows when the platform reported only ads', async () => {
    const w = newWebsite();
    const ad = (id: string, campaign: string, adSet: string, spend: number) =>
      adRow({ level: 'ad', item_id: id, item_name: id, campaign_id: campaign, campaign_name: `name-${campaign}`, ad_set_id: adSet, ad_set_name: `name-${adSet}`, spend, impressions: 100, clicks: 10 });
    await deliverAds(w, [ad('ad-1', 'cmp-1', 'as-1', 5), ad('ad-2', 'cmp-1', 'as-1', 7), ad('ad-3', 'cmp-1', 'as-2', 11), ad('ad-4', 'cmp-2', 'as-3', 13)], { account_name: null });

    const accounts = await ads(w, { level: 'account', breakdown: true });
    expect(accounts.data).toEqual([{ platform: 'google_ads', level: 'account', id: 'acc-1', name: null, currency: 'USD', spend: 36, impressions: 400, clicks: 40 }]);
    const campaigns = await ads(w, { level: 'campaign', breakdown: true });
    expect(campaigns.data.map((r) => [r['id'], r['name'], r['spend']])).toEqual([['cmp-1', 'name-cmp-1', 23], ['cmp-2', 'name-cmp-2', 13]]);
    const adSets = await ads(w, { level: 'ad_set', breakdown: true });
    expect(adSets.data.map((r) => [r['id'], r['name'], r['campaign_id'], r['spend']])).toEqual([['as-3', 'name-as-3', 'cmp-2', 13], ['as-1', 'name-as-1', 'cmp-1', 12], ['as-2', 'name-as-2', 'cmp-1', 11]]);
    expect((await ads(w, { level: 'campaign' })).data).toEqual([expect.objectContaining({ items: 2, spend: 36, impressions: 400, clicks: 40 })]);
    expect(campaigns.meta.definitions['level']).toMatch(/nearest finer level/);
  });

  it('chooses the level per account and day, so one account-day is never counted from two levels', async () => {
    const w = newWebsite();
    // Day 1: campaign and ad rows (campaign wins). Day 2: ad rows only. Day 3: an ad_set row only.
    await deliverAds(w, [
      adRow({ date: '2026-03-01', level: 'campaign', item_id: 'cmp-1', item_name: 'spring_sale', spend: 50 }),
      adRow({ date: '2026-03-01', level: 'ad', item_id: 'ad-1', campaign_id: 'cmp-1', spend: 45 }),
      adRow({ date: '2026-03-02', level: 'ad', item_id: 'ad-1', campaign_id: 'cmp-1', spend: 4 }),
      adRow({ date: '2026-03-02', level: 'ad', item_id: 'ad-2', campaign_id: 'cmp-1', spend: 6 }),
      adRow({ date: '2026-03-03', level: 'ad_set', item_id: 'as-1', campaign_id: 'cmp-1', spend: 3 }),
    ]);
    // A second account of the same platform reports campaigns on day 2 only.
    await deliverAds(w, [adRow({ date: '2026-03-02', level: 'campaign', item_id: 'cmp-9', item_name: 'brand', spend: 100 })], { account_id: 'acc-2', account_name: 'Second' });

    const campaigns = await ads(w, { level: 'campaign', breakdown: true });
    expect(campaigns.data.map((r) => [r['id'], r['account_id'], r['spend']])).toEqual([['cmp-9', 'acc-2', 100], ['cmp-1', 'acc-1', 63]]);
    const accounts = await ads(w, { level: 'account', breakdown: true });
    expect(accounts.data.map((r) => [r['id'], r['name'], r['spend']])).toEqual([['acc-2', 'Second', 100], ['acc-1', 'Main account', 63]]);
  });

  it('keeps spend of finer rows that name no item at the level, under a null id', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'ad', item_id: 'ad-1', campaign_id: 'cmp-1', spend: 4 }), adRow({ level: 'ad', item_id: 'ad-2', spend: 6 })]);
    const campaigns = await ads(w, { level: 'campaign', breakdown: true });
    expect(campaigns.data.map((r) => [r['id'], r['spend']])).toEqual([[null, 6], ['cmp-1', 4]]);
  });

  it('names an item by its newest non-empty name', async () => {
    const w = newWebsite();
    await deliverAds(w, [
      adRow({ date: '2026-03-01', level: 'campaign', item_id: 'cmp-1', item_name: 'old name' }),
      adRow({ date: '2026-03-02', level: 'campaign', item_id: 'cmp-1', item_name: 'new name' }),
      adRow({ date: '2026-03-03', level: 'campaign', item_id: 'cmp-1', item_name: null }),
    ]);
    expect((await ads(w, { level: 'campaign', breakdown: true })).data).toEqual([expect.objectContaining({ id: 'cmp-1', name: 'new name', spend: 30 })]);
  });
});

describe('breakdown and platform', () => {
  async function twoPlatforms(): Promise<FixtureWebsite> {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'g-1', spend: 10 }), adRow({ level: 'campaign', item_id: 'g-2', spend: 30 })]);
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'm-1', spend: 20 })], { platform: 'meta_ads', account_id: 'act_9' });
    return w;
  }

  it('breakdown=true gives one row per item, largest spend first', async () => {
    const w = await twoPlatforms();
    const body = await ads(w, { level: 'campaign', breakdown: true });
    expect(body.data.map((r) => [r['platform'], r['id'], r['spend']])).toEqual([['google_ads', 'g-2', 30], ['meta_ads', 'm-1', 20], ['google_ads', 'g-1', 10]]);
    expect(body.meta.truncated).toBe(false);
  });

  it('breakdown=false (the default) gives one total row; platform is null when several make it up', async () => {
    const w = await twoPlatforms();
    for (const breakdown of [false, 'false', undefined]) {
      const body = await ads(w, { level: 'campaign', ...(breakdown === undefined ? {} : { breakdown }) });
      expect(body.data).toEqual([{ level: 'campaign', platform: null, platforms: ['google_ads', 'meta_ads'], currency: 'USD', items: 3, spend: 60, impressions: 3000, clicks: 60 }]);
    }
  });

  it('accepts breakdown given as text', async () => {
    const w = await twoPlatforms();
    expect((await ads(w, { level: 'campaign', breakdown: 'true' })).data).toHaveLength(3);
  });

  it('platform keeps one platform\'s rows, in both forms', async () => {
    const w = await twoPlatforms();
    const items = await ads(w, { level: 'campaign', breakdown: true, platform: 'meta_ads' });
    expect(items.data.map((r) => r['id'])).toEqual(['m-1']);
    expect(items.meta['platform']).toBe('meta_ads');
    const total = await ads(w, { level: 'campaign', platform: 'google_ads' });
    expect(total.data).toEqual([expect.objectContaining({ platform: 'google_ads', platforms: ['google_ads'], items: 2, spend: 40 })]);
  });

  it('answers an empty list for a platform, level or website with no rows', async () => {
    const w = await twoPlatforms();
    for (const query of [{ level: 'campaign', platform: 'bing_ads' }, { level: 'keyword' }, { level: 'keyword', breakdown: true }]) {
      const body = await ads(w, query);
      expect(body.data).toEqual([]);
      expect(body.meta.currency_source).toMatch(/^ad_account:none/);
    }
    expect((await ads(newWebsite(), { level: 'ad', breakdown: true })).data).toEqual([]);
  });

  it('does not mix websites', async () => {
    const w = await twoPlatforms();
    const other = newWebsite({ workspace_id: w.workspace_id });
    await deliverAds(other, [adRow({ level: 'campaign', item_id: 'x-1', spend: 999 })]);
    expect((await ads(w, { level: 'campaign' })).data[0]).toMatchObject({ spend: 60 });
  });

  it(`returns at most ${MAX_AD_ROWS} items and says it truncated`, async () => {
    const w = newWebsite();
    const rows = Array.from({ length: MAX_AD_ROWS + 2 }, (_, i) => adRow({ level: 'search_term', item_id: `term-${i}`, spend: i % 7, impressions: 1, clicks: 0 }));
    await deliverAds(w, rows);
    const body = await ads(w, { level: 'search_term', breakdown: true, metrics: ['spend'] });
    expect(body.data).toHaveLength(MAX_AD_ROWS);
    expect(body.meta.truncated).toBe(true);
    expect(body.data[0]).toMatchObject({ spend: 6 });
    const total = await ads(w, { level: 'search_term' });
    expect(total.data[0]).toMatchObject({ items: MAX_AD_ROWS + 2, impressions: MAX_AD_ROWS + 2 });
    expect(total.meta.truncated).toBe(false);
  });
});

describe('metrics', () => {
  it('computes every metric from the summed figures', async () => {
    const w = newWebsite();
    await deliverAds(w, [
      adRow({ date: '2026-03-01', level: 'campaign', item_id: 'cmp-1', spend: 30, impressions: 4000, clicks: 50, platform_conversions: 4, platform_revenue: 120 }),
      adRow({ date: '2026-03-02', level: 'campaign', item_id: 'cmp-1', spend: 10, impressions: 1000, clicks: 30, platform_conversions: 1.5, platform_revenue: 40 }),
    ]);
    const body = await ads(w, { level: 'campaign', breakdown: true, metrics: [...AD_METRIC_NAMES] });
    expect(body.data[0]).toMatchObject({
      spend: 40, impressions: 5000, clicks: 80, platform_conversions: 5.5, platform_revenue: 160,
      ctr: 80 / 5000, cpc: 40 / 80, cpm: (40 * 1000) / 5000, platform_roas: 160 / 40, platform_conversion_rate: 5.5 / 80,
    });
    expect(Object.keys(body.meta.definitions)).toEqual([...AD_METRIC_NAMES, 'level', 'window', 'currency']);
    for (const metric of AD_METRIC_NAMES) expect(body.meta.definitions[metric]).toEqual(expect.any(String));
  });

  it('answers a ratio as null when its denominator is 0, and missing platform figures as 0', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1', spend: 0, impressions: 0, clicks: 0 })]);
    const body = await ads(w, { level: 'campaign', breakdown: true, metrics: [...AD_METRIC_NAMES] });
    expect(body.data[0]).toMatchObject({ spend: 0, impressions: 0, clicks: 0, platform_conversions: 0, platform_revenue: 0, ctr: null, cpc: null, cpm: null, platform_roas: null, platform_conversion_rate: null });
  });

  it('returns spend, impressions and clicks by default, and only the metrics asked for otherwise', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1' })]);
    const byDefault = await ads(w, { level: 'campaign' });
    expect(Object.keys(byDefault.data[0] as Row)).toEqual(['level', 'platform', 'platforms', 'currency', 'items', 'spend', 'impressions', 'clicks']);
    expect(Object.keys(byDefault.meta.definitions)).toEqual(['spend', 'impressions', 'clicks', 'level', 'window', 'currency']);
    const asked = await ads(w, { level: 'campaign', breakdown: true, metrics: 'cpc, ctr' });
    expect(asked.data[0]).toEqual(expect.objectContaining({ cpc: 0.5, ctr: 0.02 }));
    expect(asked.data[0]).not.toHaveProperty('spend');
    expect(Object.keys(asked.meta.definitions)).toEqual(['cpc', 'ctr', 'level', 'window', 'currency']);
  });

  it('cuts float noise from amounts', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ date: '2026-03-01', level: 'campaign', item_id: 'c', spend: 0.1 }), adRow({ date: '2026-03-02', level: 'campaign', item_id: 'c', spend: 0.2 })]);
    expect((await ads(w, { level: 'campaign' })).data[0]).toMatchObject({ spend: 0.3 });
  });
});

describe('restated and redelivered reports', () => {
  it('takes the newest report of a day: a restated row replaces the earlier one', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1', spend: 10, clicks: 5 }), adRow({ date: '2026-03-06', level: 'campaign', item_id: 'cmp-1', spend: 1 })]);
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1', item_name: 'renamed', spend: 15, clicks: 9 })]);
    const body = await ads(w, { level: 'campaign', breakdown: true });
    expect(body.data).toEqual([expect.objectContaining({ id: 'cmp-1', name: 'renamed', spend: 16, clicks: 29 })]);
  });

  it('orders copies by when they were published, not when they arrived', async () => {
    const w = newWebsite();
    const consume = consumerOf(f, 'ads.report_imported');
    await consume(envelopeOf('ads.report_imported', adReport(w, [adRow({ level: 'campaign', item_id: 'cmp-1', spend: 25 })]), w, '2026-03-07T10:00:00.000Z'));
    // An older import delivered late (a redelivery after a crash) does not undo the newer one.
    await consume(envelopeOf('ads.report_imported', adReport(w, [adRow({ level: 'campaign', item_id: 'cmp-1', spend: 10 })]), w, '2026-03-06T10:00:00.000Z'));
    expect((await ads(w, { level: 'campaign' })).data[0]).toMatchObject({ spend: 25 });
  });

  it('takes the later row when one report repeats a key', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1', spend: 10 }), adRow({ level: 'campaign', item_id: 'cmp-1', spend: 12 })]);
    expect((await ads(w, { level: 'campaign' })).data[0]).toMatchObject({ items: 1, spend: 12 });
  });

  it('changes nothing when the same message is delivered twice, or its content is imported twice', async () => {
    const w = newWebsite();
    const report = adReport(w, [adRow({ level: 'ad', item_id: 'ad-1', campaign_id: 'cmp-1', spend: 10 }), adRow({ level: 'ad', item_id: 'ad-2', campaign_id: 'cmp-1', spend: 5 })]);
    const consume = consumerOf(f, 'ads.report_imported');
    const envelope = envelopeOf('ads.report_imported', report, w);
    await consume(envelope);
    const once = await ads(w, { level: 'campaign', breakdown: true, metrics: [...AD_METRIC_NAMES] });
    await consume(envelope);
    await f.deliver('ads.report_imported', report, w);
    const again = await ads(w, { level: 'campaign', breakdown: true, metrics: [...AD_METRIC_NAMES] });
    expect(again.data).toEqual(once.data);
    expect(again.data[0]).toMatchObject({ spend: 15 });
    const stored = await f.ch.query<{ n: number }>('SELECT count() AS n FROM ad_report_rows WHERE website_id = {w:UUID}', { w: w.id });
    expect(Number(stored[0]?.n)).toBe(4); // the redelivered envelope was dropped by its token; the re-import is stored and read once
  });

  it('stores reports delivered concurrently (coalesced into groups)', async () => {
    const w = newWebsite();
    const consume = consumerOf(f, 'ads.report_imported');
    await Promise.all([1, 2, 3].map((i) => consume(envelopeOf('ads.report_imported', adReport(w, [adRow({ level: 'campaign', item_id: `cmp-${i}`, spend: i })]), w))));
    expect((await ads(w, { level: 'campaign' })).data[0]).toMatchObject({ items: 3, spend: 6 });
  });
});

describe('currencies', () => {
  it('names the ad-account currency', async () => {
    const w = newWebsite({ currency: 'EUR' });
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'cmp-1' })], { currency: 'USD' });
    const body = await ads(w, { level: 'campaign' });
    expect(body.meta.currency_source).toBe('ad_account:USD');
    expect(body.meta['currency']).toBe('EUR');
    expect(body.data[0]).toMatchObject({ currency: 'USD' });
  });

  it('never adds up amounts in different currencies: one total row per currency, and a note naming each', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'g-1', spend: 10 })], { currency: 'USD' });
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'm-1', spend: 7 })], { platform: 'meta_ads', account_id: 'act_1', currency: 'EUR' });
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'm-2', spend: 3 })], { platform: 'meta_ads', account_id: 'act_2', currency: 'USD' });

    const totals = await ads(w, { level: 'campaign' });
    expect(totals.data).toEqual([
      expect.objectContaining({ currency: 'EUR', platform: 'meta_ads', items: 1, spend: 7 }),
      expect.objectContaining({ currency: 'USD', platform: null, platforms: ['google_ads', 'meta_ads'], items: 2, spend: 13 }),
    ]);
    expect(totals.meta.currency_source).toMatch(/^ad_account:mixed \(EUR, USD\)/);
    const items = await ads(w, { level: 'campaign', breakdown: true });
    expect(items.data.map((r) => [r['id'], r['currency']])).toEqual([['g-1', 'USD'], ['m-1', 'EUR'], ['m-2', 'USD']]);
    expect(items.meta.currency_source).toMatch(/^ad_account:mixed \(EUR, USD\)/);
    // Within one platform the currencies can still be mixed; a platform in one currency is not.
    expect((await ads(w, { level: 'campaign', platform: 'meta_ads' })).meta.currency_source).toMatch(/mixed/);
    expect((await ads(w, { level: 'campaign', platform: 'google_ads' })).meta.currency_source).toBe('ad_account:USD');
  });
});

describe('window', () => {
  async function days(timezone: string): Promise<FixtureWebsite> {
    const w = newWebsite({ timezone });
    await deliverAds(w, ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03'].map((date, i) => adRow({ date, level: 'campaign', item_id: 'cmp-1', spend: 10 ** i })));
    return w;
  }

  it('counts the days from the first day through the day before an exclusive midnight `to`', async () => {
    const w = await days('UTC');
    expect((await ads(w, { level: 'campaign', from: '2026-03-01', to: '2026-03-03' })).data[0]).toMatchObject({ spend: 110 });
  });

  it('reads the days in the website timezone', async () => {
    const w = await days('Europe/Berlin');
    const body = await ads(w, { level: 'campaign', from: '2026-03-01', to: '2026-03-03' });
    expect(body.meta['window']).toMatchObject({ from: '2026-02-28T23:00:00.000Z', to: '2026-03-02T23:00:00.000Z' });
    expect(body.data[0]).toMatchObject({ spend: 110 });
    const la = await days('America/Los_Angeles');
    expect((await ads(la, { level: 'campaign', from: '2026-03-01', to: '2026-03-03' })).data[0]).toMatchObject({ spend: 110 });
  });

  it('counts a day that overlaps the window only in part', async () => {
    const w = await days('UTC');
    expect((await ads(w, { level: 'campaign', from: '2026-03-02T12:00:00Z', to: '2026-03-02T13:00:00Z' })).data[0]).toMatchObject({ spend: 100 });
    expect((await ads(w, { level: 'campaign', from: '2026-02-28T23:00:00Z', to: '2026-03-01T00:00:01Z' })).data[0]).toMatchObject({ spend: 11 });
  });

  it('resolves a period and refuses a bad window', async () => {
    const w = await days('UTC');
    expect((await ads(w, { level: 'campaign', from: undefined, to: undefined, period: '2026-03-01..2026-03-02' })).data[0]).toMatchObject({ spend: 110 });
    await expect(f.call('attribution.getAdsPerformance', w, { level: 'campaign', from: '2026-03-05', to: '2026-03-01' })).rejects.toMatchObject({ kind: 'invalid-window' });
    await expect(f.call('attribution.getAdsPerformance', w, { level: 'campaign', period: 'the twelfth of never' })).rejects.toMatchObject({ kind: 'invalid-window' });
    await expect(f.call('attribution.getAdsPerformance', w, { level: 'campaign', from: '2020-01-01', to: '2026-01-01' })).rejects.toMatchObject({ kind: 'window-too-large' });
  });
});

describe('request checks', () => {
  const w = newWebsite();

  it('requires a known level', async () => {
    await expect(f.call('attribution.getAdsPerformance', w, { ...MARCH })).rejects.toMatchObject({ kind: 'invalid-request', allowed: [...AD_LEVEL_NAMES] });
    await expect(f.call('attribution.getAdsPerformance', w, { ...MARCH, level: 'creative' })).rejects.toMatchObject({ kind: 'invalid-request', allowed: [...AD_LEVEL_NAMES] });
  });

  it('refuses an unknown metric with the allowed list', async () => {
    await expect(f.call('attribution.getAdsPerformance', w, { ...MARCH, level: 'ad', metrics: ['spend', 'roas'] })).rejects.toMatchObject({ kind: 'unknown-metric', allowed: [...AD_METRIC_NAMES] });
  });

  it('refuses a breakdown that is not a boolean and a malformed platform', async () => {
    await expect(f.call('attribution.getAdsPerformance', w, { ...MARCH, level: 'ad', breakdown: 'yes' })).rejects.toMatchObject({ kind: 'invalid-request' });
    await expect(f.call('attribution.getAdsPerformance', w, { ...MARCH, level: 'ad', platform: "x' OR 1=1" })).rejects.toMatchObject({ kind: 'invalid-request' });
  });
});
