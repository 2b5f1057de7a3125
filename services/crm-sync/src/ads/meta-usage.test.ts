// The one reading of Meta's "slow down" and "try again" that spend pulls and CAPI uploads share.
import { businessUsage, metaFailure } from './meta-usage';

describe('metaFailure', () => {
  it.each([
    [400, 4, true, true], [400, 17, true, true], [400, 32, true, true], [400, 341, true, true], [400, 613, true, true],
    // The business use case range, at both ends and one past each.
    [400, 80000, true, true], [400, 80014, true, true], [400, 79999, false, false], [400, 80015, false, false],
    [500, 1, false, true], [503, 2, false, true],
    [400, 190, false, false], [400, 100, false, false],
  ])('status %i code %i: throttled %s, retryable %s', (status, code, throttled, retryable) => {
    expect(metaFailure(status, { code })).toEqual({ throttled, retryable });
  });

  it('retries what Meta marks transient, a 429 and a 5xx without a body', () => {
    expect(metaFailure(400, { code: 100, is_transient: true })).toEqual({ throttled: false, retryable: true });
    expect(metaFailure(429, null)).toEqual({ throttled: false, retryable: true });
    expect(metaFailure(502, undefined)).toEqual({ throttled: false, retryable: true });
    expect(metaFailure(400, {})).toEqual({ throttled: false, retryable: false });
  });
});

describe('businessUsage', () => {
  it('takes the highest percentage and the longest wait over every business and entry', () => {
    const headers = new Headers({ 'x-business-use-case-usage': JSON.stringify({
      '111': [{ call_count: 12, total_cputime: 40, total_time: 3, estimated_time_to_regain_access: 0 }],
      '222': [{ call_count: 95, total_cputime: 10, total_time: 99.5, estimated_time_to_regain_access: 7 }],
    }) });
    expect(businessUsage(headers)).toEqual({ percent: 99.5, regainMs: 7 * 60_000 });
    expect(businessUsage(new Headers({ 'x-business-use-case-usage': 'not json' }))).toEqual({ percent: 0, regainMs: 0 });
    expect(businessUsage(new Headers())).toEqual({ percent: 0, regainMs: 0 });
  });
});
