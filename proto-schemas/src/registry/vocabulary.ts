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
/** `chat` posts to a channel of a chat workspace connected in the app (incoming webhook). */
export const DELIVERY_CHANNELS = ['email', 'chat'] as const;
/** Decided: `each` sends per trigger; hourly and daily send at most one digest per period. */
export const PACING_MODES = ['each', 'hourly', 'daily'] as const;

export const EVENT_TYPES_NAMED = ['pageview', 'custom'] as const;
