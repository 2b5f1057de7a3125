// How Meta's answers say "slow down" or "try again", read the same way by spend pulls (insights)
// and conversion uploads (CAPI): the X-Business-Use-Case-Usage header
// ({"<business id>": [{"call_count": %, "total_cputime": %, "total_time": %,
// "estimated_time_to_regain_access": minutes}, ...]}) and the Graph error codes.
import { num } from './spend/spend.types';

interface UsageEntry {
  call_count?: number;
  total_cputime?: number;
  total_time?: number;
  estimated_time_to_regain_access?: number;
}

/** The highest usage percentage and the longest wait (ms) x-business-use-case-usage states. */
export function businessUsage(headers: Headers): { percent: number; regainMs: number } {
  const raw = headers.get('x-business-use-case-usage');
  let percent = 0;
  let regainMs = 0;
  if (!raw) return { percent, regainMs };
  try {
    const parsed = JSON.parse(raw) as Record<string, UsageEntry[]>;
    for (const entries of Object.values(parsed)) {
      for (const e of entries ?? []) {
        percent = Math.max(percent, num(e.call_count), num(e.total_cputime), num(e.total_time));
        regainMs = Math.max(regainMs, num(e.estimated_time_to_regain_access) * 60_000);
      }
    }
  } catch {
    // An unreadable header states nothing.
  }
  return { percent, regainMs };
}

/**
 * Graph error codes of rate limiting (Meta's error-handling and rate-limiting pages): 4 application,
 * 17 user, 32 page, 341 application limit, 613 custom rate limit; 80000-80014 business use case limits.
 */
const THROTTLE_CODES = new Set([4, 17, 32, 341, 613]);
const BUSINESS_USE_CASE_CODES = { from: 80000, to: 80014 };
/** Codes Meta documents as temporary: 1 unknown error, 2 service unavailable. */
const TRANSIENT_CODES = new Set([1, 2]);
/** Throttled without a stated wait: Meta's limits roll over an hour; come back in five minutes. */
export const META_THROTTLE_WAIT_MS = 5 * 60_000;

/** Whether a failed Graph call is rate limiting, and whether trying again later can succeed. */
export function metaFailure(status: number, error: { code?: number; is_transient?: boolean } | null | undefined): { throttled: boolean; retryable: boolean } {
  const code = error?.code ?? -1;
  const throttled = THROTTLE_CODES.has(code) || (code >= BUSINESS_USE_CASE_CODES.from && code <= BUSINESS_USE_CASE_CODES.to);
  const retryable = throttled || TRANSIENT_CODES.has(code) || error?.is_transient === true || status === 429 || status >= 500;
  return { throttled, retryable };
}
