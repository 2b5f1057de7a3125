import { ProblemError } from '@sightline/kit';
import { MAX_WINDOW_DAYS } from '@sightline/proto-schemas';
import { resolveWindow, type ResolveWindowInput } from './resolve-window';

// Monday 30 March 2026, 10:00 UTC. Berlin moved to summer time on Sunday 29 March (that day has
// 23 hours); Los Angeles moved on 8 March, so March there mixes PST (-8) and PDT (-7).
const NOW = new Date('2026-03-30T10:00:00Z');

type Row = [period: string, from: string, to: string];

function resolve(period: string, timezone: string, extra: Partial<ResolveWindowInput> = {}) {
  return resolveWindow({ period, timezone, now: NOW, ...extra });
}

describe('Europe/Berlin (CEST, +02:00 since 29 March)', () => {
  const rows: Row[] = [
    ['today', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ['yesterday', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'], // the 23-hour day
    ['this week', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z'], // weeks start on Monday
    ['this month', '2026-02-28T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ['this quarter', '2025-12-31T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ['this year', '2025-12-31T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ['last week', '2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['last month', '2026-01-31T23:00:00.000Z', '2026-02-28T23:00:00.000Z'],
    ['last quarter', '2025-09-30T22:00:00.000Z', '2025-12-31T23:00:00.000Z'],
    ['last year', '2024-12-31T23:00:00.000Z', '2025-12-31T23:00:00.000Z'],
    ['last 7 days', '2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['Last  30  Days', '2026-02-27T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['past 1 day', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['last 2 weeks', '2026-03-15T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['last 3 months', '2025-12-29T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['monday', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z'], // today is a Monday
    ['last monday', '2026-03-22T23:00:00.000Z', '2026-03-23T23:00:00.000Z'],
    ['sunday', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['fri', '2026-03-26T23:00:00.000Z', '2026-03-27T23:00:00.000Z'],
    ['March 2026', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
    ['mar 2026', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
    ['2026-03', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
    ['march', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
    ['april', '2025-03-31T22:00:00.000Z', '2025-04-30T22:00:00.000Z'], // the latest April that has begun
    ['2025', '2024-12-31T23:00:00.000Z', '2025-12-31T23:00:00.000Z'],
    ['2026-03-29', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['2026-03-01..2026-03-31', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
    ['2026-03-28 .. 2026-03-29', '2026-03-27T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['2026-03-29T01:30:00..2026-03-29T04:00:00', '2026-03-29T00:30:00.000Z', '2026-03-29T02:00:00.000Z'],
    ['2026-03-01T00:00:00Z..2026-03-02T12:00:00+01:00', '2026-03-01T00:00:00.000Z', '2026-03-02T11:00:00.000Z'],
    ['2026-03-01..', '2026-02-28T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ['march 2026..yesterday', '2026-02-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    // Left to chrono-node: free-form dates, each a whole day.
    ['March 4, 2026', '2026-03-03T23:00:00.000Z', '2026-03-04T23:00:00.000Z'],
    ['4 March 2026', '2026-03-03T23:00:00.000Z', '2026-03-04T23:00:00.000Z'],
    ['3 days ago', '2026-03-26T23:00:00.000Z', '2026-03-27T23:00:00.000Z'],
  ];
  test.each(rows)('%s', (period, from, to) => {
    expect(resolve(period, 'Europe/Berlin')).toEqual({ from, to, expression: period.trim() });
  });
});

describe('America/Los_Angeles (PDT, -07:00 since 8 March)', () => {
  const rows: Row[] = [
    ['today', '2026-03-30T07:00:00.000Z', '2026-03-31T07:00:00.000Z'],
    ['yesterday', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    ['this week', '2026-03-30T07:00:00.000Z', '2026-03-31T07:00:00.000Z'],
    ['this month', '2026-03-01T08:00:00.000Z', '2026-03-31T07:00:00.000Z'],
    ['this year', '2026-01-01T08:00:00.000Z', '2026-03-31T07:00:00.000Z'],
    ['last week', '2026-03-23T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    ['last month', '2026-02-01T08:00:00.000Z', '2026-03-01T08:00:00.000Z'],
    ['last quarter', '2025-10-01T07:00:00.000Z', '2026-01-01T08:00:00.000Z'],
    ['last year', '2025-01-01T08:00:00.000Z', '2026-01-01T08:00:00.000Z'],
    ['last 30 days', '2026-02-28T08:00:00.000Z', '2026-03-30T07:00:00.000Z'], // spans the 23-hour 8 March
    ['last 2 weeks', '2026-03-16T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    ['monday', '2026-03-30T07:00:00.000Z', '2026-03-31T07:00:00.000Z'],
    ['last friday', '2026-03-27T07:00:00.000Z', '2026-03-28T07:00:00.000Z'],
    ['March 2026', '2026-03-01T08:00:00.000Z', '2026-04-01T07:00:00.000Z'],
    ['2026-03-08', '2026-03-08T08:00:00.000Z', '2026-03-09T07:00:00.000Z'],
    ['2026-03-01..2026-03-31', '2026-03-01T08:00:00.000Z', '2026-04-01T07:00:00.000Z'],
    ['2026-03-08T00:00:00..2026-03-08T12:00:00', '2026-03-08T08:00:00.000Z', '2026-03-08T19:00:00.000Z'],
  ];
  test.each(rows)('%s', (period, from, to) => {
    expect(resolve(period, 'America/Los_Angeles')).toEqual({ from, to, expression: period });
  });

  it('takes "today" from the website clock, not UTC: at 03:00 UTC it is still the 29th in LA', () => {
    const early = new Date('2026-03-30T03:00:00Z');
    expect(resolveWindow({ period: 'today', timezone: 'America/Los_Angeles', now: early }).from).toBe('2026-03-29T07:00:00.000Z');
  });
});

describe('default and from/to', () => {
  it('uses "last 30 days" when neither period nor from/to is given, and echoes it', () => {
    expect(resolveWindow({ timezone: 'UTC', now: NOW })).toEqual({
      from: '2026-02-28T00:00:00.000Z', to: '2026-03-30T00:00:00.000Z', expression: 'last 30 days',
    });
  });

  it('takes another default when the endpoint gives one', () => {
    expect(resolveWindow({ timezone: 'UTC', now: NOW, defaultPeriod: 'yesterday' }).expression).toBe('yesterday');
  });

  it('lets from/to override period, exactly as given, with a null expression', () => {
    expect(resolveWindow({ period: 'last year', from: '2026-03-01T10:15:00+01:00', to: '2026-03-02T00:00:00Z', timezone: 'Europe/Berlin', now: NOW }))
      .toEqual({ from: '2026-03-01T09:15:00.000Z', to: '2026-03-02T00:00:00.000Z', expression: null });
  });

  it('reads a from/to without offset, or a bare date, in the website timezone', () => {
    expect(resolveWindow({ from: '2026-03-01', to: '2026-03-02T06:00:00', timezone: 'America/Los_Angeles', now: NOW }))
      .toEqual({ from: '2026-03-01T08:00:00.000Z', to: '2026-03-02T14:00:00.000Z', expression: null });
  });

  it('runs from alone up to now', () => {
    expect(resolveWindow({ from: '2026-03-29T00:00:00Z', timezone: 'UTC', now: NOW }))
      .toEqual({ from: '2026-03-29T00:00:00.000Z', to: '2026-03-30T10:00:00.000Z', expression: null });
  });

  it('reaches 30 days back from to alone', () => {
    expect(resolveWindow({ to: '2026-03-30T00:00:00Z', timezone: 'UTC', now: NOW }))
      .toEqual({ from: '2026-02-28T00:00:00.000Z', to: '2026-03-30T00:00:00.000Z', expression: null });
  });
});

describe('refusals', () => {
  function problem(fn: () => unknown): ProblemError {
    try {
      fn();
    } catch (error) {
      if (error instanceof ProblemError) return error;
      throw error;
    }
    throw new Error('expected a ProblemError');
  }

  it.each([
    'banana', 'last', 'last 0 days', 'last -3 days', 'last 7 fortnights', '2026-02-30', '2026-13', 'smarch 2026',
    '03/04/2026', // day/month order is ambiguous
    '..2026-03-01', '2026-03-01..2026-03-02..2026-03-03', 'today and yesterday', '   ',
  ])('%j is invalid-window, with the accepted forms in the remediation', (period) => {
    const error = problem(() => resolve(period, 'Europe/Berlin'));
    expect(error.kind).toBe('invalid-window');
    expect(error.status).toBe(400);
    for (const example of ['last 30 days', 'March 2026', '2026-03-01..2026-03-31', 'yesterday', 'this month']) {
      expect(error.remediation).toContain(example);
    }
  });

  it.each([
    ['2026-03-31..2026-03-01'],
    ['2026-03-02T00:00:00Z..2026-03-02T00:00:00Z'],
  ])('a reversed or empty range %s is invalid-window', (period) => {
    expect(problem(() => resolve(period, 'UTC')).kind).toBe('invalid-window');
  });

  it('refuses from after to, from equal to to, and from alone in the future', () => {
    const at = { timezone: 'UTC', now: NOW };
    expect(problem(() => resolveWindow({ ...at, from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' })).kind).toBe('invalid-window');
    expect(problem(() => resolveWindow({ ...at, from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:00:00Z' })).kind).toBe('invalid-window');
    expect(problem(() => resolveWindow({ ...at, from: '2026-04-01T00:00:00Z' })).kind).toBe('invalid-window');
  });

  it.each(['yesterday', 'not a date', '2026-03-01T25:00:00Z', ''])('refuses from %j that is not an ISO date-time', (from) => {
    const error = problem(() => resolveWindow({ from, to: '2026-03-02T00:00:00Z', timezone: 'UTC', now: NOW }));
    expect(error.kind).toBe('invalid-window');
    expect(error.message).toContain('from');
  });

  it(`accepts exactly ${MAX_WINDOW_DAYS} days and refuses one more, naming the bound`, () => {
    expect(() => resolve(`last ${MAX_WINDOW_DAYS} days`, 'Europe/Berlin')).not.toThrow();
    const error = problem(() => resolve(`last ${MAX_WINDOW_DAYS + 1} days`, 'Europe/Berlin'));
    expect(error.kind).toBe('window-too-large');
    expect(error.remediation).toContain(String(MAX_WINDOW_DAYS));
    expect(error.remediation).toMatch(/split/);
    expect(error.extra).toEqual({ max_days: MAX_WINDOW_DAYS });
  });

  it('bounds from/to and ranges too, and takes an endpoint-specific maxDays', () => {
    expect(problem(() => resolveWindow({ from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', timezone: 'UTC', now: NOW })).kind).toBe('window-too-large');
    expect(problem(() => resolve('2020-01-01..2026-01-01', 'UTC')).kind).toBe('window-too-large');
    expect(problem(() => resolve('last 8 days', 'UTC', { maxDays: 7 })).kind).toBe('window-too-large');
    expect(resolve('last week', 'Europe/Berlin', { maxDays: 7 }).expression).toBe('last week');
  });

  it('counts calendar days, so a 7-day window across the DST change still fits maxDays 7', () => {
    // 23 March .. 29 March in Berlin is 7 days but only 167 hours.
    expect(() => resolve('2026-03-23..2026-03-29', 'Europe/Berlin', { maxDays: 7 })).not.toThrow();
    expect(() => resolve('2026-10-19..2026-10-25', 'Europe/Berlin', { maxDays: 7 })).not.toThrow(); // 169 hours
  });

  it('starts a day whose midnight does not exist at its first instant, and still counts it as one day', () => {
    // Havana skips from 00:00 to 01:00 on 8 March 2026.
    const at = { timezone: 'America/Havana', now: new Date('2026-03-09T15:00:00Z') };
    expect(resolveWindow({ ...at, period: 'yesterday' })).toEqual({
      from: '2026-03-08T05:00:00.000Z', to: '2026-03-09T04:00:00.000Z', expression: 'yesterday',
    });
    expect(() => resolveWindow({ ...at, period: 'yesterday', maxDays: 1 })).not.toThrow();
    expect(() => resolveWindow({ ...at, now: new Date('2026-03-08T15:00:00Z'), period: `last ${MAX_WINDOW_DAYS} days` })).not.toThrow();
  });

  it('treats an unknown timezone as a programming error, not a problem for the client', () => {
    expect(() => resolveWindow({ timezone: 'Mars/Olympus_Mons', now: NOW })).toThrow(RangeError);
  });
});
