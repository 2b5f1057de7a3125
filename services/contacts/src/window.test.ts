import { ProblemError } from '@sightline/kit';
import { resolveWindow } from './window';

const NOW = new Date('2026-03-15T10:30:00Z');

describe('contacts window', () => {
  it('is all time with no period and no from/to', () => {
    expect(resolveWindow({}, 'UTC', NOW)).toEqual({ from: null, to: null, expression: null });
  });

  it('uses from/to as given, either alone, and refuses from after to', () => {
    expect(resolveWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00+01:00' }, 'UTC', NOW)).toEqual({
      from: new Date('2026-03-01T00:00:00Z'),
      to: new Date('2026-03-01T23:00:00Z'),
      expression: null,
    });
    expect(resolveWindow({ from: '2026-03-01T00:00:00Z', period: 'today' }, 'UTC', NOW).to).toBeNull();
    expect(() => resolveWindow({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, 'UTC', NOW)).toThrow(ProblemError);
  });

  it('resolves the simple periods in the website timezone', () => {
    expect(resolveWindow({ period: 'today' }, 'Europe/Berlin', NOW)).toEqual({
      from: new Date('2026-03-14T23:00:00Z'),
      to: new Date('2026-03-15T23:00:00Z'),
      expression: 'today',
    });
    expect(resolveWindow({ period: 'yesterday' }, 'America/New_York', NOW).from).toEqual(new Date('2026-03-14T04:00:00Z'));
    const week = resolveWindow({ period: 'Last 7 days' }, 'UTC', NOW);
    expect([week.from, week.to]).toEqual([new Date('2026-03-09T00:00:00Z'), new Date('2026-03-16T00:00:00Z')]);
    const range = resolveWindow({ period: '2026-02-01..2026-02-28' }, 'UTC', NOW);
    expect([range.from, range.to]).toEqual([new Date('2026-02-01T00:00:00Z'), new Date('2026-03-01T00:00:00Z')]);
  });

  it('answers invalid-window naming the accepted forms for anything else', () => {
    for (const period of ['this month', 'last 0 days', '2026-03-02..2026-03-01', '2026-02-30..2026-03-01', 'soon']) {
      let error: unknown;
      try {
        resolveWindow({ period }, 'UTC', NOW);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).kind).toBe('invalid-window');
      expect((error as ProblemError).remediation).toMatch(/last N days/);
    }
  });
});
