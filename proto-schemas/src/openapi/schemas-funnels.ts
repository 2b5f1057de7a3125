// Component schemas of funnel definitions and their computed results.
import { ATTRIBUTION_MODEL_NAMES, DEFAULT_LOOKBACK_DAYS } from '../registry/attribution';
import { FUNNEL_STEPS } from '../registry/limits';
import {
  FUNNEL_BEHAVIOURAL_CONDITIONS,
  FUNNEL_FILTER_DIMENSIONS,
  FUNNEL_KNOWN_EVENT_TYPES,
  FUNNEL_NO_CLICK_TEXT_EVENT_TYPES,
  FUNNEL_SCOPES,
  FUNNEL_STEP_ORDERS,
  FUNNEL_STEP_ORDER_DESCRIPTIONS,
  FUNNEL_UNNAMED_EVENT_TYPES,
  REVENUE_EVENTS,
} from '../registry/vocabulary';
import { dateTime, enumOf, nullable, ref } from './refs';
import type { Schema } from './types';

/** Decided: the window a person has to complete the funnel, counted from the first step. */
export const FUNNEL_WINDOW_DAYS = { default: 30, minimum: 1, maximum: 365 } as const;

/** Decided: the most funnel definitions one website keeps. */
export const MAX_FUNNELS_PER_WEBSITE = 200;

/**
 * Decided: the longest step matcher and the most `*` in one. A pattern is checked against the
 * website's event types when stored; these keep that check and its error small.
 */
export const FUNNEL_MATCHER = { maxLength: 200, maxWildcards: 10 } as const;

/** Decided: the most custom event types (beyond the known ones) a website's catalog keeps. */
export const MAX_CUSTOM_EVENT_TYPES = 1_000;

const MATCHER_TEXT: Record<(typeof FUNNEL_BEHAVIOURAL_CONDITIONS)[number], string> = {
  event_type: `Type of the event: one Sightline records (${FUNNEL_KNOWN_EVENT_TYPES.join(', ')}) or one the website has sent with POST /events (of at most ${FUNNEL_MATCHER.maxLength} characters, the first ${MAX_CUSTOM_EVENT_TYPES.toLocaleString('en-US')} distinct ones it sent). A pattern matching none of them is refused.`,
  path_matches: 'Path of the page (no query string, no fragment), e.g. `/pricing` or `/blog/*`. Must start with `/` or `*`.',
  event_name_matches: `Name of the event (custom events, outbound links, server-side events). ${FUNNEL_UNNAMED_EVENT_TYPES.join(', ')} carry no name, so this matcher cannot be combined with those types.`,
  url_matches: 'Full page URL including the query string, e.g. `https://example.com/pricing?plan=*`. Must start with `http://`, `https://` or `*`.',
  click_text_matches: `Click text: the \`text\` property of a custom or outbound event. ${FUNNEL_NO_CLICK_TEXT_EVENT_TYPES.join(', ')} carry none, so this matcher cannot be combined with those types.`,
};

const conditions: Schema = {
  type: 'object',
  description: [
    'A behavioural step gives any of the matchers; all given must match the same event. Each matcher is a pattern over the whole value, case-sensitive, where `*` matches any run of characters (including none) and every other character is literal; an absent value (an event without a name, a page or click text) matches no pattern, not even `*`.',
    `A revenue step gives \`source\` = \`revenue\` and \`revenue_event\`: a subscription lifecycle fact (milestone.reached from a connected CRM, a billing system or a file import, whose stage is one of ${REVENUE_EVENTS.join(', ')}), keyed by the person it names (identity, else email).`,
    `A matcher is at most ${FUNNEL_MATCHER.maxLength} characters with at most ${FUNNEL_MATCHER.maxWildcards} \`*\`; more is 400 invalid-request.`,
    'The two kinds cannot be mixed in one step. A matcher that can never match is 400 invalid-request naming the step (with `allowed` where a fixed set applies).',
  ].join(' '),
  minProperties: 1,
  properties: {
    ...Object.fromEntries(FUNNEL_BEHAVIOURAL_CONDITIONS.map((name) => [name, { type: 'string', minLength: 1, maxLength: FUNNEL_MATCHER.maxLength, description: MATCHER_TEXT[name] }])),
    source: { const: 'revenue', description: 'Marks a revenue step.' },
    revenue_event: enumOf(REVENUE_EVENTS),
  },
  additionalProperties: false,
};

const stepOrderText = FUNNEL_STEP_ORDERS.map((o) => `${o}: ${FUNNEL_STEP_ORDER_DESCRIPTIONS[o]}`).join(' ');

const definitionProperties: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 200, description: 'Defaults to the step names joined with " → ".' },
  scope: {
    ...enumOf(FUNNEL_SCOPES),
    default: 'visitor',
    description: 'Who is counted. visitor: every person, anonymous or known, with their devices stitched together by the identity graph (a visitor who identifies later is one person with their earlier anonymous history). user: only identified people (known by an email or phone from any of their events, or named by a revenue fact), with their whole stitched history. A funnel mixing behavioural and revenue steps requires visitor; otherwise it is 400 unsupported-combination.',
  },
  step_order: { ...enumOf(FUNNEL_STEP_ORDERS), default: 'sequential', description: `${stepOrderText} strict cannot hold revenue steps (a CRM fact is not part of the tracked sequence): 400 unsupported-combination.` },
  window_days: {
    type: 'integer', minimum: FUNNEL_WINDOW_DAYS.minimum, maximum: FUNNEL_WINDOW_DAYS.maximum, default: FUNNEL_WINDOW_DAYS.default,
    description: 'Days a person has, counted from the moment of the first step, to complete the funnel (every later step at most window_days × 24 h after it, that instant included). The first step must fall inside the requested period; later steps may fall after its end.',
  },
  filters: {
    type: 'object',
    description: 'Audience filter: dimension name to the value it must equal. It applies to the event that enters the funnel (its own attributes and its session\'s); `identified` (true/false) applies to the person. A session filter on a funnel whose first step is a revenue step is 400 unsupported-combination (a revenue fact has no session).',
    propertyNames: enumOf(FUNNEL_FILTER_DIMENSIONS),
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
    conv_vs_prev: nullable({ type: 'number', minimum: 0, maximum: 1, description: 'reached divided by the previous step\'s reached; null on the first step, or when the previous step has nobody.' }),
    conv_vs_first: nullable({ type: 'number', minimum: 0, maximum: 1, description: 'reached divided by the first step\'s reached; null when nobody entered.' }),
    median_seconds_from_previous: nullable({
      type: 'number', minimum: 0,
      description: 'Median time from the previous step to this one over the people who reached it (the mean of the two middle values for an even count); null on the first step, with nobody reaching it, and under any_order (steps done in any order have no step-to-step time).',
    }),
  },
  additionalProperties: true,
};

const breakdownCounts: Schema = {
  type: 'object',
  properties: {
    entered: nullable({ type: 'number', minimum: 0, description: 'Credit for the people who entered the funnel; fractional under linear, u_shaped, time_decay, markov and shapley. null only under markov or shapley when no person with a touch entered (meta.definitions says why).' }),
    completed: nullable({ type: 'number', minimum: 0, description: 'Credit for the people who completed every step: with the same touch weights as `entered` under the rule models; by the model\'s own game for completing under markov and shapley. null only under markov or shapley when no person with a touch completed.' }),
    conversion_rate: nullable({ type: 'number', minimum: 0, description: 'completed / entered of this row; null when entered is 0 or either is null. At most 1 under the rule models and shapley; under markov the two columns are normalised separately, so it can exceed 1.' }),
  },
  additionalProperties: true,
};

export const funnelSchemas: Record<string, Schema> = {
  FunnelStep: {
    type: 'object',
    required: ['name', 'conditions'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      conditions,
    },
    additionalProperties: false,
  },
  FunnelCreate: {
    type: 'object',
    required: ['steps'],
    properties: definitionProperties,
    additionalProperties: false,
    examples: [{
      name: 'Pricing to signup',
      scope: 'visitor',
      step_order: 'sequential',
      window_days: 14,
      steps: [
        { name: 'Pricing', conditions: { path_matches: '/pricing*' } },
        { name: 'Any page after', conditions: { event_type: 'pageview' } },
      ],
    }],
  },
  FunnelPatch: {
    type: 'object',
    description: 'Only the fields being changed. `steps` replaces the whole list (a new meaning, not a merge). The result is validated as a whole, as at creation.',
    minProperties: 1,
    properties: definitionProperties,
    additionalProperties: false,
    examples: [{ name: 'Pricing to signup (30 days)', window_days: 30 }],
  },
  Funnel: {
    type: 'object',
    required: ['id', 'name', 'scope', 'step_order', 'window_days', 'filters', 'steps'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      ...definitionProperties,
      read_model: {
        type: 'string', enum: ['building', 'ready'], readOnly: true,
        description: 'Whether the funnel\'s precomputed attempts are built for its current definition. A new funnel, or a change of steps, step_order, window_days or an event filter, is building for a while (seconds to about a minute per 10M events); reads are exact either way, answered from the raw events until it is ready (slower), then from the attempts (`meta.computed_from`).',
      },
      created_at: dateTime,
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  FunnelStepsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: stepResult },
      previous: {
        type: 'object',
        description: 'With compare_days: the comparison window (the same number of local calendar days as the requested one, in the website timezone) and its steps, computed by the same rules.',
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
          description: `One row per dimension value, ordered by the first model's entering credit (largest first), then value. Each person who entered is credited, per model, across the touches (sessions) they had in the ${DEFAULT_LOOKBACK_DAYS} days up to the moment they entered the funnel (oldest first); the same weights credit completing when they completed. A person with no touch is credited to \`Unattributed\`; an empty value is \`(none)\`. Values beyond \`limit\` are folded into one \`Other\` row, so rows add up to the funnel's entered and completed counts under every model (a markov or shapley column that cannot answer is null on every row). With one model the counts sit on the row; with several, one object per model name.`,
          properties: {
            value: { type: 'string' },
            ...(breakdownCounts['properties'] as Record<string, Schema>),
            ...Object.fromEntries(ATTRIBUTION_MODEL_NAMES.map((m) => [m, breakdownCounts])),
          },
          additionalProperties: true,
        },
      },
      totals: {
        type: 'object',
        description: 'People who entered and who completed the funnel in the window: what the rows add up to under every model.',
        properties: { entered: { type: 'integer', minimum: 0 }, completed: { type: 'integer', minimum: 0 } },
        additionalProperties: true,
      },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
};
