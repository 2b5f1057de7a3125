// What the oracle reads and what it derives. The input is a classified event reduced to the fields
// the rules talk about; the ids and sessions ingest assigned are deliberately not part of it
// (except `ingest_session_id`, used only to name a session and to break ties in start time).

export interface OracleEvent {
  event_id: string;
  /** Only tracker hits are sessionised; server-side events never open a session. */
  origin: 'tracker' | 'api';
  event_type: string;
  event_name: string | null;
  occurred_at: string;
  anonymous_id: string | null;
  email: string | null;
  phone: string | null;
  revenue: number | null;
  /** Page URL: its utm_* parameters are the hit's campaign parameters. */
  url: string | null;
  page: string | null;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  click_ids: Record<string, string>;
  /** Session id ingest gave the hit: names the oracle's session and orders equal start times. */
  ingest_session_id?: string | null;
  /** Conversions only, from conversion.created: where it came from (default api) ... */
  conversion_origin?: 'tracker' | 'api' | 'import';
  /** ... and when the customer relationship began, when a system of record says so. */
  relationship_started_at?: string | null;
  /**
   * ... and the sales value last written back for it (PATCH /contacts), which replaces the tracked
   * revenue; null or absent when none is in force (a cleared value falls back to the revenue).
   */
  written_back_value?: number | null;
}

/** A touch: one session of one device, with the attributes of its first hit. */
export interface OracleSession {
  /** ingest's id of the session's first hit when known, else `<anonymous_id>@<start ms>`. */
  id: string;
  anonymous_id: string;
  person: string;
  startMs: number;
  lastMs: number;
  campaignKey: string;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  landing_page: string | null;
  eventIds: string[];
}

export interface OracleConversion {
  id: string;
  person: string;
  occurredMs: number;
  revenue: number;
  event_type: string;
  event_name: string | null;
  origin: 'tracker' | 'api' | 'import';
  relationshipStartedMs: number | null;
  hasIdentity: boolean;
  hasAnonymousId: boolean;
  /** The person's touches inside the lookback, oldest first. */
  journey: OracleSession[];
  /** The person had any session up to the conversion, inside the lookback or not. */
  hadSessionBefore: boolean;
}

export const ATTRIBUTION_MODELS = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];

/** Every model that weighs one journey's touches on its own: the five above and last_non_direct. */
export type RuleModel = AttributionModel | 'last_non_direct';

export const UNATTRIBUTED = 'Unattributed';
export const LOOKBACK_DAYS = 90;
export const DAY_MS = 86_400_000;
export const SESSION_TIMEOUT_MS = 30 * 60_000;
export const HALF_LIFE_MS = 7 * DAY_MS;

/** A window [from, to) as epoch ms. */
export interface OracleWindow {
  fromMs: number;
  toMs: number;
}
