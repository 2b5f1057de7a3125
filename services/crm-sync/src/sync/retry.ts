// How long to wait before trying a provider again: the longer of what the provider asked for
// (Retry-After) and an exponential backoff with jitter, for a bounded number of attempts.
import type { ProviderError } from '../connectors/connector';

export interface RetryPolicy {
  /** Consecutive failed attempts before the sync gives up (and records the error). */
  maxAttempts: number;
  /** Backoff of the first retry; doubled per further attempt. */
  baseDelayMs: number;
  /** Cap of the backoff; a provider asking (Retry-After) for a longer wait ends the sync instead. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 60_000 };

/** "Equal jitter": half the exponential delay, plus a random share of the other half. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

export function retryDelayMs(error: ProviderError, attempt: number, policy: RetryPolicy, random?: () => number): number {
  return Math.max(error.retryAfterMs ?? 0, backoffMs(attempt, policy, random));
}
