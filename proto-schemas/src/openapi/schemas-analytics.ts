// Component schemas of the analytics reads and of GET /schema.
import { AD_LEVEL_NAMES, AD_METRIC_NAMES } from '../registry/ads';
import { ATTRIBUTION_MODEL_NAMES } from '../registry/attribution';
import { DIMENSIONS } from '../registry/dimensions';
import { METRIC_NAMES } from '../registry/metrics';
import { OPERATOR_NAMES } from '../registry/operators';
import { PATH_STEP_NAMES } from '../registry/paths';
import { PLAN_NAMES } from '../registry/plans';
import { SCOPE_NAMES } from '../registry/scopes';
import { COVERAGE_BUCKETS } from '../registry/vocabulary';
import { enumOf, money, nullable, ref } from './refs';
import type { Schema } from './types';

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
    required: ['metrics', 'dimensions', 'operators', 'attribution_models'],
    properties: {
      metrics: named(METRIC_NAMES, {
        kind: enumOf(['count', 'currency', 'ratio']),
        attributable: { type: 'boolean' },
        requires: nullable({ type: 'object' }),
        unit: { type: 'string' },
      }),
      dimensions: named(DIMENSIONS.map((d) => d.name), {
        groupable: { type: 'boolean' },
        filterable: { type: 'boolean' },
        operators: { type: 'array', items: enumOf(OPERATOR_NAMES) },
        values: nullable({ type: 'array', items: { type: 'string' } }),
      }),
      operators: named(OPERATOR_NAMES, { list: { type: 'boolean' } }),
      attribution_models: named(ATTRIBUTION_MODEL_NAMES),
      ad_levels: named(AD_LEVEL_NAMES),
      ad_metrics: named(AD_METRIC_NAMES),
      path_steps: named(PATH_STEP_NAMES),
      scopes: named(SCOPE_NAMES),
      plans: named(PLAN_NAMES, {
        requests_per_minute: nullable({ type: 'integer' }),
        monthly_quota: nullable({ type: 'integer' }),
      }),
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
          description: 'Identifying fields of the level (for example `platform`, `campaign_id`, `campaign`) plus each requested metric by name. Without breakdown there is one row for the whole level.',
          properties: {
            platform: { type: 'string' },
            level: enumOf(AD_LEVEL_NAMES),
            id: nullable({ type: 'string' }),
            name: nullable({ type: 'string' }),
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
          required: ['path', 'outcomes'],
          properties: {
            path: { type: 'array', items: { type: 'string' }, description: 'Step labels in order; ends with `...` when cut at max_touches; `["Unattributed"]` for an outcome with no journey.' },
            outcomes: { type: 'integer', minimum: 0, description: 'Conversions (or milestones with stages) that followed exactly this sequence.' },
            revenue: money,
            share: { type: 'number', minimum: 0, maximum: 1, description: 'outcomes divided by all outcomes in the window.' },
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
          required: ['product_id', 'name', 'revenue', 'units', 'orders'],
          properties: {
            product_id: { type: 'string' },
            name: { type: 'string' },
            revenue: { ...money, description: 'Net of refunds.' },
            units: { type: 'integer' },
            orders: { type: 'integer' },
            refunded: money,
            margin: nullable({ ...money, description: 'Revenue minus cost where cost is set; null when no cost is set for the product.' }),
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
        items: {
          type: 'object',
          required: ['bucket', 'amount', 'facts', 'expected'],
          properties: {
            bucket: enumOf(COVERAGE_BUCKETS),
            amount: money,
            facts: { type: 'integer', minimum: 0, description: 'Revenue facts in the bucket.' },
            share: { type: 'number', minimum: 0, maximum: 1 },
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
