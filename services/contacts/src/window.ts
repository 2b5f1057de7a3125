// The time window of GET /contacts: the same resolver as every analytics read (@sightline/periods),
// so one phrase is one window everywhere. The ledger adds one rule: with neither `period` nor
// from/to, the list is every conversion (all time), reported with expression null.
import { resolveWindow as resolveAnalyticsWindow } from '@sightline/periods';

/** The ledger is read over longer spans than analytics: about ten years. */
export const CONTACTS_MAX_WINDOW_DAYS = 3660;

export interface ContactsWindow {
  /** Inclusive lower bound, or null for all time. */
  from: Date | null;
  /** Exclusive upper bound, or null for all time (up to now). */
  to: Date | null;
  expression: string | null;
}

export interface WindowInput {
  period?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export function resolveWindow(input: WindowInput, timezone: string, now: Date = new Date()): ContactsWindow {
  if (input.period === undefined && input.from === undefined && input.to === undefined) return { from: null, to: null, expression: null };
  const window = resolveAnalyticsWindow({
    timezone,
    now,
    maxDays: CONTACTS_MAX_WINDOW_DAYS,
    ...(input.period !== undefined ? { period: input.period } : {}),
    ...(input.from !== undefined ? { from: input.from } : {}),
    ...(input.to !== undefined ? { to: input.to } : {}),
  });
  return { from: new Date(window.from), to: new Date(window.to), expression: window.expression };
}
