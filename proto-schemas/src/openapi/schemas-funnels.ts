// Component schemas of funnel definitions and their computed results.
import { ATTRIBUTION_MODEL_NAMES } from '../registry/attribution';
import { FILTER_DIMENSIONS } from '../registry/dimensions';
import { FUNNEL_STEPS } from '../registry/limits';
import { FUNNEL_BEHAVIOURAL_CONDITIONS, FUNNEL_SCOPES, FUNNEL_STEP_ORDERS, FUNNEL_STEP_ORDER_DESCRIPTIONS, REVENUE_EVENTS } from '../registry/vocabulary';
import { dateTime, enumOf, nullable, ref } from './refs';
import type { Schema } from './types';

/** Decided: the window a person has to complete the funnel, counted from the first step. */
export const FUNNEL_WINDOW_DAYS = { default: 30, minimum: 1, maximum: 365 } as const;

const behaviouralConditions: Schema = {
  type: 'object',
  title: 'Behavioural step',
  description: 'Any of the matchers; all given must match the same event. `*` is the wildcard. A matcher that can never match is 400 invalid-request.',
  minProperties: 1,
  properties: Object.fromEntries(FUNNEL_BEHAVIOURAL_CONDITIONS.map((name) => [name, { type: 'string', minLength: 1, maxLength: 500 }])),
  additionalProperties: false,
};

const revenueConditions: Schema = {
  type: 'object',
  title: 'Revenue step',
  required: ['source', 'revenue_event'],
  properties: { source: { const: 'revenue' }, revenue_event: enumOf(REVENUE_EVENTS) },
  additionalProperties: false,
};

const stepOrderText = FUNNEL_STEP_ORDERS.map((o) => `${o}: ${FUNNEL_STEP_ORDER_DESCRIPTIONS[o]}`).join(' ');

const definitionProperties: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 200, description: 'Defaults to the step names joined with " → ".' },
  scope: { ...enumOf(FUNNEL_SCOPES), default: 'visitor', description: 'Who is counted: visitor (anonymous id) or user (identified person). A funnel mixing behavioural and revenue steps requires visitor; otherwise it is 400 unsupported-combination.' },
  step_order: { ...enumOf(FUNNEL_STEP_ORDERS), default: 'sequential', description: stepOrderText },
  window_days: { type: 'integer', minimum: FUNNEL_WINDOW_DAYS.minimum, maximum: FUNNEL_WINDOW_DAYS.maximum, default: FUNNEL_WINDOW_DAYS.default, description: 'Days a person has, from the first step, to complete the funnel.' },
  filters: {
    type: 'object',
    description: 'Audience filter: dimension name to the value it must equal.',
    propertyNames: enumOf(FILTER_DIMENSIONS),
    additionalProperties: { type: ['string', 'boolean', 'number'] },
  },
  steps: { type: 'array', minItems: FUNNEL_STEPS.minimum, maxItems: FUNNEL_STEPS.maximum, items: ref('FunnelStep') },
};

const stepResult: Schema = {
  type: 'object',
  required: ['index', 'name', 'reached', 'conv_vs_prev', 'conv_vs_first', 'median_seconds_from_previous'],
  properties: {
    index: { type: 'integer', minimum: 0 },
    name: { type: 'string' },
    reached: { type: 'integer', minimum: 0, description: 'People who satisfied this step and every earlier one; never increases along the funnel.' },
    conv_vs_prev: nullable({ type: 'number', minimum: 0, maximum: 1, description: 'reached divided by the previous step\'s reached; null on the first step.' }),
    conv_vs_first: nullable({ type: 'number', minimum: 0, maximum: 1, description: 'reached divided by the first step\'s reached.' }),
    median_seconds_from_previous: nullable({ type: 'number', minimum: 0, description: 'Median time from the previous step to this one; null on the first step or with nobody reaching it.' }),
  },
  additionalProperties: true,
};

const breakdownCounts: Schema = {
  type: 'object',
  properties: {
    entered: { type: 'number', minimum: 0, description: 'Credit for entering the funnel; fractional under linear, u_shaped and time_decay.' },
    completed: { type: 'number', minimum: 0 },
    conversion_rate: nullable({ type: 'number', minimum: 0 }),
  },
  additionalProperties: true,
};

export const funnelSchemas: Record<string, Schema> = {
  FunnelStep: {
    type: 'object',
    required: ['name', 'conditions'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      conditions: { oneOf: [behaviouralConditions, revenueConditions] },
    },
    additionalProperties: false,
  },
  FunnelCreate: {
    type: 'object',
    required: ['steps'],
    properties: definitionProperties,
    additionalProperties: false,
  },
  FunnelPatch: {
    type: 'object',
    description: 'Only the fields being changed. `steps` replaces the whole list (a new meaning, not a merge).',
    minProperties: 1,
    properties: definitionProperties,
    additionalProperties: false,
  },
  Funnel: {
    type: 'object',
    required: ['id', 'name', 'scope', 'step_order', 'window_days', 'filters', 'steps'],
    properties: { id: { type: 'string', format: 'uuid' }, ...definitionProperties, created_at: dateTime, updated_at: dateTime },
    additionalProperties: true,
  },
  FunnelStepsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: stepResult },
      previous: {
        type: 'object',
        description: 'With compare_days: the comparison window\'s steps.',
        required: ['window', 'data'],
        properties: { window: ref('Window'), data: { type: 'array', items: stepResult } },
        additionalProperties: true,
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  FunnelBreakdownResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['value'],
          description: 'One row per dimension value. With one model the counts sit on the row; with several, one object per model name.',
          properties: {
            value: { type: 'string' },
            ...(breakdownCounts['properties'] as Record<string, Schema>),
            ...Object.fromEntries(ATTRIBUTION_MODEL_NAMES.map((m) => [m, breakdownCounts])),
          },
          additionalProperties: true,
        },
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
};
