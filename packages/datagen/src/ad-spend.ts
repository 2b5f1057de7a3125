// Daily ad platform rows. Clicks follow the paid visits the simulation is expected to send for each
// ad (so spend and traffic agree in aggregate), with noise; platforms claim more conversions than
// the site will attribute to them, as they do in practice.
import { AD_ACCOUNTS, CHANNELS } from './model';
import { campaignKey, DAY, isCampaignActive, RETURN_SESSIONS_PER_PERSON, type Context } from './context';
import { hash32, hashString, Rng } from './random';
import type { AdSpendRow } from './types';

/** Expected paid sessions per day per platform-and-kind, for one new person. */
function paidShares(): Map<string, number> {
  const firstTotal = CHANNELS.reduce((s, c) => s + c.weight, 0);
  const returnTotal = CHANNELS.reduce((s, c) => s + c.returnWeight, 0);
  const shares = new Map<string, number>();
  for (const channel of CHANNELS) {
    const channelShare = channel.weight / firstTotal + (RETURN_SESSIONS_PER_PERSON * channel.returnWeight) / returnTotal;
    const sourceTotal = channel.sources.reduce((s, src) => s + src.weight, 0);
    for (const src of channel.sources) {
      if (!src.platform || !src.campaignKind) continue;
      const key = campaignKey(src.platform, src.campaignKind);
      shares.set(key, (shares.get(key) ?? 0) + (channelShare * src.weight) / sourceTotal);
    }
  }
  return shares;
}

export function* adSpendRows(ctx: Context): Generator<AdSpendRow> {
  const { opts } = ctx;
  const rng = new Rng(hash32(opts.seed, hashString('ad-spend')));
  const shares = paidShares();
  const accounts = new Map(AD_ACCOUNTS.map((a) => [a.platform, a]));
  for (let day = 0; day < opts.days; day++) {
    const date = new Date(opts.start + day * DAY).toISOString().slice(0, 10);
    const people = ctx.newPerDay[day] ?? 0;
    const active = ctx.campaigns.filter((c) => isCampaignActive(c, day, opts.days));
    for (const campaign of active) {
      const key = campaignKey(campaign.platform, campaign.kind);
      const peers = active.filter((c) => campaignKey(c.platform, c.kind) === key);
      const campaignShare = campaign.weight / peers.reduce((s, c) => s + c.weight, 0);
      const account = accounts.get(campaign.platform)!;
      for (const adSet of campaign.adSets) {
        for (const ad of adSet.ads) {
          const expectedVisits = (people * (shares.get(key) ?? 0) * campaignShare) / campaign.adSets.length / adSet.ads.length;
          // Some clicks never become a tracked visit (bounces before load, blocked scripts).
          const clicks = rng.poisson(expectedVisits * 1.15 * rng.lognormal(1, 0.12));
          const ctr = campaign.ctr * rng.lognormal(1, 0.2);
          const impressions = Math.max(clicks, Math.round((clicks + rng.float() * 3) / ctr));
          const spend = round2(clicks * campaign.cpc * rng.lognormal(1, 0.18));
          const conversions = rng.poisson(clicks * 0.045);
          let revenue = 0;
          for (let i = 0; i < conversions; i++) revenue += rng.lognormal(140, 0.6);
          yield {
            date, platform: campaign.platform, account_id: account.id, account: account.name,
            campaign_id: campaign.id, campaign: campaign.name, ad_set_id: adSet.id, ad_set: adSet.name, ad_id: ad.id, ad: ad.name,
            spend, impressions, clicks, currency: opts.currency, platform_conversions: conversions, platform_revenue: round2(revenue),
          };
        }
      }
    }
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
