// Retries as the API asks (API-SPEC "Errors"): 429 and 5xx are sent again unchanged after the
// Retry-After delay, other 4xx never. Attempts and the wait are bounded, so a monthly quota that
// renews in two weeks comes back to the caller at once instead of parking it.

export interface RetryOptions {
  /** Attempts per request, the first included. Default 4; 1 turns retrying off. */
  maxAttempts?: number;
  /** Longest wait the client accepts; a longer Retry-After is returned to the caller. Default 60 s. */
  maxDelaySeconds?: number;
  /** Wait used when a retryable answer has no Retry-After, doubled per attempt. Default 1 s. */
  baseDelaySeconds?: number;
  /** Injected in tests; default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (info: { attempt: number; status: number | null; delayMs: number; request: Request }) => void;
}

export type FetchLike = (request: Request) => Promise<Response>;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A fetch that retries 429 and 5xx answers after Retry-After. A network failure is retried only
 * when repeating the request cannot write twice: a GET, or a write carrying an Idempotency-Key.
 */
export function retryingFetch(base: FetchLike, options: RetryOptions = {}): FetchLike {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxDelayMs = (options.maxDelaySeconds ?? 60) * 1000;
  const baseDelayMs = (options.baseDelaySeconds ?? 1) * 1000;
  const sleep = options.sleep ?? defaultSleep;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= maxAttempts;
      let response: Response;
      try {
        // Each attempt sends a fresh copy: a body can be read only once.
        response = await base(last ? request : request.clone());
      } catch (error) {
        if (last || !safeToRepeat(request)) throw error;
        const delayMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
        options.onRetry?.({ attempt, status: null, delayMs, request });
        await sleep(delayMs);
        continue;
      }
      if (last || !isRetryableStatus(response.status)) return response;
      const stated = retryAfterSeconds(response.headers.get('retry-after'));
      const delayMs = stated === null ? baseDelayMs * 2 ** (attempt - 1) : stated * 1000;
      if (delayMs > maxDelayMs) return response;
      // Drain the refused answer so its connection can be reused.
      await response.body?.cancel().catch(() => undefined);
      options.onRetry?.({ attempt, status: response.status, delayMs, request });
      await sleep(delayMs);
    }
  };
}

function safeToRepeat(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
}
