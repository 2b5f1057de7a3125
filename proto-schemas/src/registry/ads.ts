// GET /ads/performance: the grains (level) and the platform-reported metrics.

export const AD_LEVEL_NAMES = [
  'account', 'campaign', 'ad_set', 'ad', 'keyword', 'search_term', 'placement', 'audience', 'age_gender',
  'geo', 'device', 'asset', 'asset_group', 'product', 'listing_group', 'network',
] as const;

export const AD_METRIC_NAMES = [
  'spend', 'impressions', 'clicks', 'platform_conversions', 'platform_revenue', 'ctr', 'cpc', 'cpm',
  'platform_roas', 'platform_conversion_rate',
] as const;

export type AdLevelName = (typeof AD_LEVEL_NAMES)[number];
export type AdMetricName = (typeof AD_METRIC_NAMES)[number];

export interface AdLevelDefinition { name: AdLevelName; description: string }
export interface AdMetricDefinition { name: AdMetricName; description: string; kind: 'count' | 'currency' | 'ratio' }

/**
 * The levels that nest (account > campaign > ad_set > ad). Decided: a nesting level the platform
 * did not report for an account and day is summed up from the nearest finer level it did report,
 * so each account-day is counted once, from one level.
 */
export const AD_LEVEL_HIERARCHY = ['account', 'campaign', 'ad_set', 'ad'] as const satisfies readonly AdLevelName[];

/** Decided: most rows one /ads/performance answer carries; beyond it meta.truncated is true. */
export const MAX_AD_ROWS = 10_000;

/** Returned when the metrics parameter is omitted. */
export const DEFAULT_AD_METRICS: readonly AdMetricName[] = ['spend', 'impressions', 'clicks'];

export const AD_LEVELS: readonly AdLevelDefinition[] = [
  { name: 'account', description: 'One row per connected ad account.' },
  { name: 'campaign', description: 'One row per campaign.' },
  { name: 'ad_set', description: 'One row per ad set (ad group).' },
  { name: 'ad', description: 'One row per ad.' },
  { name: 'keyword', description: 'One row per search keyword bought.' },
  { name: 'search_term', description: 'One row per search query that triggered an ad.' },
  { name: 'placement', description: 'One row per placement (site, app or feed position) where ads showed.' },
  { name: 'audience', description: 'One row per targeted audience.' },
  { name: 'age_gender', description: 'One row per age range and gender reported by the platform.' },
  { name: 'geo', description: 'One row per geographic area reported by the platform.' },
  { name: 'device', description: 'One row per device class reported by the platform.' },
  { name: 'asset', description: 'One row per creative asset (headline, image, video).' },
  { name: 'asset_group', description: 'One row per asset group (Performance Max).' },
  { name: 'product', description: 'One row per advertised product (shopping campaigns).' },
  { name: 'listing_group', description: 'One row per product listing group (shopping campaigns).' },
  { name: 'network', description: 'One row per ad network (search, display, partners).' },
];

export const AD_METRICS: readonly AdMetricDefinition[] = [
  { name: 'spend', kind: 'currency', description: 'Amount spent, in the ad-account currency (meta.currency_source).' },
  { name: 'impressions', kind: 'count', description: 'Times an ad was shown, as reported by the platform.' },
  { name: 'clicks', kind: 'count', description: 'Clicks on ads, as reported by the platform.' },
  { name: 'platform_conversions', kind: 'count', description: 'Conversions by the ad platform\'s own attribution rules; expected to differ from Sightline\'s attributed conversions.' },
  { name: 'platform_revenue', kind: 'currency', description: 'Conversion value by the ad platform\'s own attribution rules, in the ad-account currency.' },
  { name: 'ctr', kind: 'ratio', description: 'clicks divided by impressions (0 to 1), from the summed figures; null when there were no impressions.' },
  { name: 'cpc', kind: 'currency', description: 'spend divided by clicks, from the summed figures; null when there were no clicks.' },
  { name: 'cpm', kind: 'currency', description: 'spend per thousand impressions, from the summed figures; null when there were no impressions.' },
  { name: 'platform_roas', kind: 'ratio', description: 'platform_revenue divided by spend, from the summed figures; null when nothing was spent.' },
  { name: 'platform_conversion_rate', kind: 'ratio', description: 'platform_conversions divided by clicks, from the summed figures; null when there were no clicks. Can exceed 1 (platforms count view-through conversions).' },
];
