// Keeps requests of one Pipedrive token within what its answers state. Pipedrive limits bursts per
// token in a short window (2 s today) and reports it on every answer: x-ratelimit-limit,
// x-ratelimit-remaining and x-ratelimit-reset (seconds until the window resets). Once remaining
// reaches 0 the next request waits for the reset; a 429 blocks the gate for the wait it states
// (Retry-After when sent, else x-ratelimit-reset). The daily token budget shows up as a 429 whose
// wait is long (until the budget resets): the caller decides what to do with such a wait.
import { ProviderError } from '../connector';
import { retryAfterOf } from '../../writeback/backoff';
import { sleep } from '../sleep';

/** Pipedrive's burst window, used when an answer says "no requests left" but not for how long. */
export const DEFAULT_WINDOW_MS = 2000;
/** Slack so a timer firing at the boundary is never early. */
const BOUNDARY_SLACK_MS = 5;

export class PipedriveRateGate {
  private blockedUntil = 0;
  private blockedBy = '';

  /**
   * Waits until a request may go out. A wait longer than `maxWaitMs` (the daily budget is spent)
   * is not sat out: it fails at once, retryable after that wait, without another request.
   */
  async admit(signal: AbortSignal, maxWaitMs: number): Promise<void> {
    for (;;) {
      const wait = this.blockedUntil - Date.now();
      if (wait <= 0) return;
      if (wait > maxWaitMs) throw new ProviderError(`Pipedrive API limit reached (${this.blockedBy}); next request allowed in ${Math.ceil(wait / 1000)} s`, 429, true, wait);
      await sleep(wait, signal);
    }
  }

  /** Reads an answer's limit headers; returns the wait a 429 asks for (ms), else null. */
  observe(headers: Headers, status: number, reason = 'HTTP 429'): number | null {
    const now = Date.now();
    const resetMs = secondsHeader(headers, 'x-ratelimit-reset');
    const remaining = numberHeader(headers, 'x-ratelimit-remaining');
    if (remaining !== null && remaining <= 0) this.block(now + (resetMs ?? DEFAULT_WINDOW_MS));
    if (status !== 429) return null;
    const wait = retryAfterOf(headers) ?? resetMs ?? DEFAULT_WINDOW_MS;
    this.block(now + wait);
    this.blockedBy = reason;
    return wait;
  }

  private block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until + BOUNDARY_SLACK_MS);
  }
}

function numberHeader(headers: Headers, name: string): number | null {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function secondsHeader(headers: Headers, name: string): number | null {
  const n = numberHeader(headers, name);
  return n === null ? null : Math.max(0, n * 1000);
}

