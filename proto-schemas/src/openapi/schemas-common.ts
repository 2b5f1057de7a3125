// Component schemas shared by every area: problem document, meta block, website, key identity.
import { ATTRIBUTION_MODEL_NAMES } from '../registry/attribution';
import { PLAN_NAMES } from '../registry/plans';
import { SCOPE_NAMES } from '../registry/scopes';
import { currencyCode, dateTime, enumOf, money, nullable, ref } from './refs';
import type { Schema } from './types';

export const commonSchemas: Record<string, Schema> = {
  Problem: {
    type: 'object',
    description: 'Error body (application/problem+json). Match on `type`, never on `detail`.',
    required: ['type', 'title', 'status', 'detail', 'instance'],
    properties: {
      type: { type: 'string', format: 'uri', description: 'URI whose last segment is the error kind, e.g. https://sightline.dev/problems/unknown-metric.' },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string', description: 'Human-readable; wording is not stable.' },
      remediation: { type: 'string', description: 'What to do next.' },
      allowed: { type: 'array', items: { type: 'string' }, description: 'Valid values, when a value was rejected against a fixed set.' },
      instance: { type: 'string', description: 'Request id, equal to the Sightline-Request-Id header.' },
      missing_scope: { type: 'string', description: 'insufficient-scope only: the scope the key lacks.' },
    },
    additionalProperties: true,
  },
  Window: {
    type: 'object',
    required: ['from', 'to', 'expression'],
    properties: {
      from: dateTime,
      to: { ...dateTime, description: 'Exclusive end.' },
      expression: nullable({ type: 'string', description: 'The period phrase as given, or null when from/to were used.' }),
    },
    additionalProperties: true,
  },
  Meta: {
    type: 'object',
    description: 'Context of a response. Analytics responses always carry website, timezone, currency, window and definitions.',
    properties: {
      website_id: { type: 'string' },
      website: { type: 'string', description: 'Domain.' },
      timezone: { type: 'string', description: 'Workspace timezone in which the window was resolved.' },
      currency: currencyCode,
      window: ref('Window'),
      row_count: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean', description: 'True when more rows exist than were returned.' },
      definitions: { type: 'object', additionalProperties: { type: 'string' }, description: 'Metric name to its definition; also names the attribution model used (key `attribution_model`) when stages implies one.' },
      truncated_models: { type: 'array', items: enumOf(ATTRIBUTION_MODEL_NAMES), description: 'Multi-model attribution: models that truncated before reaching a value.' },
      total_count: nullable({ type: 'integer', minimum: 0 }),
      has_more: { type: 'boolean' },
      pii_included: { type: 'boolean' },
      pii_note: { type: 'string' },
      currency_source: { type: 'string', description: 'Ad performance: which currency the amounts are in, e.g. `ad_account:USD`.' },
      cost_coverage_pct: { type: 'number', minimum: 0, maximum: 100 },
      no_data_reason: { type: 'string', enum: ['no_store_connected', 'no_orders'] },
      expected_gap_amount: money,
      worth_investigating_amount: money,
    },
    additionalProperties: true,
  },
  Website: {
    type: 'object',
    required: ['id', 'domain', 'timezone', 'currency'],
    properties: {
      id: { type: 'string' },
      domain: { type: 'string' },
      timezone: { type: 'string', description: 'IANA time zone name.' },
      currency: currencyCode,
      public_id: { type: 'string', description: 'Site id the tracker script sends (its data-site attribute); not a secret.' },
    },
    additionalProperties: true,
  },
  Plan: {
    type: 'object',
    description: 'The plan the key is limited by. Limits apply per workspace, across all of its keys.',
    required: ['name', 'requests_per_minute', 'monthly_quota', 'concurrent_analytics_queries'],
    properties: {
      name: enumOf(PLAN_NAMES),
      requests_per_minute: nullable({ type: 'integer', minimum: 1, description: 'Sustained requests per minute; null means unlimited.' }),
      monthly_quota: nullable({ type: 'integer', minimum: 0, description: 'Requests per calendar month (UTC); null means unlimited.' }),
      concurrent_analytics_queries: { type: 'integer', minimum: 1, description: 'Analytics queries that may run at once.' },
    },
    additionalProperties: true,
  },
  Identity: {
    type: 'object',
    description: 'GET /me: what this key can do (decided shape; the spec names only scopes, plan and reachable websites).',
    required: ['key', 'workspace', 'plan', 'websites'],
    properties: {
      key: {
        type: 'object',
        required: ['id', 'name', 'scopes', 'created_at'],
        properties: {
          id: { type: 'string', description: 'Public key id; API writes appear in the change feed as api:<id>.' },
          name: { type: 'string' },
          scopes: { type: 'array', items: enumOf(SCOPE_NAMES) },
          created_at: dateTime,
        },
        additionalProperties: true,
      },
      workspace: {
        type: 'object',
        required: ['id', 'name', 'timezone', 'currency'],
        properties: { id: { type: 'string' }, name: { type: 'string' }, timezone: { type: 'string' }, currency: currencyCode },
        additionalProperties: true,
      },
      plan: ref('Plan'),
      websites: { type: 'array', items: ref('Website'), description: 'Every website the key reaches, as GET /websites lists them.' },
    },
    additionalProperties: true,
  },
  Touch: {
    type: 'object',
    description: 'One attributed touch (a session).',
    properties: {
      occurred_at: dateTime,
      channel: { type: 'string' },
      source: nullable({ type: 'string' }),
      medium: nullable({ type: 'string' }),
      campaign: nullable({ type: 'string' }),
      referrer_domain: nullable({ type: 'string' }),
      landing_page: nullable({ type: 'string' }),
    },
    additionalProperties: true,
  },
  Deleted: {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        type: 'object',
        required: ['id', 'deleted'],
        properties: { id: { type: 'string' }, deleted: { const: true } },
        additionalProperties: true,
      },
    },
    additionalProperties: true,
  },
};
