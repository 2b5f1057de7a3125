// The retry delay: exponential with jitter, capped, and never shorter than the provider asked.
import { ProviderError } from '../connectors/connector';
import { backoffMs, retryDelayMs, type RetryPolicy } from './retry';

const policy: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 4000 };

describe('retry delay', () => {
  it('doubles per attempt within [half, full] of the exponential delay, up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffMs(a, policy, () => 0))).toEqual([250, 500, 1000, 2000, 2000]);
    expect([1, 2, 3, 4, 5].map((a) => backoffMs(a, policy, () => 1))).toEqual([500, 1000, 2000, 4000, 4000]);
  });

  it('honours a longer Retry-After', () => {
    expect(retryDelayMs(new ProviderError('429', 429, true, 10_000), 1, policy, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(new ProviderError('503', 503, true, null), 3, policy, () => 0)).toBe(1000);
  });
});
