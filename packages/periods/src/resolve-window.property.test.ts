// Properties of the period parser over many timezones and clocks (fast-check).
import { ProblemError } from '@sightline/kit';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { resolveWindow } from './resolve-window';

// Zones with DST in either hemisphere, half-hour and 45-minute offsets, a midnight DST change
// (Havana: 00:00 does not exist on the spring day), and the date line.
const ZONES = [
  'UTC', 'Europe/Berlin', 'America/Los_Angeles', 'America/Havana', 'Australia/Sydney', 'Asia/Kolkata',
  'Asia/Kathmandu', 'Pacific/Chatham', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/St_Johns',
];
const DAY_MS = 86_400_000;
const MAX_DAYS = 731;

const zone = fc.constantFrom(...ZONES);
const now = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2060-01-01T00:00:00Z'), noInvalidDate: true });
const unit = fc.constantFrom('week', 'month', 'quarter', 'year');
const weekday = fc.constantFrom('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday');

/** Every relative phrase the resolver documents. */
const relativePhrase = fc.oneof(
  fc.constantFrom('today', 'yesterday'),
  unit.map((u) => `this ${u}`),
  unit.map((u) => `last ${u}`),
  fc.tuple(fc.integer({ min: 1, max: 800 }), fc.constantFrom('days', 'weeks', 'months', 'quarters', 'years'))
    .map(([n, u]) => `last ${n} ${u}`),
  weekday,
  weekday.map((d) => `last ${d}`),
);

function tryResolve(period: string, timezone: string, at: Date) {
  try {
    return resolveWindow({ period, timezone, now: at });
  } catch (error) {
    if (error instanceof ProblemError && error.kind === 'window-too-large') return 'too-large' as const;
    throw error;
  }
}

/** Local dates between two local day starts (not hours: some days have 23 or 25). */
function calendarDays(fromIso: string, toIso: string, timezone: string): number {
  const date = (iso: string) => DateTime.fromISO(DateTime.fromISO(iso, { zone: timezone }).toISODate()!, { zone: 'utc' });
  return date(toIso).diff(date(fromIso), 'days').days;
}

function startsADay(iso: string, timezone: string): boolean {
  const dt = DateTime.fromISO(iso, { zone: timezone });
  return dt.toMillis() === dt.startOf('day').toMillis();
}

describe('period parser properties', () => {
  it('every relative phrase gives from < to <= now + 1 day, at most maxDays long, or is refused as too large', () => {
    fc.assert(fc.property(relativePhrase, zone, now, (period, timezone, at) => {
      const window = tryResolve(period, timezone, at);
      if (window === 'too-large') return;
      const from = Date.parse(window.from);
      const to = Date.parse(window.to);
      expect(from).toBeLessThan(to);
      expect(startsADay(window.from, timezone) && startsADay(window.to, timezone)).toBe(true);
      expect(to).toBeLessThanOrEqual(at.getTime() + DAY_MS + 3_600_000); // a 25-hour day can end later
      expect(calendarDays(window.from, window.to, timezone)).toBeLessThanOrEqual(MAX_DAYS);
      expect(window.expression).toBe(period);
    }), { numRuns: 500 });
  });

  it('a bare month name is the whole of the latest such month that has begun', () => {
    const month = fc.integer({ min: 1, max: 12 });
    fc.assert(fc.property(month, zone, now, (m, timezone, at) => {
      const name = DateTime.fromObject({ year: 2026, month: m, day: 1 }).setLocale('en').toFormat('LLLL');
      const window = resolveWindow({ period: name, timezone, now: at });
      const from = DateTime.fromISO(window.from, { zone: timezone });
      const local = DateTime.fromJSDate(at, { zone: timezone });
      expect(from.month).toBe(m);
      expect(from.day).toBe(1);
      expect(Date.parse(window.from)).toBeLessThanOrEqual(at.getTime());
      expect(local.diff(from, 'years').years).toBeLessThan(1);
      expect(DateTime.fromISO(window.to, { zone: timezone }).toMillis()).toBe(from.plus({ months: 1 }).startOf('day').toMillis());
    }), { numRuns: 200 });
  });

  it('is refused as too large exactly when longer than maxDays', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1200 }), zone, now, (n, timezone, at) => {
      const window = tryResolve(`last ${n} days`, timezone, at);
      expect(window === 'too-large').toBe(n > MAX_DAYS);
    }), { numRuns: 200 });
  });

  it('"last N days" is exactly N whole calendar days ending at the start of today', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: MAX_DAYS }), zone, now, (n, timezone, at) => {
      const window = resolveWindow({ period: `last ${n} days`, timezone, now: at });
      expect(Date.parse(window.to)).toBe(DateTime.fromJSDate(at, { zone: timezone }).startOf('day').toMillis());
      expect(startsADay(window.from, timezone)).toBe(true);
      expect(calendarDays(window.from, window.to, timezone)).toBe(n);
    }), { numRuns: 300 });
  });

  it('a range a..b runs from the start of a to the start of the day after b', () => {
    const day = fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2059-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    fc.assert(fc.property(day, fc.integer({ min: 0, max: MAX_DAYS - 1 }), zone, (a, span, timezone) => {
      const start = DateTime.fromISO(a, { zone: timezone }).startOf('day');
      const b = start.plus({ days: span }).toISODate()!;
      const window = resolveWindow({ period: `${a}..${b}`, timezone, now: new Date('2060-01-01T00:00:00Z') });
      expect(window.from).toBe(start.toUTC().toJSDate().toISOString());
      // The day after b, then its start: where a day begins in a gap (Havana springs forward at
      // midnight), luxon reads b as 01:00, and adding a day to that would miss the next midnight.
      expect(window.to).toBe(DateTime.fromISO(b, { zone: timezone }).plus({ days: 1 }).startOf('day').toUTC().toJSDate().toISOString());
      expect(calendarDays(window.from, window.to, timezone)).toBe(span + 1);
    }), { numRuns: 300, examples: [['2031-04-10', 339, 'America/Havana']] });
  });

  it('resolving is deterministic', () => {
    fc.assert(fc.property(relativePhrase, zone, now, (period, timezone, at) => {
      expect(tryResolve(period, timezone, new Date(at))).toEqual(tryResolve(period, timezone, new Date(at)));
    }), { numRuns: 200 });
  });

  it('never throws anything but invalid-window or window-too-large for arbitrary text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), zone, now, (period, timezone, at) => {
      try {
        const window = resolveWindow({ period, timezone, now: at });
        expect(Date.parse(window.from)).toBeLessThan(Date.parse(window.to));
      } catch (error) {
        expect(error).toBeInstanceOf(ProblemError);
        expect(['invalid-window', 'window-too-large']).toContain((error as ProblemError).kind);
      }
    }), { numRuns: 300 });
  });
});
