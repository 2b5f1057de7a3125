// Fixed value sets that are not metrics or dimensions but still appear in requests and responses.

/** Only `day`; hour, week and month are refused with invalid-request listing `allowed`. */
export const GRANULARITIES = ['day'] as const;
export const CONJUNCTIONS = ['and', 'or'] as const;

export const FUNNEL_SCOPES = ['visitor', 'user'] as const;
/** DESIGN.md: sequential is the default. */
export const FUNNEL_STEP_ORDERS = ['sequential', 'strict', 'any_order'] as const;
export const FUNNEL_STEP_ORDER_DESCRIPTIONS: Record<(typeof FUNNEL_STEP_ORDERS)[number], string> = {
  sequential: 'Steps must happen in the given order; other events may occur between them.',
  strict: 'Steps must happen in the given order with no other tracked event between them.',
  any_order: 'Every step must happen inside the window, in any order.',
};
export const FUNNEL_BEHAVIOURAL_CONDITIONS = [
  'event_type', 'path_matches', 'event_name_matches', 'url_matches', 'click_text_matches',
] as const;
/** Decided: the subscription lifecycle events a revenue step may name. */
export const REVENUE_EVENTS = [
  'trial_started', 'trial_converted', 'subscription_started', 'subscription_renewed',
  'subscription_upgraded', 'subscription_downgraded', 'subscription_churned', 'payment_succeeded',
  'payment_refunded',
] as const;
/**
 * The event types Sightline itself records (the tracker's five, and the two conversion types of
 * POST /events). A funnel step's `event_type` must match one of these or a type the website has sent.
 */
export const FUNNEL_KNOWN_EVENT_TYPES = ['pageview', 'outbound', 'form_submit', 'custom', 'identify', 'conversion', 'purchase'] as const;
/** Event types that never carry an event name: `event_name_matches` on them can never match. */
export const FUNNEL_UNNAMED_EVENT_TYPES = ['pageview', 'form_submit', 'identify'] as const;
/** Event types that never carry click text (`properties.text`): `click_text_matches` on them can never match. */
export const FUNNEL_NO_CLICK_TEXT_EVENT_TYPES = ['pageview', 'form_submit', 'identify', 'conversion', 'purchase'] as const;
/**
 * Decided: the audience filter of a funnel applies to the event that enters it (its own attributes
 * and its session's), plus `identified` for the person. Other filter dimensions describe outcomes,
 * ads or CRM records that a funnel entry does not have.
 */
export const FUNNEL_FILTER_DIMENSIONS = [
  'channel', 'source', 'medium', 'campaign', 'utm_term', 'utm_content', 'referrer_domain', 'landing_page',
  'country', 'region', 'city', 'device_type', 'browser', 'operating_system', 'page', 'hostname', 'page_title',
  'event_name', 'event_type', 'identified',
] as const;

export const STAGE_BUCKETS = ['open', 'won', 'lost', 'other'] as const;

/** What a deal's first/last touch were computed from, or why it has none (GET /deals attribution_basis). */
export const DEAL_ATTRIBUTION_BASES = ['sessions', 'stored_touches', 'no_touch_before_deal', 'no_matching_contact', 'no_contacts'] as const;

/** The stage key of a free-text stage or status name: "Sales Qualified Lead" → sales_qualified_lead. */
export function stageKey(value: string): string {
  return value.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').replace(/^(\d)/, 's_$1');
}

/** Examples of milestone stages; each workspace's full vocabulary is served by GET /pipelines. */
export const EXAMPLE_STAGES = [
  'deal_created', 'deal_won', 'mql', 'trial_started', 'trial_converted', 'subscription_started',
  'subscription_churned',
] as const;

export const COVERAGE_BUCKETS = ['attributed', 'predates_tracking', 'imported_contact', 'no_visitor', 'no_sessions'] as const;
/** Buckets that are permanent facts (meta.expected_gap_amount); the rest are worth investigating. */
export const EXPECTED_COVERAGE_BUCKETS = ['attributed', 'predates_tracking', 'imported_contact'] as const;

export const CHANGE_TYPES = [
  'conversion.created', 'conversion.updated', 'conversion.value_changed', 'stage.changed',
  'deal.created', 'deal.stage_changed', 'funnel.created', 'funnel.updated', 'funnel.deleted',
  'automation.created', 'automation.updated', 'automation.deleted', 'automation.ran',
] as const;

export const AUTOMATION_STATUSES = ['active', 'paused'] as const;
export const AUTOMATION_TRIGGER_KINDS = ['event', 'schedule', 'threshold'] as const;
/** `chat` posts with chat.postMessage to a channel of the Slack workspace connected to the Sightline workspace. */
export const DELIVERY_CHANNELS = ['email', 'chat'] as const;
/** Decided: `each` sends per trigger; hourly and daily send at most one digest per period. */
export const PACING_MODES = ['each', 'hourly', 'daily'] as const;
/** Decided: operators of an event alert's `filters` (gt..lte compare numeric fields). */
export const AUTOMATION_FILTER_OPS = ['eq', 'ne', 'in', 'nin', 'contains', 'not_contains', 'gt', 'gte', 'lt', 'lte'] as const;
/** Comparisons of a threshold condition. */
export const CONDITION_OPS = ['gt', 'gte', 'lt', 'lte'] as const;
/** What a threshold condition compares the gathered number with. */
export const CONDITION_COMPARES = ['value', 'previous_period'] as const;
/** How a comparison with the previous period is measured. */
export const CONDITION_CHANGES = ['absolute', 'percent'] as const;
/** What started a run; `recovery` is a threshold alert back to normal. */
export const RUN_TRIGGERS = ['event', 'digest', 'schedule', 'threshold', 'recovery', 'manual'] as const;
export const RUN_STATUSES = ['queued', 'sent', 'failed', 'skipped'] as const;
/** `failed` is the dead state: given up (a permanent error, or attempts used up) until an operator retries it. */
export const DELIVERY_STATUSES = ['queued', 'sending', 'sent', 'failed', 'skipped'] as const;

export const EVENT_TYPES_NAMED = ['pageview', 'custom'] as const;
