// Numeric limits from API-SPEC "Limits", plus the bounds the spec left open (decided here).

export interface PagingLimit {
  default: number;
  maximum: number;
  /** True: a larger value is answered with the maximum, not refused (API-SPEC "Limits"). */
  clamp: boolean;
}

export const LIMITS = {
  metrics: { default: 50, maximum: 1000, clamp: true },
  paths: { default: 50, maximum: 200, clamp: true },
  /** Decided: over the maximum is cut to it like a limit, since it only shortens the answer. */
  max_touches: { default: 5, maximum: 10, clamp: true },
  products: { default: 100, maximum: 500, clamp: true },
  contacts: { default: 50, maximum: 200, clamp: true },
  changes: { default: 100, maximum: 500, clamp: true },
  /** Maximum decided here; the spec gives only the default. */
  funnel_breakdown: { default: 50, maximum: 500, clamp: true },
  /** Maximum decided here; the spec gives only the default. */
  contact_journey: { default: 2000, maximum: 5000, clamp: true },
  /** Decided: GET /deals and GET /companies page like GET /contacts. */
  deals: { default: 50, maximum: 200, clamp: true },
  companies: { default: 50, maximum: 200, clamp: true },
} as const satisfies Record<string, PagingLimit>;

/** Decided: an analytics window may span at most this many days; longer is 400 window-too-large. */
export const MAX_WINDOW_DAYS = 731;

/** Journey `days`: default from the spec; the maximum (window-too-large above it) decided here. */
export const JOURNEY_DAYS = { default: 365, minimum: 1, maximum: 730 } as const;

/** Decided: the window used when a request gives neither period nor from/to. */
export const DEFAULT_PERIOD = 'last 30 days';

export const MAX_GROUP_BY_DIMENSIONS = 4;
export const MAX_EVENTS_PER_BATCH = 200;
/** Decided: requests per minute per client address for callers without a valid key (and for refusals before a key is read). */
export const UNAUTHENTICATED_REQUESTS_PER_MINUTE = 60;
export const FUNNEL_STEPS = { minimum: 2, maximum: 10 } as const;
export const CHANGE_RETENTION_DAYS = 90;
/** GET /changes with neither cursor nor since returns this many hours back. */
export const CHANGES_DEFAULT_LOOKBACK_HOURS = 24;
export const AUTOMATION_RUNS_RETURNED = 50;
