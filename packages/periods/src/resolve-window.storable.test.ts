// Windows the stores cannot take are refused here as invalid-window, not failed in a store (issue 16,
// finding 7: `to=1970-01-01T00:00:00Z`, year 0000 periods were 500s).
import { ProblemError } from '@sightline/kit';
import { resolveWindow } from './resolve-window';

const kindOf = (input: Parameters<typeof resolveWindow>[0]): string => {
  try {
    resolveWindow(input);
    return 'ok';
  } catch (error) {
    return error instanceof ProblemError ? error.kind : String(error);
  }
};

describe('windows inside what the stores hold', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  it('refuses a window reaching before 1971-01-01, at the edge and one past it', () => {
    expect(kindOf({ to: '1970-01-01T00:00:00Z', timezone: 'UTC', now })).toBe('invalid-window');
    expect(kindOf({ period: '1970-01-01..1970-01-02', timezone: 'UTC', now })).toBe('invalid-window');
    expect(kindOf({ period: 'March 0000', timezone: 'UTC', now })).not.toBe('ok');
    expect(kindOf({ from: '1970-12-31T23:59:59Z', to: '1971-01-02T00:00:00Z', timezone: 'UTC', now })).toBe('invalid-window');
    expect(kindOf({ from: '1971-01-01T00:00:00Z', to: '1971-01-02T00:00:00Z', timezone: 'UTC', now })).toBe('ok');
  });

  it('refuses a window ending after 2100-01-01', () => {
    expect(kindOf({ from: '2099-12-31T00:00:00Z', to: '2100-01-01T00:00:00Z', timezone: 'UTC', now })).toBe('ok');
    expect(kindOf({ from: '2099-12-31T00:00:00Z', to: '2100-01-01T00:00:00.001Z', timezone: 'UTC', now })).toBe('invalid-window');
  });
});
