// Ad spend for /metrics (group_by=platform or ad_campaign): the same rows /ads/performance counts,
// so the two endpoints agree. By platform the rows are counted at the account level, by campaign
// at the campaign level; either way each account-day comes from one report level only (ad-level
// rows are summed up where the platform reported no coarser level), so nothing is counted twice.
import type { ClickHouseStore } from '@sightline/kit';
import { roundAmount } from './figures';
import { levelRowsParams, levelRowsSql } from './level-rows.sql';

export interface SpendQuery {
  websiteId: string;
  /** The window, [from, to). */
  from: Date;
  to: Date;
  /** platform: keys like `google_ads`. ad_campaign: the campaign's name (what touches carry as utm_campaign). */
  by: 'platform' | 'ad_campaign';
  /** Timezone the window's days are read in (the website's); UTC when omitted. */
  timezone?: string;
}

export interface SpendFigures {
  spend: number;
  impressions: number;
  clicks: number;
  /** Currencies the spend is in; more than one means the spend adds up amounts in different currencies. */
  currencies: string[];
}

interface SpendRow {
  key: string;
  spend_sum: number | string;
  impressions_sum: number | string;
  clicks_sum: number | string;
  currencies: string[];
}

/**
 * Spend, impressions and clicks per platform or per campaign name. A campaign without a name is
 * keyed by its id; rows naming no campaign at all are left out of the campaign breakdown.
 */
export async function spendBy(ch: ClickHouseStore, query: SpendQuery): Promise<Map<string, SpendFigures>> {
  const level = query.by === 'platform' ? 'account' : 'campaign';
  const key = query.by === 'platform' ? 'platform' : `if(name != '', name, id)`;
  const rows = await ch.query<SpendRow>(
    `SELECT key, sum(spend) AS spend_sum, sum(impressions) AS impressions_sum, sum(clicks) AS clicks_sum,
            arraySort(groupUniqArray(currency)) AS currencies
       FROM (SELECT ${key} AS key, spend, impressions, clicks, currency FROM (${levelRowsSql(level)}))
      WHERE key != ''
      GROUP BY key`,
    levelRowsParams(level, { websiteId: query.websiteId, from: query.from, to: query.to, timezone: query.timezone ?? 'UTC', platform: null }),
  );
  const spend = new Map<string, SpendFigures>();
  for (const r of rows) {
    spend.set(r.key, { spend: roundAmount(Number(r.spend_sum)), impressions: Number(r.impressions_sum), clicks: Number(r.clicks_sum), currencies: r.currencies });
  }
  return spend;
}
