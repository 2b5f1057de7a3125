// How a delivery attempt failed: retryable (network, 4xx-temporary, 429, 5xx) or permanent (a
// channel that does not exist, a rejected address). A retryable one may say when to try again.
// The message is what API keys see on the delivery (`error`): built from codes and fixed words only,
// never a server's own text, which can name internal hosts, addresses and ports or quote the
// message. The server's text is `detail`, for the operator's log.
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(message: string, readonly retryable: boolean, readonly retryAfterMs: number | null = null, readonly detail: string | null = null) {
    super(message);
  }
}

/** A system error code (ECONNREFUSED, ETIMEDOUT, ...) is safe to show; anything else is not. */
export function errorCode(code: unknown): string | null {
  return typeof code === 'string' && /^E[A-Z0-9_]{2,30}$/.test(code) ? code : null;
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
