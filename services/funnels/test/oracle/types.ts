// What the oracle reads: events with the person they belong to already decided (see identity.ts),
// and the funnel definition as the API stores it.

export interface OracleEvent {
  id: string;
  person: string;
  ts: number;
  type: string;
  name: string | null;
  page: string | null;
  url: string | null;
  /** properties.text, trimmed; null when absent. */
  text: string | null;
  /** Event-level and session-level attributes an audience filter reads ('' when absent). */
  attrs: Record<string, string>;
  session: { id: string; startedAt: number; attrs: Record<string, string> } | null;
}

export interface OracleRevenueFact {
  id: string;
  person: string;
  ts: number;
  stage: string;
}

export interface OracleWindow {
  fromMs: number;
  toMs: number;
}

export type RuleModels = 'first_touch' | 'last_touch' | 'linear' | 'u_shaped' | 'time_decay' | 'last_non_direct';
export type Models = RuleModels | 'markov' | 'shapley';

export const DAY_MS = 86_400_000;
export const LOOKBACK_MS = 90 * DAY_MS;
export const HALF_LIFE_MS = 7 * DAY_MS;
