// The five summed figures of ad delivery and the metrics computed from them. Ratios always come
// from sums (a ratio of a group is never an average of its members' ratios) and are null when the
// denominator is zero: no impressions has no click-through rate, which is not 0.
import { settleFigureOrNull } from '@sightline/kit';
import type { AdMetricName } from '@sightline/proto-schemas';

export interface AdFigures {
  spend: number;
  impressions: number;
  clicks: number;
  platform_conversions: number;
  platform_revenue: number;
}

/** Column aliases the SQL sums the figures into (kept apart from the column names they sum). */
export const FIGURE_SUMS_SQL = `sum(spend) AS spend_sum, sum(impressions) AS impressions_sum, sum(clicks) AS clicks_sum,
       sum(platform_conversions) AS platform_conversions_sum, sum(platform_revenue) AS platform_revenue_sum`;

export interface FigureSumsRow {
  spend_sum: number | string;
  impressions_sum: number | string;
  clicks_sum: number | string;
  platform_conversions_sum: number | string;
  platform_revenue_sum: number | string;
}

export function figuresOf(row: FigureSumsRow): AdFigures {
  return {
    spend: Number(row.spend_sum),
    impressions: Number(row.impressions_sum),
    clicks: Number(row.clicks_sum),
    platform_conversions: Number(row.platform_conversions_sum),
    platform_revenue: Number(row.platform_revenue_sum),
  };
}

const ratio = (numerator: number, denominator: number): number | null => (denominator === 0 ? null : numerator / denominator);

/** Float sums carry noise in the last digits (0.1 + 0.2); amounts are cut to 6 decimals. */
export const roundAmount = (value: number): number => Math.round(value * 1e6) / 1e6;

const METRIC_OF: Record<AdMetricName, (f: AdFigures) => number | null> = {
  spend: (f) => roundAmount(f.spend),
  impressions: (f) => f.impressions,
  clicks: (f) => f.clicks,
  platform_conversions: (f) => roundAmount(f.platform_conversions),
  platform_revenue: (f) => roundAmount(f.platform_revenue),
  ctr: (f) => ratio(f.clicks, f.impressions),
  cpc: (f) => ratio(f.spend, f.clicks),
  cpm: (f) => ratio(f.spend * 1000, f.impressions),
  platform_roas: (f) => ratio(f.platform_revenue, f.spend),
  platform_conversion_rate: (f) => ratio(f.platform_conversions, f.clicks),
};

/** The requested metrics of one row, by name, in the order asked. */
export function metricValues(figures: AdFigures, metrics: readonly AdMetricName[]): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  for (const metric of metrics) values[metric] = settleFigureOrNull(METRIC_OF[metric](figures));
  return values;
}
