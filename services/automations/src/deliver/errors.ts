// How a delivery attempt failed: retryable (network, 4xx-temporary, 429, 5xx) or permanent (a
// channel that does not exist, a rejected address). A retryable one may say when to try again.
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(message: string, readonly retryable: boolean, readonly retryAfterMs: number | null = null) {
    super(message);
  }
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 30_000, maxDelayMs: 3_600_000 };

/** Exponential backoff from the attempt count; when the destination said when (Retry-After), exactly then. */
export function retryDelayMs(policy: RetryPolicy, attempts: number, askedMs: number | null): number {
  if (askedMs !== null) return Math.max(0, askedMs);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
}
