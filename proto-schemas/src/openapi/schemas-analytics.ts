// Component schemas of the analytics reads and of GET /schema.
import { AD_LEVEL_NAMES, AD_METRIC_NAMES } from '../registry/ads';
import { ATTRIBUTION_MODEL_NAMES } from '../registry/attribution';
import { DIMENSIONS, GROUP_BY_DIMENSIONS, type DimensionEntity } from '../registry/dimensions';
import { METRIC_NAMES, type MetricKind } from '../registry/metrics';
import { OPERATOR_NAMES } from '../registry/operators';
import { PATH_STEP_NAMES } from '../registry/paths';
import { PLAN_NAMES } from '../registry/plans';
import { SCOPE_NAMES } from '../registry/scopes';
import { CONJUNCTIONS, COVERAGE_BUCKETS, GRANULARITIES } from '../registry/vocabulary';
import { currencyCode, enumOf, money, nullable, ref } from './refs';
import type { Schema } from './types';

// Every member of the registry's unions, checked by the compiler against them.
const METRIC_KINDS = ['count', 'currency', 'ratio'] as const satisfies readonly MetricKind[];
const DIMENSION_ENTITIES = ['session', 'event', 'ad', 'person', 'outcome', 'crm'] as const satisfies readonly DimensionEntity[];
type Covers<Union, List extends readonly unknown[]> = [Exclude<Union, List[number]>] extends [never] ? true : never;
const coversAll: [Covers<MetricKind, typeof METRIC_KINDS>, Covers<DimensionEntity, typeof DIMENSION_ENTITIES>] = [true, true];
void coversAll;

function named(names: readonly string[], extra: Record<string, Schema> = {}): Schema {
  return {
    type: 'array',
    items: {
      type: 'object',
      required: ['name', 'description', ...Object.keys(extra)],
      properties: { name: enumOf(names), description: { type: 'string' }, ...extra },
      additionalProperties: true,
    },
  };
}

const metricValue: Schema = nullable({ type: 'number' });

export const analyticsSchemas: Record<string, Schema> = {
  SchemaDocument: {
    type: 'object',
    description: 'Generated from the same registry the query compiler reads.',
    required: [
      'metrics', 'dimensions', 'operators', 'filter_syntax', 'attribution_models', 'default_attribution_model',
      'attribution_lookback_days', 'granularities', 'conjunctions', 'ad_levels', 'ad_metrics', 'path_steps',
      'default_path_step', 'scopes', 'plans', 'limits', 'max_group_by_dimensions', 'max_window_days',
    ],
    properties: {
      metrics: named(METRIC_NAMES, {
        kind: enumOf(METRIC_KINDS, 'count: an additive tally; currency: an amount; ratio: a quotient.'),
        attributable: { type: 'boolean', description: 'True when an attribution model decides which dimension value gets the credit.' },
        requires: { ...nullable(ref('MetricRequirement')), description: 'What the rest of the query must hold for this metric; null when nothing.' },
        unit: { type: 'string', description: 'What one unit of the value is: a countable thing, `currency`, `fraction` (0 to 1) or `multiple`.' },
      }),
      dimensions: named(DIMENSIONS.map((d) => d.name), {
        entity: enumOf(DIMENSION_ENTITIES, 'What the dimension describes, which decides the metrics it applies to.'),
        groupable: { type: 'boolean' },
        filterable: { type: 'boolean' },
        operators: { type: 'array', items: enumOf(OPERATOR_NAMES), description: 'Filter operators it takes (empty when not filterable).' },
        values: { ...nullable({ type: 'array', items: { type: 'string' } }), description: 'The fixed set of values, or null for free text.' },
      }),
      operators: named(OPERATOR_NAMES, { list: { type: 'boolean', description: 'True when the value is a list separated by filter_syntax.list_separator.' } }),
      filter_syntax: {
        type: 'object',
        required: ['form', 'list_separator'],
        properties: { form: { type: 'string' }, list_separator: { type: 'string' } },
        additionalProperties: true,
      },
      attribution_models: named(ATTRIBUTION_MODEL_NAMES),
      default_attribution_model: enumOf(ATTRIBUTION_MODEL_NAMES),
      attribution_lookback_days: { type: 'integer', minimum: 1 },
      granularities: { type: 'array', items: enumOf(GRANULARITIES) },
      conjunctions: { type: 'array', items: enumOf(CONJUNCTIONS) },
      ad_levels: named(AD_LEVEL_NAMES),
      ad_metrics: named(AD_METRIC_NAMES, { kind: enumOf(METRIC_KINDS) }),
      path_steps: named(PATH_STEP_NAMES),
      default_path_step: enumOf(PATH_STEP_NAMES),
      scopes: named(SCOPE_NAMES),
      plans: named(PLAN_NAMES, {
        requests_per_minute: nullable({ type: 'integer', minimum: 1 }),
        monthly_quota: nullable({ type: 'integer', minimum: 0 }),
        concurrent_analytics_queries: { type: 'integer', minimum: 1 },
      }),
      limits: {
        type: 'object',
        description: 'Paging limits by name (metrics, paths, contacts, ...).',
        additionalProperties: {
          type: 'object',
          required: ['default', 'maximum', 'clamp'],
          properties: {
            default: { type: 'integer', minimum: 1 },
            maximum: { type: 'integer', minimum: 1 },
            clamp: { type: 'boolean', description: 'True: a larger value is answered with the maximum, not refused.' },
          },
          additionalProperties: true,
        },
      },
      max_group_by_dimensions: { type: 'integer', minimum: 1 },
      max_window_days: { type: 'integer', minimum: 1 },
    },
    additionalProperties: true,
  },
  MetricRequirement: {
    type: 'object',
    description: 'What a metric needs from the rest of the query; a query without it is 400 unsupported-combination.',
    required: ['note'],
    properties: {
      group_by: { type: 'array', items: enumOf(GROUP_BY_DIMENSIONS), description: 'group_by must be exactly one of these dimensions.' },
      parameter: { type: 'string', description: 'This query parameter must be present (for example `stages`).' },
      note: { type: 'string' },
    },
    additionalProperties: true,
  },
  MetricsRow: {
    type: 'object',
    description: 'One row: the group_by dimension values (by dimension name) and each requested metric (by metric name). With several attribution models, credited metrics nest one object per model name (`{"linear": {"conversions": 3.5}}`); a null value means that model truncated before reaching it, not zero. With group_by=cohort rows carry `cohort` and `period_index`. With granularity=day rows carry `date` (YYYY-MM-DD in the workspace timezone).',
    additionalProperties: {
      anyOf: [
        { type: 'string' },
        { type: 'integer' },
        metricValue,
        { type: 'object', additionalProperties: metricValue },
      ],
    },
  },
  MetricsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: ref('MetricsRow') },
      totals: { ...ref('MetricsRow'), description: 'Window totals of the requested metrics; present with group_by so each row\'s share is visible.' },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  AdsPerformanceResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          description: 'With breakdown: one item at the level, named by platform, id and name, with the items enclosing it (account, campaign, ad set) and each requested metric by name. Without breakdown: the level\'s total in one currency (one row per currency), with platform (null when several make it up), platforms and items. Amounts are in the row\'s currency.',
          required: ['level', 'currency'],
          properties: {
            platform: nullable({ type: 'string' }),
            level: enumOf(AD_LEVEL_NAMES),
            id: nullable({ type: 'string', description: 'The item\'s id on the platform; null for spend of finer rows that named no item at this level.' }),
            name: nullable({ type: 'string' }),
            currency: { ...currencyCode, description: 'The ad-account currency the row\'s amounts are in.' },
            account_id: nullable({ type: 'string' }),
            account: nullable({ type: 'string' }),
            campaign_id: nullable({ type: 'string' }),
            campaign: nullable({ type: 'string' }),
            campaign_type: nullable({ type: 'string' }),
            ad_set_id: nullable({ type: 'string' }),
            ad_set: nullable({ type: 'string' }),
            platforms: { type: 'array', items: { type: 'string' }, description: 'Without breakdown: the platforms making up the total.' },
            items: { type: 'integer', minimum: 0, description: 'Without breakdown: how many items at the level make up the total.' },
            ...Object.fromEntries(AD_METRIC_NAMES.map((m) => [m, metricValue])),
          },
          additionalProperties: true,
        },
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  PathsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'outcomes', 'revenue', 'share'],
          properties: {
            path: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Step labels in order, one per touch (consecutive identical labels are not collapsed); `(none)` for a touch without a value for the step; ends with `...` when cut at max_touches; `["Unattributed"]` for an outcome with no journey.' },
            outcomes: { type: 'integer', minimum: 1, description: 'Conversions (or milestones with stages) that followed exactly this sequence.' },
            revenue: { ...money, description: 'Sum of the value of those outcomes: conversion revenue (a written-back sales value replaces it), or milestone amount with stages.' },
            share: { type: 'number', minimum: 0, maximum: 1, description: 'outcomes divided by every outcome the query counts in the window (all paths, not only those returned).' },
          },
          additionalProperties: true,
        },
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  ProductsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['product_id', 'name', 'currency', 'revenue', 'units', 'orders', 'refunded', 'margin'],
          properties: {
            product_id: { type: 'string' },
            name: { type: 'string', description: 'As on the newest order holding the product.' },
            currency: { ...currencyCode, description: 'The order currency the amounts are in; a product sold in several currencies has a row per currency.' },
            revenue: { ...money, description: 'Net of refunds.' },
            units: { type: 'integer', description: 'Net of refunded quantities.' },
            orders: { type: 'integer', minimum: 0, description: 'Orders in the window holding the product.' },
            refunded: { ...money, description: 'Refunds put on the product.' },
            margin: nullable({ ...money, description: 'Revenue minus cost over the lines whose unit cost is set; null when no cost is set for the product.' }),
          },
          additionalProperties: true,
        },
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  CoverageResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: {
        type: 'array',
        minItems: COVERAGE_BUCKETS.length,
        maxItems: COVERAGE_BUCKETS.length,
        description: 'One row per bucket, every bucket always present, in the order attributed, predates_tracking, imported_contact, no_visitor, no_sessions.',
        items: {
          type: 'object',
          required: ['bucket', 'amount', 'facts', 'share', 'expected'],
          properties: {
            bucket: enumOf(COVERAGE_BUCKETS),
            amount: { ...money, description: 'Recorded revenue of the facts in the bucket (conversions in the window with a value above zero; a written-back sales value replaces the tracked revenue).' },
            facts: { type: 'integer', minimum: 0, description: 'Revenue facts in the bucket.' },
            share: { type: 'number', minimum: 0, maximum: 1, description: 'amount divided by the amount of all five buckets; 0 when there is no recorded revenue.' },
            expected: { type: 'boolean', description: 'True for permanent facts (attributed, predates_tracking, imported_contact); false for no_visitor and no_sessions, which indicate a problem.' },
          },
          additionalProperties: true,
        },
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
};
