// Turns a plain-language period into a span of the website's calendar. The common phrases are
// matched explicitly so their meaning is exact and tested; chrono-node only reads what is left
// (free-form dates such as "March 4, 2026" or "3 days ago"). Every span is whole days unless an
// ISO date-time was given, and `to` is exclusive.
import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';

/** Start (inclusive) and end (exclusive), both in the website timezone. */
export interface Span {
  from: DateTime;
  to: DateTime;
}

type CalendarUnit = 'week' | 'month' | 'quarter' | 'year';
type SpanUnit = 'days' | 'weeks' | 'months' | 'quarters' | 'years';

const PLURAL: Record<string, SpanUnit> = {
  day: 'days', week: 'weeks', month: 'months', quarter: 'quarters', year: 'years',
};

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(z|[+-]\d{2}(:?\d{2})?)?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Lowercased, trimmed, single-spaced. */
function normalise(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** The span a period names, or null when it is not understood. `now` carries the zone. */
export function parsePeriod(raw: string, now: DateTime): Span | null {
  const text = raw.trim();
  const dots = text.indexOf('..');
  if (dots === -1) return parseSingle(normalise(text), now);
  const start = text.slice(0, dots).trim();
  const end = text.slice(dots + 2).trim();
  if (start === '' || end.includes('..')) return null;
  const from = rangeEdge(start, now, 'from');
  // An open end ("2026-03-01..") runs through today.
  const to = end === '' ? now.startOf('day').plus({ days: 1 }).startOf('day') : rangeEdge(end, now, 'to');
  return from && to ? { from, to } : null;
}

/** One side of a range: an exact instant, or the start/end of whatever span the phrase names. */
function rangeEdge(side: string, now: DateTime, edge: 'from' | 'to'): DateTime | null {
  if (DATE_TIME.test(side)) return parseInstant(side, now);
  const span = parseSingle(normalise(side), now);
  return span ? span[edge] : null;
}

/** An ISO date-time; without an offset it is read in the website timezone. */
export function parseInstant(text: string, now: DateTime): DateTime | null {
  const iso = text.trim().toUpperCase().replace(' ', 'T');
  if (!DATE_TIME.test(iso)) return null;
  const dt = DateTime.fromISO(iso, { zone: now.zone });
  return dt.isValid ? dt : null;
}

function wholeDays(first: DateTime, days = 1): Span {
  const from = first.startOf('day');
  return { from, to: from.plus({ days }) };
}

function wholeMonth(year: number, month: number, now: DateTime): Span | null {
  const from = DateTime.fromObject({ year, month, day: 1 }, { zone: now.zone });
  return from.isValid ? { from, to: from.plus({ months: 1 }) } : null;
}

function monthIndex(word: string): number {
  // Full names and any prefix of at least three letters ("mar", "sept").
  if (word.length < 3) return -1;
  return MONTHS.findIndex((name) => name.startsWith(word));
}

function weekdayIndex(word: string): number {
  if (word.length < 3) return -1;
  return WEEKDAYS.findIndex((name) => name.startsWith(word));
}

/**
 * A phrase that is not a range. Its edges are snapped to local day starts after the arithmetic:
 * where midnight does not exist a day starts at 01:00, and adding days to that 01:00 would
 * otherwise carry the hour into days that do have a midnight.
 */
function parseSingle(text: string, now: DateTime): Span | null {
  const span = parsePhrase(text, now);
  return span && { from: span.from.startOf('day'), to: span.to.startOf('day') };
}

function parsePhrase(text: string, now: DateTime): Span | null {
  const today = now.startOf('day');
  if (text === 'today') return wholeDays(today);
  if (text === 'yesterday') return wholeDays(today.minus({ days: 1 }));

  let m = /^(?:this|current) (week|month|quarter|year)$/.exec(text);
  if (m) {
    // To date: from the unit's start through the end of today.
    return { from: now.startOf(m[1] as CalendarUnit), to: today.plus({ days: 1 }) };
  }

  m = /^(?:last|previous) (week|month|quarter|year)$/.exec(text);
  if (m) {
    const current = now.startOf(m[1] as CalendarUnit);
    return { from: current.minus({ [PLURAL[m[1]!]!]: 1 }), to: current };
  }

  m = /^(?:last|past|previous) (\d{1,5}) (day|week|month|quarter|year)s?$/.exec(text);
  if (m) {
    const n = Number(m[1]);
    if (n < 1) return null;
    return { from: today.minus({ [PLURAL[m[2]!]!]: n }), to: today };
  }

  m = /^(last )?([a-z]+)$/.exec(text);
  if (m && weekdayIndex(m[2]!) !== -1) {
    const weekday = weekdayIndex(m[2]!) + 1; // luxon: 1 = Monday
    let back = (today.weekday - weekday + 7) % 7;
    if (m[1] && back === 0) back = 7; // "last monday" on a Monday is a week ago
    return wholeDays(today.minus({ days: back }));
  }

  m = /^([a-z]+),? (\d{4})$/.exec(text);
  if (m && monthIndex(m[1]!) !== -1) return wholeMonth(Number(m[2]), monthIndex(m[1]!) + 1, now);

  m = /^(\d{4})-(\d{2})$/.exec(text);
  if (m) return wholeMonth(Number(m[1]), Number(m[2]), now);

  if (/^[a-z]+$/.test(text) && monthIndex(text) !== -1) {
    // A bare month is the latest one that has begun: in March, "march" is this March, "april" last April.
    const month = monthIndex(text) + 1;
    return wholeMonth(month <= now.month ? now.year : now.year - 1, month, now);
  }

  m = /^(\d{4})$/.exec(text);
  if (m) {
    const from = DateTime.fromObject({ year: Number(m[1]), month: 1, day: 1 }, { zone: now.zone });
    return from.isValid ? { from, to: from.plus({ years: 1 }) } : null;
  }

  m = DATE.exec(text);
  if (m) {
    const day = DateTime.fromObject({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }, { zone: now.zone });
    return day.isValid ? wholeDays(day) : null;
  }

  return parseWithChrono(text, now);
}

function parseWithChrono(text: string, now: DateTime): Span | null {
  // 03/04/2026 is March 4 to some readers and 3 April to others: refuse it rather than guess.
  if (/\d+\/\d+/.test(text)) return null;
  const results = chrono.parse(text, { instant: now.toJSDate(), timezone: now.offset }, { forwardDate: false });
  const [result] = results;
  if (results.length !== 1 || !result || result.index !== 0 || result.text.length !== text.length) return null;
  const first = chronoDay(result.start, now);
  if (!first) return null;
  if (result.end) {
    const last = chronoDay(result.end, now);
    return last && last >= first ? { from: first, to: last.plus({ days: 1 }) } : null;
  }
  if (!result.start.isCertain('day') && result.start.isCertain('month')) {
    return wholeMonth(first.year, first.month, now);
  }
  return wholeDays(first);
}

/** The calendar day chrono found, placed in the website timezone (chrono's own time of day is ignored). */
function chronoDay(components: chrono.ParsedComponents, now: DateTime): DateTime | null {
  const year = components.get('year');
  const month = components.get('month');
  const day = components.get('day');
  if (year === null || month === null || day === null) return null;
  const dt = DateTime.fromObject({ year, month, day }, { zone: now.zone });
  return dt.isValid ? dt : null;
}
