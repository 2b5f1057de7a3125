// The one window resolver every analytics endpoint calls: period or from/to in, exact UTC instants
// out, refused with invalid-window or window-too-large. Rules: ../README.md.
import { DEFAULT_PERIOD, MAX_WINDOW_DAYS } from '@sightline/proto-schemas';
import { DateTime } from 'luxon';
import { STORABLE_TIME_MAX_MS, STORABLE_TIME_RANGE, WINDOW_TIME_MIN_MS } from '@sightline/kit';
import { invalidWindow, windowTooLarge } from './errors';
import { parseInstant, parsePeriod, type Span } from './parse-period';

/** The window a request used, as echoed in `meta.window`. Instants are UTC (`Z`); `to` is exclusive. */
export interface ResolvedWindow {
  from: string;
  to: string;
  /** The period phrase that produced the window (the default one when none was given); null for from/to. */
  expression: string | null;
}

export interface ResolveWindowInput {
  period?: string;
  from?: string;
  to?: string;
  /** IANA timezone of the website, e.g. "Europe/Berlin". */
  timezone: string;
  /** Reference instant; defaults to the current time. */
  now?: Date;
  /** Longest window accepted, in calendar days of the website timezone. Default MAX_WINDOW_DAYS. */
  maxDays?: number;
  /** Used when neither period nor from/to is given. Default DEFAULT_PERIOD ("last 30 days"). */
  defaultPeriod?: string;
}

/** How far back a window given only `to` reaches. */
export const TO_ONLY_SPAN_DAYS = 30;

export function resolveWindow(input: ResolveWindowInput): ResolvedWindow {
  const now = DateTime.fromJSDate(input.now ?? new Date(), { zone: input.timezone });
  // A bad timezone or clock is the caller's bug (the website's timezone is validated when stored),
  // not something the API client can fix, so it is not a problem document.
  if (!now.isValid) throw new RangeError(`resolveWindow: ${now.invalidExplanation ?? 'invalid timezone or now'} (timezone ${JSON.stringify(input.timezone)})`);
  const maxDays = input.maxDays ?? MAX_WINDOW_DAYS;

  let span: Span;
  let expression: string | null;
  if (input.from !== undefined || input.to !== undefined) {
    span = explicitSpan(input.from, input.to, now);
    expression = null;
  } else {
    expression = (input.period ?? input.defaultPeriod ?? DEFAULT_PERIOD).trim();
    const parsed = parsePeriod(expression, now);
    if (!parsed) throw invalidWindow(`The period ${JSON.stringify(expression)} is not understood.`);
    span = parsed;
  }

  if (span.from >= span.to) {
    throw invalidWindow(`The window is empty or reversed: it starts at ${iso(span.from)} and ends (exclusive) at ${iso(span.to)}.`);
  }
  const days = lengthInDays(span);
  if (days > maxDays) throw windowTooLarge(days, maxDays);
  // A window the stores cannot take (kit input rules) could only fail there: refused here instead.
  if (span.from.toMillis() < WINDOW_TIME_MIN_MS || span.to.toMillis() > STORABLE_TIME_MAX_MS) {
    throw invalidWindow(`The window ${iso(span.from)}..${iso(span.to)} reaches outside the dates Sightline holds (data from ${STORABLE_TIME_RANGE}; windows from 1971-01-01).`);
  }
  return { from: iso(span.from), to: iso(span.to), expression };
}

/** from/to override period; either may be alone (from alone runs to now, to alone reaches 30 days back). */
function explicitSpan(fromText: string | undefined, toText: string | undefined, now: DateTime): Span {
  const from = fromText === undefined ? undefined : readInstant('from', fromText, now);
  const to = toText === undefined ? undefined : readInstant('to', toText, now);
  if (from && to) return { from, to };
  if (from) return { from, to: now };
  if (to) return { from: to.minus({ days: TO_ONLY_SPAN_DAYS }), to };
  throw new Error('unreachable: neither from nor to');
}

/** An ISO date-time (offset optional: without one it is website time) or a date (its midnight). */
function readInstant(name: 'from' | 'to', text: string, now: DateTime): DateTime {
  const trimmed = text.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? DateTime.fromISO(trimmed, { zone: now.zone }) : null;
  const instant = date?.isValid ? date : parseInstant(trimmed, now);
  if (!instant) throw invalidWindow(`${name} ${JSON.stringify(text)} is not an ISO 8601 date-time.`);
  return instant;
}

/**
 * Calendar days in the website timezone, so a window over a DST change is not an hour "too long".
 * Whole-day windows count dates: on a day whose midnight does not exist the day starts at 01:00,
 * and measuring hours would make it a fraction.
 */
function lengthInDays({ from, to }: Span): number {
  const startsADay = (dt: DateTime) => dt.toMillis() === dt.startOf('day').toMillis();
  if (startsADay(from) && startsADay(to)) {
    const date = (dt: DateTime) => DateTime.fromISO(dt.toISODate() ?? '', { zone: 'utc' });
    return date(to).diff(date(from), 'days').days;
  }
  return to.diff(from, 'days').days;
}

function iso(dt: DateTime): string {
  return dt.toUTC().toJSDate().toISOString();
}
