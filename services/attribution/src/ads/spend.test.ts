// spendBy, the ad spend /metrics joins to platforms and campaigns: the same counting rules as
// /ads/performance (newest copy of a day, one level per account-day), keyed as /metrics needs.
import { newWebsite, openFixture, type AttributionFixture, type FixtureWebsite } from '../../test/fixture';
import { adReport, adRow } from '../../test/ads.fixtures';
import { spendBy } from './spend';

const MARCH = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-04-01T00:00:00Z') };

let f: AttributionFixture;
beforeAll(async () => {
  f = await openFixture();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

const deliverAds = (website: FixtureWebsite, ...args: Parameters<typeof adReport> extends [unknown, ...infer R] ? R : never) =>
  f.deliver('ads.report_imported', adReport(website, ...args), website);

/** Google reports every level (the coarser ones agree with the ads), Meta reports ads only. */
async function twoPlatforms(): Promise<FixtureWebsite> {
  const w = newWebsite();
  await deliverAds(w, [
    adRow({ level: 'account', item_id: 'acc-1', spend: 30, impressions: 3000, clicks: 60 }),
    adRow({ level: 'campaign', item_id: 'g-cmp-1', item_name: 'spring_sale', spend: 30, impressions: 3000, clicks: 60 }),
    adRow({ level: 'ad', item_id: 'g-ad-1', campaign_id: 'g-cmp-1', campaign_name: 'spring_sale', spend: 12, impressions: 1000, clicks: 20 }),
    adRow({ level: 'ad', item_id: 'g-ad-2', campaign_id: 'g-cmp-1', campaign_name: 'spring_sale', spend: 18, impressions: 2000, clicks: 40 }),
    adRow({ level: 'keyword', item_id: 'kw-1', campaign_id: 'g-cmp-1', spend: 30 }),
  ]);
  await deliverAds(w, [
    adRow({ level: 'ad', item_id: 'm-ad-1', campaign_id: 'm-cmp-1', campaign_name: 'spring_sale', spend: 5, impressions: 500, clicks: 5 }),
    adRow({ level: 'ad', item_id: 'm-ad-2', campaign_id: 'm-cmp-2', campaign_name: 'retargeting', spend: 7, impressions: 700, clicks: 7 }),
  ], { platform: 'meta_ads', account_id: 'act_1', currency: 'EUR' });
  return w;
}

describe('spendBy', () => {
  it('sums spend per platform without counting a level twice', async () => {
    const w = await twoPlatforms();
    const byPlatform = await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'platform' });
    expect(Object.fromEntries(byPlatform)).toEqual({
      google_ads: { spend: 30, impressions: 3000, clicks: 60, currencies: ['USD'] },
      meta_ads: { spend: 12, impressions: 1200, clicks: 12, currencies: ['EUR'] },
    });
  });

  it('keys campaigns by name (what touches carry as utm_campaign), across platforms, listing the currencies', async () => {
    const w = await twoPlatforms();
    const byCampaign = await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'ad_campaign' });
    expect(Object.fromEntries(byCampaign)).toEqual({
      spring_sale: { spend: 35, impressions: 3500, clicks: 65, currencies: ['EUR', 'USD'] },
      retargeting: { spend: 7, impressions: 700, clicks: 7, currencies: ['EUR'] },
    });
  });

  it('keys a campaign without a name by its id and leaves out spend naming no campaign', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'ad', item_id: 'ad-1', campaign_id: 'cmp-7', spend: 4 }), adRow({ level: 'ad', item_id: 'ad-2', spend: 6 })]);
    expect(Object.fromEntries(await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'ad_campaign' }))).toEqual({
      'cmp-7': { spend: 4, impressions: 1000, clicks: 20, currencies: ['USD'] },
    });
    expect((await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'platform' })).get('google_ads')).toMatchObject({ spend: 10 });
  });

  it('takes the newest copy of a restated day', async () => {
    const w = newWebsite();
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'c', item_name: 'brand', spend: 10 })]);
    await deliverAds(w, [adRow({ level: 'campaign', item_id: 'c', item_name: 'brand', spend: 14 })]);
    expect((await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'ad_campaign' })).get('brand')).toMatchObject({ spend: 14 });
  });

  it('reads the window\'s days in the timezone given (UTC by default)', async () => {
    const w = newWebsite();
    await deliverAds(w, [
      adRow({ date: '2026-02-28', level: 'campaign', item_id: 'c', item_name: 'brand', spend: 1 }),
      adRow({ date: '2026-03-01', level: 'campaign', item_id: 'c', item_name: 'brand', spend: 10 }),
    ]);
    // 1 March in Berlin starts at 23:00 UTC on 28 February.
    const berlin = { from: new Date('2026-02-28T23:00:00Z'), to: new Date('2026-03-01T23:00:00Z') };
    expect((await spendBy(f.ch, { websiteId: w.id, ...berlin, timezone: 'Europe/Berlin', by: 'ad_campaign' })).get('brand')).toMatchObject({ spend: 10 });
    expect((await spendBy(f.ch, { websiteId: w.id, ...berlin, by: 'ad_campaign' })).get('brand')).toMatchObject({ spend: 11 });
  });

  it('answers an empty map when there is no spend', async () => {
    expect((await spendBy(f.ch, { websiteId: newWebsite().id, ...MARCH, by: 'platform' })).size).toBe(0);
  });

  it('agrees with /ads/performance', async () => {
    const w = await twoPlatforms();
    const reply = await f.call<{ data: { platform: string | null; currency: string; spend: number }[] }>('attribution.getAdsPerformance', w, { level: 'account', from: '2026-03-01', to: '2026-04-01' });
    const byPlatform = await spendBy(f.ch, { websiteId: w.id, ...MARCH, by: 'platform' });
    expect(reply.body.data.map((r) => [r.platform, r.spend])).toEqual([['meta_ads', byPlatform.get('meta_ads')?.spend], ['google_ads', byPlatform.get('google_ads')?.spend]]);
  });
});
