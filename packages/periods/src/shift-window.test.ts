// Comparison windows across daylight-saving changes: whole local days stay midnight to midnight.
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { resolveWindow } from './resolve-window';
import { previousWindow, shiftWindowDays } from './shift-window';

const w = (from: string, to: string) => ({ from, to });
/** One whole local day, as resolveWindow gives it. */
const day = (date: string, timezone: string) => {
  const { from, to } = resolveWindow({ period: date, timezone });
  return { from, to };
};

describe('previousWindow: whole local days', () => {
  // [timezone, window day, the day before (from, to)]: the DST day itself, the day after it, the day before it.
  const rows: [string, string, string, string][] = [
    // Berlin springs forward on 29 March 2026 (a 23-hour day) and falls back on 25 October (25 hours).
    ['Europe/Berlin', '2026-03-28', '2026-03-26T23:00:00.000Z', '2026-03-27T23:00:00.000Z'],
    ['Europe/Berlin', '2026-03-29', '2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z'],
    ['Europe/Berlin', '2026-03-30', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['Europe/Berlin', '2026-10-25', '2026-10-23T22:00:00.000Z', '2026-10-24T22:00:00.000Z'],
    ['Europe/Berlin', '2026-10-26', '2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'],
    // New York springs forward on 8 March 2026 and falls back on 1 November.
    ['America/New_York', '2026-03-08', '2026-03-07T05:00:00.000Z', '2026-03-08T05:00:00.000Z'],
    ['America/New_York', '2026-03-09', '2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z'],
    ['America/New_York', '2026-11-01', '2026-10-31T04:00:00.000Z', '2026-11-01T04:00:00.000Z'],
    ['America/New_York', '2026-11-02', '2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z'],
  ];
  it.each(rows)('%s: the day before %s', (timezone, date, from, to) => {
    expect(previousWindow(day(date, timezone), timezone)).toEqual(w(from, to));
  });

  it('a week ending at the change is preceded by the week before, midnight to midnight', () => {
    const now = new Date('2026-03-30T10:00:00Z');
    const window = resolveWindow({ period: 'last 7 days', timezone: 'Europe/Berlin', now }); // 23 Mar .. 29 Mar
    expect(previousWindow(window, 'Europe/Berlin')).toEqual(w('2026-03-15T23:00:00.000Z', '2026-03-22T23:00:00.000Z'));
  });

  it('a week containing the change is preceded by 7 local days, not 7 × 24 hours', () => {
    const window = resolveWindow({ period: '2026-10-26..2026-11-01', timezone: 'America/New_York' });
    expect(previousWindow(window, 'America/New_York')).toEqual(w('2026-10-19T04:00:00.000Z', '2026-10-26T04:00:00.000Z'));
  });

  it('where local midnight does not exist, the day still starts at its first local time', () => {
    // Santiago jumps from 00:00 to 01:00 on 6 September 2026.
    expect(previousWindow(day('2026-09-07', 'America/Santiago'), 'America/Santiago'))
      .toEqual(w('2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z'));
    expect(previousWindow(day('2026-09-06', 'America/Santiago'), 'America/Santiago'))
      .toEqual(w('2026-09-05T04:00:00.000Z', '2026-09-06T04:00:00.000Z'));
  });
});

describe('previousWindow: not whole days', () => {
  it('"last 24 hours" across the spring change is preceded by equal local wall-clock time', () => {
    // 29 Mar 12:00 (+01 before 02:00, +02 after) .. 30 Mar 12:00 +02: the previous window runs from
    // 28 Mar 12:00 +01 to 29 Mar 12:00 +02, i.e. 23 real hours.
    const window = w('2026-03-29T10:00:00.000Z', '2026-03-30T10:00:00.000Z');
    expect(previousWindow(window, 'Europe/Berlin')).toEqual(w('2026-03-28T11:00:00.000Z', '2026-03-29T10:00:00.000Z'));
  });

  it('a window from a midnight to now keeps its wall-clock length', () => {
    const window = w('2026-11-01T04:00:00.000Z', '2026-11-02T15:30:00.000Z'); // 1 Nov 00:00 .. 2 Nov 10:30 EST
    expect(previousWindow(window, 'America/New_York')).toEqual(w('2026-10-30T17:30:00.000Z', '2026-11-01T04:00:00.000Z'));
  });
});

describe('shiftWindowDays', () => {
  it('moves whole days by local days across the change (Berlin, spring and autumn)', () => {
    expect(shiftWindowDays(day('2026-03-30', 'Europe/Berlin'), -7, 'Europe/Berlin'))
      .toEqual(w('2026-03-22T23:00:00.000Z', '2026-03-23T23:00:00.000Z'));
    expect(shiftWindowDays(day('2026-03-30', 'Europe/Berlin'), -1, 'Europe/Berlin'))
      .toEqual(day('2026-03-29', 'Europe/Berlin'));
    expect(shiftWindowDays(day('2026-10-26', 'Europe/Berlin'), -1, 'Europe/Berlin'))
      .toEqual(day('2026-10-25', 'Europe/Berlin'));
    expect(shiftWindowDays(day('2026-10-25', 'Europe/Berlin'), -1, 'Europe/Berlin'))
      .toEqual(day('2026-10-24', 'Europe/Berlin'));
  });

  it('moves whole days by local days across the change (New York)', () => {
    expect(shiftWindowDays(day('2026-03-09', 'America/New_York'), -1, 'America/New_York'))
      .toEqual(day('2026-03-08', 'America/New_York'));
    expect(shiftWindowDays(day('2026-03-08', 'America/New_York'), -1, 'America/New_York'))
      .toEqual(day('2026-03-07', 'America/New_York'));
    expect(shiftWindowDays(day('2026-11-02', 'America/New_York'), -7, 'America/New_York'))
      .toEqual(day('2026-10-26', 'America/New_York'));
    expect(shiftWindowDays(day('2026-10-31', 'America/New_York'), 2, 'America/New_York'))
      .toEqual(day('2026-11-02', 'America/New_York'));
  });

  it('keeps local wall-clock time on ends that are not midnight', () => {
    const window = w('2026-03-29T10:00:00.000Z', '2026-03-30T10:00:00.000Z'); // 12:00 local .. 12:00 local
    expect(shiftWindowDays(window, -1, 'Europe/Berlin')).toEqual(w('2026-03-28T11:00:00.000Z', '2026-03-29T10:00:00.000Z'));
  });

  it('refuses what only a caller bug can give', () => {
    const window = day('2026-03-30', 'Europe/Berlin');
    expect(() => shiftWindowDays(window, 1.5, 'Europe/Berlin')).toThrow(RangeError);
    expect(() => shiftWindowDays(window, 1, 'Mars/Olympus')).toThrow(RangeError);
    expect(() => previousWindow({ from: window.to, to: window.from }, 'Europe/Berlin')).toThrow(RangeError);
  });
});

describe('agree with resolveWindow on calendar days (property)', () => {
  const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Havana', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
  const date = fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2059-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const plusDays = (iso: string, n: number) => DateTime.fromISO(iso, { zone: 'utc' }).plus({ days: n }).toISODate() as string;

  it('the window before N whole days is the N days before; shifting by K days is the span K days away', () => {
    fc.assert(fc.property(fc.constantFrom(...ZONES), date, fc.integer({ min: 1, max: 60 }), fc.integer({ min: -400, max: 400 }), (timezone, start, n, k) => {
      const end = plusDays(start, n - 1);
      const window = resolveWindow({ period: `${start}..${end}`, timezone });
      const before = resolveWindow({ period: `${plusDays(start, -n)}..${plusDays(start, -1)}`, timezone });
      const shifted = resolveWindow({ period: `${plusDays(start, k)}..${plusDays(end, k)}`, timezone });
      expect(previousWindow(window, timezone)).toEqual({ from: before.from, to: before.to });
      expect(shiftWindowDays(window, k, timezone)).toEqual({ from: shifted.from, to: shifted.to });
    }), { numRuns: 300 });
  });
});
