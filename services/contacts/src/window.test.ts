import { ProblemError } from '@sightline/kit';
import { resolveWindow as analyticsWindow } from '@sightline/periods';
import { CONTACTS_MAX_WINDOW_DAYS, resolveWindow } from './window';

const NOW = new Date('2026-03-15T10:30:00Z');

describe('contacts window', () => {
  it('is all time with neither period nor from/to', () => {
    expect(resolveWindow({}, 'UTC', NOW)).toEqual({ from: null, to: null, expression: null });
  });

  it('is the analytics window for every phrase the analytics reads take', () => {
    for (const period of ['last 30 days', 'today', 'yesterday', 'last month', 'this week', 'March 2026', '2026-02-01..2026-02-28']) {
      for (const timezone of ['UTC', 'Europe/Berlin', 'America/New_York']) {
        const shared = analyticsWindow({ period, timezone, now: NOW });
        expect(resolveWindow({ period }, timezone, NOW)).toEqual({ from: new Date(shared.from), to: new Date(shared.to), expression: shared.expression });
      }
    }
  });

  it('takes from/to over period, as the analytics reads do', () => {
    const window = resolveWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00+01:00', period: 'today' }, 'UTC', NOW);
    expect(window).toEqual({ from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-03-01T23:00:00Z'), expression: null });
  });

  it('refuses what the shared resolver refuses, with its kinds', () => {
    const kindOf = (input: Parameters<typeof resolveWindow>[0]): string | undefined => {
      try {
        resolveWindow(input, 'UTC', NOW);
        return undefined;
      } catch (error) {
        expect(error).toBeInstanceOf(ProblemError);
        return (error as ProblemError).kind;
      }
    };
    expect(kindOf({ period: 'soon' })).toBe('invalid-window');
    expect(kindOf({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' })).toBe('invalid-window');
    // The ledger's bound is wider than analytics': 3,660 days pass, one more day does not.
    expect(kindOf({ from: '2016-03-07T00:00:00Z', to: '2026-03-15T00:00:00Z' })).toBeUndefined();
    expect(CONTACTS_MAX_WINDOW_DAYS).toBe(3660);
    expect(kindOf({ from: '2016-03-06T00:00:00Z', to: '2026-03-15T00:00:00Z' })).toBe('window-too-large');
  });
});
