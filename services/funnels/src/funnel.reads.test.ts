// The comparison window of GET /funnels/{id}/steps (the store-backed answers are in counting.test.ts).
import { resolveWindow } from '@sightline/periods';
import { comparisonWindow } from './funnel.reads';

const iso = (ms: number) => new Date(ms).toISOString();

describe('comparisonWindow', () => {
  it('counts local calendar days around daylight-saving changes (New York, spring and autumn)', () => {
    const tz = 'America/New_York';
    const spring = comparisonWindow(resolveWindow({ period: '2026-03-09', timezone: tz }), 'previous', tz);
    expect([iso(spring.fromMs), iso(spring.toMs)]).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    const autumn = comparisonWindow(resolveWindow({ period: '2026-11-02', timezone: tz }), '7', tz);
    expect([iso(autumn.fromMs), iso(autumn.toMs)]).toEqual(['2026-10-26T04:00:00.000Z', '2026-10-27T04:00:00.000Z']);
  });
});
