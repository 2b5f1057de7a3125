// The time window of GET /contacts. from/to (ISO date-times) win; otherwise `period` in a few
// simple forms resolved in the website's timezone; with neither, all time (no bound, reported
// with expression null). The full plain-language period grammar belongs to another component.
import { DateTime } from 'luxon';
import { ProblemError } from '@sightline/kit';

export const PERIOD_FORMS = ['last N days', 'today', 'yesterday', 'YYYY-MM-DD..YYYY-MM-DD'] as const;

export interface ContactsWindow {
  /** Inclusive lower bound, or null for no bound. */
  from: Date | null;
  /** Exclusive upper bound, or null for no bound (up to now). */
  to: Date | null;
  expression: string | null;
}

export interface WindowInput {
  period?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

const MAX_DAYS = 3660;

export function resolveWindow(input: WindowInput, timezone: string, now: Date = new Date()): ContactsWindow {
  if (input.from !== undefined || input.to !== undefined) {
    const from = input.from === undefined ? null : parseInstant(input.from, 'from');
    const to = input.to === undefined ? null : parseInstant(input.to, 'to');
    if (from && to && from.getTime() > to.getTime()) {
      throw new ProblemError('invalid-window', { detail: '`from` is after `to`.', remediation: 'Send a `from` that is not after `to`.' });
    }
    return { from, to, expression: null };
  }
  if (input.period === undefined) return { from: null, to: null, expression: null };
  const expression = input.period.trim();
  const today = DateTime.fromJSDate(now, { zone: timezone }).startOf('day');
  const text = expression.toLowerCase().replace(/\s+/g, ' ');
  let start: DateTime | null = null;
  let end: DateTime | null = null;
  const lastDays = /^last (\d{1,4}) days?$/.exec(text);
  if (lastDays) {
    const days = Number(lastDays[1]);
    if (days >= 1 && days <= MAX_DAYS) {
      // Today counts as one of the N days, as in the analytics tools clients know.
      start = today.minus({ days: days - 1 });
      end = today.plus({ days: 1 });
    }
  } else if (text === 'today') {
    start = today;
    end = today.plus({ days: 1 });
  } else if (text === 'yesterday') {
    start = today.minus({ days: 1 });
    end = today;
  } else {
    const range = /^(\d{4}-\d{2}-\d{2})\s*\.\.\s*(\d{4}-\d{2}-\d{2})$/.exec(text);
    if (range) {
      const first = DateTime.fromISO(range[1] ?? '', { zone: timezone });
      const last = DateTime.fromISO(range[2] ?? '', { zone: timezone });
      if (first.isValid && last.isValid && first <= last) {
        start = first.startOf('day');
        end = last.startOf('day').plus({ days: 1 });
      }
    }
  }
  if (!start || !end || !start.isValid || !end.isValid) {
    throw new ProblemError('invalid-window', {
      detail: `The period "${expression}" is not one this endpoint understands.`,
      remediation: `Use one of the forms ${PERIOD_FORMS.map((f) => `"${f}"`).join(', ')} (N up to ${MAX_DAYS}, end date inclusive), or give from/to as ISO date-times.`,
      allowed: [...PERIOD_FORMS],
    });
  }
  return { from: start.toJSDate(), to: end.toJSDate(), expression };
}

function parseInstant(value: string, name: string): Date {
  const parsed = DateTime.fromISO(value, { setZone: true });
  if (!parsed.isValid) {
    throw new ProblemError('invalid-window', { detail: `\`${name}\` is not an ISO 8601 date-time.`, remediation: `Send \`${name}\` like 2026-03-01T00:00:00Z.` });
  }
  return parsed.toJSDate();
}
