// Which computation answers each metric. Metrics of one family come from one SQL pass; ratio
// metrics are computed from the families' figures after they return.
import type { MetricName } from '@sightline/proto-schemas';

export type MetricFamily = 'traffic' | 'credit' | 'customer' | 'ratio' | 'spend' | 'cohort';

export const METRIC_FAMILY: Record<MetricName, MetricFamily> = {
  visitors: 'traffic', sessions: 'traffic', pageviews: 'traffic', events: 'traffic',
  conversions: 'credit', revenue: 'credit', influenced_conversions: 'credit', unique_converters: 'credit', milestones: 'credit',
  customers: 'customer', lifetime_value: 'customer', avg_ltv: 'customer', repeat_rate: 'customer', avg_orders: 'customer', revenue_per_customer: 'customer',
  conversion_rate: 'ratio', pageviews_per_session: 'ratio', revenue_per_visitor: 'ratio',
  spend: 'spend', impressions: 'spend', clicks: 'spend', roas: 'spend', cac: 'spend', ltv_cac: 'spend',
  cohort_mrr: 'cohort',
};

/** Metrics whose value a model decides (they nest per model when several models are asked for). */
export const CREDITED: ReadonlySet<MetricName> = new Set(['conversions', 'revenue', 'milestones']);

/** What each ratio and spend metric is computed from (so those families run too). */
export const INPUTS: Partial<Record<MetricName, MetricName[]>> = {
  conversion_rate: ['unique_converters', 'visitors'],
  pageviews_per_session: ['pageviews', 'sessions'],
  revenue_per_visitor: ['revenue', 'visitors'],
  roas: ['revenue', 'spend'],
  cac: ['spend', 'customers'],
  ltv_cac: ['spend', 'customers', 'lifetime_value'],
};
