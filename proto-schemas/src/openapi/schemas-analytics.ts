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
import { currencyCode, enumOf, money, nullable, ref } from './refs';
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
