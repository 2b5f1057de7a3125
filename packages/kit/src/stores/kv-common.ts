// Pieces shared by both KvStore drivers so their limits behave identically.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitResult } from './types';

/**
 * rate-limiter-flexible keys its Redis window in whole seconds (a sub-second window would never
 * expire), so both drivers round the window up to whole seconds, at least one.
 */
export function rateWindowSeconds(windowMs: number): number {
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new Error(`rate window must be positive, got ${windowMs} ms`);
  return Math.max(1, Math.ceil(windowMs / 1000));
}

export function assertPositiveInteger(what: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${what} must be a positive integer, got ${value}`);
}

/** Maps a limiter outcome: it resolves when allowed and rejects with a RateLimiterRes when not. */
export async function consumeWith(
  consume: () => Promise<RateLimiterRes>,
  points: number,
): Promise<RateLimitResult> {
  try {
    const res = await consume();
    return { allowed: true, limit: points, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
  } catch (outcome) {
    if (outcome instanceof RateLimiterRes) {
      return { allowed: false, limit: points, remaining: 0, resetMs: Math.max(0, outcome.msBeforeNext) };
    }
    throw outcome;
  }
}
