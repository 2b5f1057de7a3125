// When a failed write-back is tried again: exponential backoff from a base delay, never sooner than
// the destination asked for (Retry-After, a quota's retry delay), and a bounded number of attempts.
export interface RetryPolicy {
  /** Attempts before a retryable failure becomes dead. */
  maxAttempts: number;
  /** Delay after the first failure; doubled per further failure. */
  baseDelayMs: number;
  /** Cap of the backoff (a destination's own Retry-After may ask for longer, up to a day). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 30_000, maxDelayMs: 6 * 3600_000 };

const LONGEST_ASKED_DELAY_MS = 24 * 3600_000;

/** Delay before attempt `attemptsMade + 1`, given the destination's requested delay (if any). */
export function retryDelayMs(policy: RetryPolicy, attemptsMade: number, askedMs: number | null): number {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attemptsMade - 1));
  return askedMs === null ? backoff : Math.max(backoff, Math.min(askedMs, LONGEST_ASKED_DELAY_MS));
}

/** A Retry-After header (delta seconds or an HTTP date) in milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: Date): number | null {
  if (header === null || header.trim() === '') return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** The Retry-After header of an answer, in milliseconds from now; null when absent or unreadable. */
export function retryAfterOf(headers: Headers): number | null {
  return parseRetryAfter(headers.get('retry-after'), new Date());
}

/** A protobuf Duration as JSON ("30s", "1.5s") in milliseconds; null when unreadable. */
export function parseDuration(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Math.round(Number(match[1]) * 1000) : null;
}
