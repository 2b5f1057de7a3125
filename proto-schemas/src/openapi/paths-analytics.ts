// Analytics reads answered by the attribution service (subject to the concurrent-query cap).
import { AD_LEVEL_NAMES, AD_METRIC_NAMES, DEFAULT_AD_METRICS, MAX_AD_ROWS } from '../registry/ads';
import { ATTRIBUTION_MODEL_NAMES, DEFAULT_LOOKBACK_DAYS, MAX_ATTRIBUTION_MODELS } from '../registry/attribution';
import { GROUP_BY_DIMENSIONS } from '../registry/dimensions';
import { LIMITS, MAX_GROUP_BY_DIMENSIONS, MAX_WINDOW_DAYS } from '../registry/limits';
import { METRIC_NAMES } from '../registry/metrics';
import { DEFAULT_PATH_STEP, EMPTY_STEP_LABEL, PATH_STEP_NAMES, PATH_TRUNCATION_MARKER, UNATTRIBUTED_LABEL } from '../registry/paths';
import { CONJUNCTIONS, GRANULARITIES } from '../registry/vocabulary';
import { operation } from './operation';
import { excludeDirectParam, filterParam, limitParam, listParam, windowParams } from './parameters';
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
  listParam('attribution', `One model or up to ${MAX_ATTRIBUTION_MODELS} comma-separated. Requires group_by (400 unsupported-combination without). Only conversions and revenue are attributed; other metrics are unaffected. With several models each row nests one object per model, and a null value means that model truncated before reaching it, not zero (see meta.truncated_models). When omitted with group_by, credited metrics use last_touch. markov and shapley are data-driven: they credit channels from every journey of the window, so they need group_by=channel alone, no filters, only_paid, stages or granularity (400 unsupported-combination otherwise); when they cannot answer (no converting journey with a touch) their values are null and meta.definitions says why. An unknown model is 400 invalid-request with \`allowed\`.`, enumOf(ATTRIBUTION_MODEL_NAMES), { minItems: 1, maxItems: MAX_ATTRIBUTION_MODELS, errorKind: 'invalid-request' }),
  excludeDirectParam,
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
      description: [
        `Returns {data, meta} and, with group_by or granularity, \`totals\`: the window totals computed without grouping (distinct counts are not sums of rows), so each row's share is visible. A window longer than ${MAX_WINDOW_DAYS} days is 400 window-too-large. A metric whose requirement is not met (spend metrics without group_by=platform|ad_campaign, cohort_mrr without group_by=cohort, milestones without stages) is 400 unsupported-combination.`,
        'Decided where the spec is silent: rows are ordered by the first requested metric (the first model\'s value with several models), descending; an empty dimension value is shown as "(none)"; every dimension value that appears in a journey has a row, with zero credit when the model gives it none.',
        'Credited metrics (conversions, revenue, milestones, influenced_conversions, unique_converters) are computed on touches: a touch filter or only_paid keeps the credit of matching touches, computed over the whole journey; outcome filters (event_name, event_type, identified, company_domain, resolution, crm_stage, crm_account_stage) keep whole outcomes. Event dimensions (page, hostname, page_title) apply to traffic metrics only, and person/CRM dimensions to credited metrics only; mixing them otherwise is 400 unsupported-combination.',
        'Customer metrics (customers, lifetime_value, avg_ltv, repeat_rate, avg_orders, revenue_per_customer) group by the customer\'s acquiring touch, the first touch of their first paid conversion. With granularity=day and group_by, limit picks the groups (by window total) and every day of those groups is returned; without group_by every day of the window is returned, empty days included.',
      ].join('\n\n'),
      parameters: metricsParams,
      ok: { description: 'Rows and meta.', schema: ref('MetricsResponse') },
      errors: ['unknown-metric', 'unknown-dimension', 'unknown-filter-operator', 'invalid-window', 'window-too-large', 'unsupported-combination'],
    }),
  },
  '/ads/performance': {
    get: operation({
      operationId: 'getAdsPerformance', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Ad-platform spend and delivery',
      description: `Amounts are in the ad-account currency, which can differ from the workspace currency; meta.currency_source says which (\`ad_account:USD\`, or a note naming each currency when accounts in several currencies are included). Amounts in different currencies are never converted or added up: every row carries its \`currency\`, and without breakdown there is one total row per currency. Metrics prefixed platform_ follow the ad platform's own attribution rules and are expected to differ from attributed conversions. A query pins exactly one grain, hence level is required.

Rows: figures are summed over the window first, and ratios (ctr, cpc, cpm, platform_roas, platform_conversion_rate) are computed from the sums; a ratio whose denominator is 0 is null. Report rows are calendar days; a day counts when it overlaps the window read in the website timezone. A platform restating a day replaces the earlier figures of that day (the newest import wins). For account, campaign and ad_set (decided): where the platform did not report that level for an account and day, the account-day is summed up from the nearest finer level it did report (campaign, ad_set, ad), so each account-day is counted from one level only. With breakdown, items are ordered by spend (largest first) and at most ${MAX_AD_ROWS} are returned (meta.truncated says when more exist). With no report rows for the level in the window, data is empty either way.`,
      parameters: [
        ...windowParams,
        { name: 'level', in: 'query', required: true, description: 'The grain of the rows.', schema: enumOf(AD_LEVEL_NAMES), 'x-sightline-error-kind': 'invalid-request' },
        listParam('metrics', `Comma-separated ad metrics; default ${DEFAULT_AD_METRICS.join(',')}. An unknown name is 400 unknown-metric.`, enumOf(AD_METRIC_NAMES), { minItems: 1, default: DEFAULT_AD_METRICS, errorKind: 'unknown-metric' }),
        { name: 'breakdown', in: 'query', description: 'true: one row per item at the level (platform, id, name, currency, the enclosing account/campaign/ad set, and the metrics). false: the level\'s total, one row per currency (platform is null when several platforms make it up; platforms lists them; items counts the items).', schema: { type: 'boolean', default: false }, 'x-sightline-error-kind': 'invalid-request' },
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
      description: `One row per distinct ordered touch sequence leading to an outcome in the window (conversions; milestones with stages). An outcome's journey is its person's touches (sessions, across every device merged through the identity graph) that started in the ${DEFAULT_LOOKBACK_DAYS} days up to the outcome, oldest first; each touch is one step, labelled per \`step\`. Decided: consecutive touches with the same label are not collapsed, because a path is the touch sequence (three organic visits then a direct one differ from one organic visit then a direct one). A path of only \`${UNATTRIBUTED_LABEL}\` is an outcome with no journey at all. Rows are ordered by outcomes, then revenue (both descending), then path; meta.truncated is true when more distinct paths exist than limit, and meta.total_outcomes and meta.distinct_paths count all of them.`,
      parameters: [
        ...windowParams,
        { name: 'step', in: 'query', description: `Label of each step: the touch's channel, source, medium or campaign. A touch without a value for it is labelled \`${EMPTY_STEP_LABEL}\`.`, schema: { ...enumOf(PATH_STEP_NAMES), default: DEFAULT_PATH_STEP }, 'x-sightline-error-kind': 'invalid-request' },
        stagesParam('Paths to CRM milestones of these stages instead of conversions; revenue is then the milestone amount. Cannot be combined with types or events (400 unsupported-combination).'),
        listParam('types', 'Only conversions of these event types (comma-separated).', { type: 'string', minLength: 1, maxLength: 100 }, { minItems: 1, errorKind: 'invalid-request' }),
        listParam('events', 'Only conversions with these event names (comma-separated). With types, both must match.', { type: 'string', minLength: 1, maxLength: 200 }, { minItems: 1, errorKind: 'invalid-request' }),
        {
          name: 'max_touches', in: 'query',
          description: `Longer journeys keep the first N steps and end with the marker \`${PATH_TRUNCATION_MARKER}\`, so journeys with the same start group together; a journey of exactly N steps is not marked. Default ${LIMITS.max_touches.default}, maximum ${LIMITS.max_touches.maximum}; larger values are cut to the maximum (decided, as for limit).`,
          schema: { type: 'integer', minimum: 1, maximum: LIMITS.max_touches.maximum, default: LIMITS.max_touches.default },
          'x-sightline-clamp': true, 'x-sightline-error-kind': 'invalid-request',
        },
        limitParam(LIMITS.paths, 'paths'),
      ],
      ok: { description: 'Paths and meta.', schema: ref('PathsResponse') },
      errors: ['invalid-window', 'window-too-large', 'unsupported-combination'],
    }),
  },
  '/products': {
    get: operation({
      operationId: 'getProducts', tag: 'Analytics', service: 'attribution', scope: 'analytics:read', website: true, analytics: true,
      summary: 'Sales per product',
      description: `Revenue, units, orders and margin per product of one store, net of refunds, ordered by revenue (largest first) then product_id; meta.truncated is true when more products exist than limit. An order counts when it was placed in the window (its newest imported copy wins), and refunds are netted by order date: every refund of a counted order counts, whenever it was made, so a past window's revenue can fall as refunds arrive (decided). A refund naming a product is shared among that product's lines of the order, one naming no product among all the order's lines, both by line value; refunds beyond the products' value (shipping, tax) are not put on products. units are net of refunded quantities; orders counts orders holding the product. Amounts are in the order currency (each row's currency; a product sold in several currencies has a row per currency). margin is net revenue minus unit_cost times net units over the lines whose cost is set, null when no line of the product has a cost; meta.cost_coverage_pct is the share of net revenue whose cost is set (margin covers only that share). With no store connected (no orders ever imported, or none for the platform asked for) data is empty and meta.no_data_reason is no_store_connected; with a store but no orders in the window it is no_orders. meta.platform names the store used and meta.platforms every connected store, the first connected first.`,
      parameters: [
        ...windowParams,
        { name: 'platform', in: 'query', description: 'Store platform identifier (for example shopify, woocommerce, stripe). Omitted: the store connected first, i.e. whose orders were imported earliest (decided).', schema: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 50 }, 'x-sightline-error-kind': 'invalid-request' },
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
      description: `One row per bucket, all five always present (zero when empty), in this order. A revenue fact is a conversion in the window whose value is above zero; a sales value written back through PATCH /contacts replaces the tracked revenue. Each fact is in exactly one bucket, the first that applies (decided precedence): attributed (a touch of the person in the ${DEFAULT_LOOKBACK_DAYS} days up to it), imported_contact (origin import), predates_tracking (the customer relationship began before the website's first tracked session; the relationship began at the earliest of relationship_started_at and the first conversion known for the same person or email, not at the payment date; a website with no tracked session has nothing predating it), no_visitor (no identity at all), no_sessions (a visitor, but no session in the lookback: never tracked, or only older sessions). The first three are permanent facts (meta.expected_gap_amount sums predates_tracking and imported_contact); no_visitor and no_sessions indicate a problem (meta.worth_investigating_amount). These are revenue facts and do not tie line for line to /metrics credit.`,
      parameters: [...windowParams],
      ok: { description: 'Buckets and meta.', schema: ref('CoverageResponse') },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
};
