// The metric catalog of GET /metrics: one entry per name the query compiler accepts.
// Descriptions are what `meta.definitions` shows, so they state exactly what is counted.

export const METRIC_NAMES = [
  'visitors', 'sessions', 'pageviews', 'events', 'conversions', 'influenced_conversions',
  'unique_converters', 'revenue', 'lifetime_value', 'customers', 'avg_ltv', 'repeat_rate',
  'avg_orders', 'cohort_mrr', 'revenue_per_customer', 'milestones', 'conversion_rate',
  'pageviews_per_session', 'revenue_per_visitor', 'spend', 'impressions', 'clicks', 'roas', 'cac',
  'ltv_cac',
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];

/** count: an additive tally; currency: an amount in the workspace currency; ratio: a quotient. */
export type MetricKind = 'count' | 'currency' | 'ratio';

/** What a metric needs from the rest of the query before it can be computed. */
export interface MetricRequirement {
  /** group_by must be exactly one of these dimensions. */
  group_by?: readonly ('platform' | 'ad_campaign' | 'cohort')[];
  /** This query parameter must be present. */
  parameter?: 'stages';
  note: string;
}

export interface MetricDefinition {
  name: MetricName;
  description: string;
  kind: MetricKind;
  /** True when an attribution model decides which dimension value gets the credit. */
  attributable: boolean;
  requires: MetricRequirement | null;
  /** What one unit of the value is: a countable thing, `currency`, `fraction` (0 to 1) or `multiple`. */
  unit: string;
}

const AD_SPEND: MetricRequirement = {
  group_by: ['platform', 'ad_campaign'],
  note: 'Needs group_by=platform or group_by=ad_campaign (alone), which joins ad spend to the acquiring campaign.',
};

export const METRICS: readonly MetricDefinition[] = [
  { name: 'visitors', kind: 'count', attributable: false, requires: null, unit: 'visitors',
    description: 'Distinct visitors (devices merged into people through the identity graph) with at least one session that started in the window. Not summed across days in a time series.' },
  { name: 'sessions', kind: 'count', attributable: false, requires: null, unit: 'sessions',
    description: 'Sessions started in the window. A session ends after 30 minutes without activity or when campaign parameters change. With an event dimension (page, event_name, ...), the sessions with a matching event.' },
  { name: 'pageviews', kind: 'count', attributable: false, requires: null, unit: 'pageviews',
    description: 'Page views recorded in the window.' },
  { name: 'events', kind: 'count', attributable: false, requires: null, unit: 'events',
    description: 'All tracked and server-side events received for the window, page views included.' },
  { name: 'conversions', kind: 'count', attributable: true, requires: null, unit: 'conversions',
    description: 'Conversions that occurred in the window. With group_by, each conversion is credited across dimension values by the attribution model, so credit can be fractional and rows add up to the total.' },
  { name: 'influenced_conversions', kind: 'count', attributable: false, requires: null, unit: 'conversions',
    description: 'Conversions whose journey touched the dimension value at least once inside the lookback. One conversion counts fully in every row it touched, so rows can add up to more than the total.' },
  { name: 'unique_converters', kind: 'count', attributable: false, requires: null, unit: 'people',
    description: 'Distinct people (identity ids merged through the identity graph) with at least one conversion in the window. With group_by, the people whose conversion journeys touched the row\'s value.' },
  { name: 'revenue', kind: 'currency', attributable: true, requires: null, unit: 'currency',
    description: 'Revenue of the conversions in the window: the sales value written back (PATCH /contacts) where one is set, else the revenue tracked with the conversion. With group_by it is credited by the attribution model like conversions. Store orders and their refunds are reported by GET /products.' },
  { name: 'lifetime_value', kind: 'currency', attributable: false, requires: null, unit: 'currency',
    description: 'All revenue ever recorded (conversions with a value) from customers who paid in the window, including payments before the window. Grouped by the customer\'s acquiring touch: the first touch of their first paid conversion.' },
  { name: 'customers', kind: 'count', attributable: false, requires: null, unit: 'people',
    description: 'Distinct people with at least one conversion with a value (a payment) in the window. With group_by a customer belongs to the row of their acquiring touch: the first touch of their first paid conversion ever (Unattributed when it had none).' },
  { name: 'avg_ltv', kind: 'currency', attributable: false, requires: null, unit: 'currency',
    description: 'lifetime_value divided by customers: the average all-time net revenue per customer who paid in the window.' },
  { name: 'repeat_rate', kind: 'ratio', attributable: false, requires: null, unit: 'fraction',
    description: 'Share (0 to 1) of customers in the window who have paid more than once in their lifetime.' },
  { name: 'avg_orders', kind: 'ratio', attributable: false, requires: null, unit: 'orders per customer',
    description: 'Lifetime orders divided by customers: how many times the average customer who paid in the window has paid.' },
  { name: 'cohort_mrr', kind: 'currency', attributable: false,
    requires: { group_by: ['cohort'], note: 'Needs group_by=cohort; rows are identified by (cohort, period_index).' },
    unit: 'currency',
    description: 'Monthly recurring revenue of a signup-month cohort in each month since it started (period_index 0 is the signup month). The window selects which cohorts appear, never which payments count.' },
  { name: 'revenue_per_customer', kind: 'currency', attributable: false, requires: null, unit: 'currency',
    description: 'revenue divided by customers, both for the window: net revenue per paying customer.' },
  { name: 'milestones', kind: 'count', attributable: false,
    requires: { parameter: 'stages', note: 'Needs the stages parameter naming the milestones to count.' },
    unit: 'milestones',
    description: 'CRM or lifecycle milestones (the stages parameter) reached in the window, credited by the attribution model the response names (last_touch unless attribution is given). Never blended with tracked conversions; not a cohort, so a stage-to-stage rate can exceed 100%.' },
  { name: 'conversion_rate', kind: 'ratio', attributable: false, requires: null, unit: 'fraction',
    description: 'unique_converters divided by visitors (0 to 1) for the same window and filters.' },
  { name: 'pageviews_per_session', kind: 'ratio', attributable: false, requires: null, unit: 'pageviews per session',
    description: 'pageviews divided by sessions.' },
  { name: 'revenue_per_visitor', kind: 'currency', attributable: false, requires: null, unit: 'currency',
    description: 'revenue divided by visitors for the same window and filters.' },
  { name: 'spend', kind: 'currency', attributable: false, requires: AD_SPEND, unit: 'currency',
    description: 'Ad spend reported by the ad platforms for the window, in the ad-account currency (not converted; GET /ads/performance gives meta.currency_source per account).' },
  { name: 'impressions', kind: 'count', attributable: false, requires: AD_SPEND, unit: 'impressions',
    description: 'Ad impressions reported by the ad platforms for the window.' },
  { name: 'clicks', kind: 'count', attributable: false, requires: AD_SPEND, unit: 'clicks',
    description: 'Ad clicks reported by the ad platforms for the window (the platform count, not tracked sessions).' },
  { name: 'roas', kind: 'ratio', attributable: false, requires: AD_SPEND, unit: 'multiple',
    description: 'Attributed revenue (the first model asked for, last_touch by default) divided by spend for the same platform or campaign: revenue returned per unit of currency spent.' },
  { name: 'cac', kind: 'currency', attributable: false, requires: AD_SPEND, unit: 'currency',
    description: 'Customer acquisition cost: spend divided by new customers (first paid conversion ever in the window) whose acquiring touch (first touch of that conversion) came from the platform or campaign.' },
  { name: 'ltv_cac', kind: 'ratio', attributable: false, requires: AD_SPEND, unit: 'multiple',
    description: 'Average lifetime value of the new customers acquired by the platform or campaign divided by its cac; above 1 means they are worth more than they cost.' },
];
