// Keeps requests to one HubSpot account within the limits its responses state. HubSpot answers
// most CRM calls with X-HubSpot-RateLimit-Max / -Remaining / -Interval-Milliseconds (a rolling
// window); once Remaining reaches 0 the next request waits a whole interval, so no window ever
// holds more than Max requests. A 429's Retry-After blocks the gate too. The search endpoints send
// no such headers and have their own per-second limit, so searches are spaced evenly instead.
import { sleep } from '../sleep';

export interface RateGateOptions {
  /** Least time between two search requests (HubSpot limits search per second separately). */
  searchSpacingMs: number;
}

/** Slack added to waits so a timer that fires at the boundary is never early by a millisecond. */
const BOUNDARY_SLACK_MS = 5;

export class RateGate {
  private blockedUntil = 0;
  private nextSearchAt = 0;

  constructor(private readonly options: RateGateOptions) {}

  /** Waits until a request may go out (for a search, also its own spacing). */
  async admit(kind: 'search' | 'standard', signal: AbortSignal): Promise<void> {
    for (;;) {
      const now = Date.now();
      const until = kind === 'search' ? Math.max(this.blockedUntil, this.nextSearchAt) : this.blockedUntil;
      if (until <= now) break;
      await sleep(until - now, signal);
    }
    if (kind === 'search') this.nextSearchAt = Date.now() + this.options.searchSpacingMs;
  }

  /** Reads a response's limit headers (and a 429's Retry-After). */
  observe(headers: Headers, status: number, retryAfterMs: number | null): void {
    const now = Date.now();
    const remaining = intHeader(headers, 'x-hubspot-ratelimit-remaining');
    const intervalMs = intHeader(headers, 'x-hubspot-ratelimit-interval-milliseconds');
    if (remaining !== null && remaining <= 0 && intervalMs !== null) this.block(now + intervalMs + BOUNDARY_SLACK_MS);
    const secondlyRemaining = intHeader(headers, 'x-hubspot-ratelimit-secondly-remaining');
    if (secondlyRemaining !== null && secondlyRemaining <= 0) this.block(now + 1000 + BOUNDARY_SLACK_MS);
    if (status === 429) this.block(now + (retryAfterMs ?? intervalMs ?? 1000) + BOUNDARY_SLACK_MS);
  }

  private block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }
}

function intHeader(headers: Headers, name: string): number | null {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

