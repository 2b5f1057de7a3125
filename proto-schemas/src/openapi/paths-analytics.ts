// Analytics reads answered by the attribution service (subject to the concurrent-query cap).
import { AD_LEVEL_NAMES, AD_METRIC_NAMES, DEFAULT_AD_METRICS } from '../registry/ads';
import { ATTRIBUTION_MODEL_NAMES, MAX_ATTRIBUTION_MODELS } from '../registry/attribution';
import { GROUP_BY_DIMENSIONS } from '../registry/dimensions';
import { LIMITS, MAX_GROUP_BY_DIMENSIONS, MAX_WINDOW_DAYS } from '../registry/limits';
import { METRIC_NAMES } from '../registry/metrics';
import { DEFAULT_PATH_STEP, PATH_STEP_NAMES } from '../registry/paths';
import { CONJUNCTIONS, GRANULARITIES } from '../registry/vocabulary';
import { operation } from './operation';
import { filterParam, limitParam, listParam, windowParams } from './parameters';
import { enumOf, ref } from './refs';
import type { ParameterObject, PathItemObject } from './types';

const stageItem = { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 100 };

const stagesParam = (what: string): ParameterObject => listParam(
  'stages',
  `${what} Comma-separated milestone stage keys (for example deal_created,deal_won,mql). A stage the workspace does not use is 400 invalid-request listing its vocabulary in \`allowed\`; a used stage nobody reached answers zero.`,
  stageItem,
  { minItems: 1, maxItems: 20, errorKind: 'invalid-request' },
);

const metricsParams: ParameterObject[] = [
  ...windowParams,
  listParam('metrics', 'Required. Comma-separated metric names; GET /schema gives each definition. An unknown name is 400 unknown-metric with `allowed`.', enumOf(METRIC_NAMES), { required: true, minItems: 1, errorKind: 'unknown-metric' }),
  listParam('group_by', `One dimension, or up to ${MAX_GROUP_BY_DIMENSIONS} comma-separated for a nested breakdown; omitted gives one total row. platform and ad_campaign join ad spend and must stand alone (400 unsupported-combination otherwise); resolution needs a credited metric (conversions, revenue, milestones); cohort returns a retention curve keyed by (cohort, period_index). An unknown dimension is 400 unknown-dimension.`, enumOf(GROUP_BY_DIMENSIONS), { minItems: 1, maxItems: MAX_GROUP_BY_DIMENSIONS, errorKind: 'unknown-dimension' }),
  filterParam,
  {
    name: 'granularity', in: 'query',
    description: 'Only `day`: one row per day of the window, computed as a time series (unique visitors are counted per day, not summed). hour, week and month are 400 invalid-request with `allowed: ["day"]` (decided; the spec does not name the kind). Omitted: window totals.',
    schema: enumOf(GRANULARITIES), 'x-sightline-error-kind': 'invalid-request',
  },
  listParam('attribution', `One model or up to ${MAX_ATTRIBUTION_MODELS} comma-separated. Requires group_by (400 unsupported-combination without). Only conversions and revenue are attributed; other metrics are unaffected. With several models each row nests one object per model, and a null value means that model truncated before reaching it, not zero (see meta.truncated_models). When omitted with group_by, credited metrics use last_touch.`, enumOf(ATTRIBUTION_MODEL_NAMES), { minItems: 1, maxItems: MAX_ATTRIBUTION_MODELS, errorKind: 'invalid-request' }),
  stagesParam('Counts CRM/lifecycle milestones instead of tracked conversions (use with metrics=milestones). Implies an attribution model, last_touch unless attribution is given; meta.definitions names it. Milestones and conversions are never blended.'),
  { name: 'conjunction', in: 'query', description: 'How repeated filters combine.', schema: { ...enumOf(CONJUNCTIONS), default: 'and' }, 'x-sightline-error-kind': 'invalid-request' },
  { name: 'only_paid', in: 'query', description: 'Restrict to paid traffic: a paid medium (cpc, ppc, paid*, display, ...) or an ad click id present.', schema: { type: 'boolean', default: false }, 'x-sightline-error-kind': 'invalid-request' },
  limitParam(LIMITS.metrics, 'rows'),
];

export const analyticsPaths: Record<string, PathItemObject> = {
  '/metrics': {
    get: operation({
      operationId: 'getMetrics', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Aggregate metrics, breakdowns and daily series',
      description: `Returns {data, meta} and, with group_by, window totals so each row's share is visible. A window longer than ${MAX_WINDOW_DAYS} days is 400 window-too-large. A metric whose requirement is not met (spend metrics without group_by=platform|ad_campaign, cohort_mrr without group_by=cohort, milestones without stages) is 400 unsupported-combination.`,
      parameters: metricsParams,
      ok: { description: 'Rows and meta.', schema: ref('MetricsResponse') },
      errors: ['unknown-metric', 'unknown-dimension', 'unknown-filter-operator', 'invalid-window', 'window-too-large', 'unsupported-combination'],
    }),
  },
  '/ads/performance': {
    get: operation({
      operationId: 'getAdsPerformance', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Ad-platform spend and delivery',
      description: 'Amounts are in the ad-account currency, which can differ from the workspace currency; meta.currency_source says which. Metrics prefixed platform_ follow the ad platform\'s own attribution rules and are expected to differ from attributed conversions. A query pins exactly one grain, hence level is required.',
      parameters: [
        ...windowParams,
        { name: 'level', in: 'query', required: true, description: 'The grain of the rows.', schema: enumOf(AD_LEVEL_NAMES), 'x-sightline-error-kind': 'invalid-request' },
        listParam('metrics', `Comma-separated ad metrics; default ${DEFAULT_AD_METRICS.join(',')}. An unknown name is 400 unknown-metric.`, enumOf(AD_METRIC_NAMES), { minItems: 1, default: DEFAULT_AD_METRICS, errorKind: 'unknown-metric' }),
        { name: 'breakdown', in: 'query', description: 'true: one row per item at the level; false: one total row for the level.', schema: { type: 'boolean', default: false }, 'x-sightline-error-kind': 'invalid-request' },
        { name: 'platform', in: 'query', description: 'Ad platform identifier (for example google_ads, meta_ads); omitted means every connected platform.', schema: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 50 }, 'x-sightline-error-kind': 'invalid-request' },
      ],
      ok: { description: 'Rows and meta.', schema: ref('AdsPerformanceResponse') },
      errors: ['unknown-metric', 'invalid-window', 'window-too-large'],
    }),
  },
  '/paths': {
    get: operation({
      operationId: 'getPaths', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Ordered touch sequences',
      description: 'One row per distinct ordered touch sequence leading to an outcome. A path of only Unattributed is an outcome with no journey at all.',
      parameters: [
        ...windowParams,
        { name: 'step', in: 'query', description: 'Label of each step.', schema: { ...enumOf(PATH_STEP_NAMES), default: DEFAULT_PATH_STEP }, 'x-sightline-error-kind': 'invalid-request' },
        stagesParam('Paths to CRM milestones instead of conversions.'),
        listParam('types', 'Only conversions of these types (comma-separated).', { type: 'string', minLength: 1, maxLength: 100 }, { minItems: 1, errorKind: 'invalid-request' }),
        listParam('events', 'Only conversions with these event names (comma-separated).', { type: 'string', minLength: 1, maxLength: 200 }, { minItems: 1, errorKind: 'invalid-request' }),
        {
          name: 'max_touches', in: 'query',
          description: `Longer journeys keep the first N steps and end with the marker \`...\`, so journeys with the same start group together. Default ${LIMITS.max_touches.default}, maximum ${LIMITS.max_touches.maximum}; larger values are cut to the maximum (decided, as for limit).`,
          schema: { type: 'integer', minimum: 1, maximum: LIMITS.max_touches.maximum, default: LIMITS.max_touches.default },
          'x-sightline-clamp': true, 'x-sightline-error-kind': 'invalid-request',
        },
        limitParam(LIMITS.paths, 'paths'),
      ],
      ok: { description: 'Paths and meta.', schema: ref('PathsResponse') },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
  '/products': {
    get: operation({
      operationId: 'getProducts', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Sales per product',
      description: 'Revenue, units, orders and margin per product, net of refunds. meta.cost_coverage_pct is the share of revenue whose cost is set (margin covers only that share). With no store connected or no orders, data is empty and meta.no_data_reason says why.',
      parameters: [
        ...windowParams,
        { name: 'platform', in: 'query', description: 'Store platform identifier (for example shopify, woocommerce, stripe). Omitted: the store connected first (decided).', schema: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 50 }, 'x-sightline-error-kind': 'invalid-request' },
        limitParam(LIMITS.products, 'products'),
      ],
      ok: { description: 'Products and meta.', schema: ref('ProductsResponse') },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
  '/attribution/coverage': {
    get: operation({
      operationId: 'getAttributionCoverage', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'How much recorded revenue could be attributed',
      description: 'One row per bucket. Each recorded revenue fact is classified into attributed, predates_tracking (keyed on when the customer relationship began, not the payment date), imported_contact, no_visitor or no_sessions. The first three are permanent facts (meta.expected_gap_amount sums the unattributed two of them); no_visitor and no_sessions indicate a problem (meta.worth_investigating_amount). These are revenue facts and do not tie line for line to /metrics credit.',
      parameters: [...windowParams],
      ok: { description: 'Buckets and meta.', schema: ref('CoverageResponse') },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
};
