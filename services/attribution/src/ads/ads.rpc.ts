// GET /ads/performance: ad-platform spend and delivery at one level, from ads.report_imported.
// breakdown=true gives one row per item at the level; false gives the level's total. Amounts stay
// in the ad-account currency and are never summed across currencies: totals are one row per
// currency, and meta.currency_source says which currency (or currencies) the rows are in.
import type { ClickHouseStore } from '@sightline/kit';
import { AD_LEVELS, AD_METRICS, AD_LEVEL_HIERARCHY, MAX_AD_ROWS, type AdLevelName, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import { analyticsContext, metaOf } from '../analytics/context';
import { FIGURE_SUMS_SQL, figuresOf, metricValues, type FigureSumsRow } from './figures';
import { levelRowsParams, levelRowsSql, type AdRowsScope } from './level-rows.sql';
import { adsQuery, type AdsQuery, type AdsRawQuery } from './request';

type AdRow = Record<string, string | number | string[] | null>;

interface ItemSumsRow extends FigureSumsRow {
  platform: string;
  currency: string;
  id: string;
  item_name: string;
  account_id_latest: string;
  account: string;
  campaign_id_latest: string;
  campaign: string;
  campaign_type_latest: string;
  ad_set_id_latest: string;
  ad_set: string;
  item_count: number | string;
  currencies: string[];
}

interface TotalSumsRow extends FigureSumsRow {
  currency: string;
  platforms: string[];
  items: number | string;
}

export function adsRpcHandlers(ch: ClickHouseStore) {
  return {
    'attribution.getAdsPerformance': async (request: ApiRequest<AdsRawQuery>): Promise<ApiResponse> => {
      const ctx = analyticsContext(request);
      const query = adsQuery(ctx.request.query);
      const scope: AdRowsScope = { websiteId: ctx.website.id, from: ctx.from, to: ctx.to, timezone: ctx.website.timezone, platform: query.platform };
      const answer = query.breakdown ? await itemRows(ch, query, scope) : await totalRows(ch, query, scope);
      return {
        status: 200,
        body: {
          data: answer.rows,
          meta: metaOf(ctx, {
            row_count: answer.rows.length,
            truncated: answer.truncated,
            definitions: definitionsOf(query),
            currency_source: currencySource(answer.currencies),
            level: query.level,
            platform: query.platform,
          }),
        },
      };
    },
  };
}

interface Answer {
  rows: AdRow[];
  truncated: boolean;
  currencies: string[];
}

/** One row per item at the level (and currency), largest spend first. */
async function itemRows(ch: ClickHouseStore, query: AdsQuery, scope: AdRowsScope): Promise<Answer> {
  const found = await ch.query<ItemSumsRow>(
    `SELECT platform, currency, id,
            argMaxIf(name, date, name != '') AS item_name,
            argMaxIf(account_id, date, account_id != '') AS account_id_latest,
            argMaxIf(account_name, date, account_name != '') AS account,
            argMaxIf(campaign_id, date, campaign_id != '') AS campaign_id_latest,
            argMaxIf(campaign_name, date, campaign_name != '') AS campaign,
            argMaxIf(campaign_type, date, campaign_type != '') AS campaign_type_latest,
            argMaxIf(ad_set_id, date, ad_set_id != '') AS ad_set_id_latest,
            argMaxIf(ad_set_name, date, ad_set_name != '') AS ad_set,
            ${FIGURE_SUMS_SQL},
            count() OVER () AS item_count,
            groupUniqArray(currency) OVER () AS currencies
       FROM (${levelRowsSql(query.level)})
      GROUP BY platform, currency, id
      ORDER BY spend_sum DESC, platform, id, currency
      LIMIT {limit:UInt32}`,
    { ...levelRowsParams(query.level, scope), limit: MAX_AD_ROWS },
  );
  const rows = found.map((r) => ({
    platform: r.platform,
    level: query.level,
    id: textOrNull(r.id),
    name: textOrNull(r.item_name),
    currency: r.currency,
    ...parentsOf(query.level, r),
    ...metricValues(figuresOf(r), query.metrics),
  }));
  const itemCount = Number(found[0]?.item_count ?? 0);
  return { rows, truncated: itemCount > rows.length, currencies: [...(found[0]?.currencies ?? [])].sort() };
}

/** One total row per currency: amounts in different currencies are not added up. */
async function totalRows(ch: ClickHouseStore, query: AdsQuery, scope: AdRowsScope): Promise<Answer> {
  const found = await ch.query<TotalSumsRow>(
    `SELECT currency, arraySort(groupUniqArray(platform)) AS platforms, uniqExact(platform, id) AS items, ${FIGURE_SUMS_SQL}
       FROM (${levelRowsSql(query.level)})
      GROUP BY currency
      ORDER BY currency`,
    levelRowsParams(query.level, scope),
  );
  const rows = found.map((r) => ({
    level: query.level,
    // The platform when one platform makes up the total; null when several do (platforms lists them).
    platform: r.platforms.length === 1 ? (r.platforms[0] as string) : null,
    platforms: r.platforms,
    currency: r.currency,
    items: Number(r.items),
    ...metricValues(figuresOf(r), query.metrics),
  }));
  return { rows, truncated: false, currencies: found.map((r) => r.currency) };
}

/** The enclosing items a row names, by level: an ad names its ad set, campaign and account. */
function parentsOf(level: AdLevelName, r: ItemSumsRow): AdRow {
  const depth = (AD_LEVEL_HIERARCHY as readonly string[]).indexOf(level);
  // Levels outside the nesting (keyword, geo, ...) sit under an ad set, a campaign or the account.
  const below = depth === -1 ? AD_LEVEL_HIERARCHY.length : depth;
  const parents: AdRow = {};
  if (below >= 1) Object.assign(parents, { account_id: textOrNull(r.account_id_latest), account: textOrNull(r.account), campaign_type: textOrNull(r.campaign_type_latest) });
  if (below >= 2) Object.assign(parents, { campaign_id: textOrNull(r.campaign_id_latest), campaign: textOrNull(r.campaign) });
  if (below >= 3) Object.assign(parents, { ad_set_id: textOrNull(r.ad_set_id_latest), ad_set: textOrNull(r.ad_set) });
  return parents;
}

const textOrNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

function definitionsOf(query: AdsQuery): Record<string, string> {
  const definitions: Record<string, string> = {};
  for (const metric of query.metrics) definitions[metric] = AD_METRICS.find((m) => m.name === metric)?.description ?? metric;
  const level = AD_LEVELS.find((l) => l.name === query.level)?.description ?? query.level;
  const nesting = (AD_LEVEL_HIERARCHY as readonly string[]).includes(query.level) && query.level !== 'ad';
  definitions['level'] = nesting
    ? `${level} Where the platform did not report this level for an account and day, that account-day is summed up from the nearest finer level it did report (campaign, ad_set, ad), so nothing is counted twice.`
    : level;
  definitions['window'] = 'Report rows are calendar days of the ad account; a day counts when it overlaps the window read in the website timezone. A restated day replaces the earlier report of it.';
  definitions['currency'] = query.breakdown
    ? 'Amounts are in the ad-account currency, given on each row; nothing is converted.'
    : 'Amounts are in the ad-account currency, given on each row; amounts in different currencies are never added up: there is one total row per currency.';
  return definitions;
}

/** meta.currency_source: `ad_account:USD`, or a note naming every currency when they are mixed. */
export function currencySource(currencies: readonly string[]): string {
  if (currencies.length === 0) return 'ad_account:none (no ad report rows for this level in the window)';
  if (currencies.length === 1) return `ad_account:${currencies[0] as string}`;
  return `ad_account:mixed (${currencies.join(', ')}); each row is in the currency it names and amounts in different currencies are never added up`;
}
