// What a spend-pull connector is: one ad platform's reporting API behind one call that returns the
// account's daily delivery figures for a window of days, as the rows of ads.report_imported. A
// connector knows nothing of the schedule, the lease or the outbox; it throws ProviderError with
// the platform's own reason (and, when the platform said so, how long to wait).
import type { AdReportRowV1 } from '@sightline/proto-schemas';
import { ProviderError, type Credentials } from '../../connectors/connector';
import { parseJsonOrNull } from '../../connectors/json-body';
import { sleep } from '../../connectors/sleep';
import { retryAfterOf } from '../../writeback/backoff';

export { retryAfterOf };

export type SpendPlatform = 'google_ads' | 'meta_ads' | 'linkedin_ads';
export const SPEND_PLATFORMS: readonly SpendPlatform[] = ['google_ads', 'meta_ads', 'linkedin_ads'];

/** Inclusive window of calendar days (YYYY-MM-DD), read by the platform in the account's timezone. */
export interface DayWindow {
  from: string;
  to: string;
}

export interface SpendPullRequest {
  credentials: Credentials;
  /** The destination's settings (plain jsonb), already checked by the connector's parseSettings. */
  settings: Record<string, unknown>;
  /** Base URL of the platform's API (a setting, so tests point it at a local server). */
  baseUrl: string;
  /** Other base URLs by key (adPlatformUrls), e.g. google_oauth for Google's token endpoint. */
  urls?: Readonly<Record<string, string>>;
  window: DayWindow;
  signal: AbortSignal;
  /** Waits the connector may do itself before a retry (short rate-limit pauses); longer ones end the pull. */
  maxWaitMs: number;
}

/** One account's figures: what ads.report_imported carries besides website and workspace. */
export interface SpendReport {
  account_id: string;
  account_name: string | null;
  /** ISO 4217, the account's own currency as the platform states it. */
  currency: string;
  rows: AdReportRowV1[];
  /** Requests the pull made (for the status and tests). */
  requests: number;
}

export interface SpendConnector {
  readonly platform: SpendPlatform;
  /** A description of what is missing or wrong in the destination's settings for a pull, or null. */
  checkSettings(settings: Record<string, unknown>): string | null;
  pull(request: SpendPullRequest): Promise<SpendReport>;
}

// --- helpers shared by the connectors ----------------------------------------------------------

/** Only the keys whose value is set (the message schema refuses unknown keys, not absent ones). */
export function reportRow(row: AdReportRowV1): AdReportRowV1 {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) if (value !== undefined) out[key] = value;
  return out as unknown as AdReportRowV1;
}

/** A platform number that may come as a string ("12.34", "1500"); 0 when absent or unreadable. */
export function num(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Money rounded to 1/1,000,000 of the unit (what Google's micros carry), never negative. */
export const money = (n: number): number => Math.round(Math.max(0, n) * 1e6) / 1e6;

export const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);

/** The account id setting as a digits-only string, or null. */
export function digitsSetting(settings: Record<string, unknown>, key: string, strip?: RegExp): string | null {
  const raw = settings[key];
  const value = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  const cleaned = strip ? value.replace(strip, '') : value;
  return /^\d+$/.test(cleaned) ? cleaned : null;
}

/** Days between two YYYY-MM-DD (inclusive count). */
export function dayCount(window: DayWindow): number {
  return Math.round((Date.parse(`${window.to}T00:00:00Z`) - Date.parse(`${window.from}T00:00:00Z`)) / 86_400_000) + 1;
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/**
 * One GET/POST with the connector's own error reading; a retryable ProviderError whose wait fits
 * in `maxWaitMs` is waited out and the call repeated (up to `attempts` times), any other is thrown.
 */
export async function callWithRetry(
  call: () => Promise<HttpAnswer>,
  check: (answer: HttpAnswer) => ProviderError | null,
  options: { signal: AbortSignal; maxWaitMs: number; attempts?: number },
): Promise<HttpAnswer> {
  const attempts = options.attempts ?? 4;
  for (let attempt = 1; ; attempt++) {
    let failure: ProviderError;
    try {
      const answer = await call();
      const problem = check(answer);
      if (problem === null) return answer;
      failure = problem;
    } catch (error) {
      if (error instanceof ProviderError) failure = error;
      else if (options.signal.aborted) throw error;
      else failure = new ProviderError(`network error: ${error instanceof Error ? error.message : String(error)}`, null, true);
    }
    const waitMs = failure.retryAfterMs ?? Math.min(30_000, 1000 * 2 ** (attempt - 1));
    if (!failure.retryable || attempt >= attempts || waitMs > options.maxWaitMs) throw failure;
    await sleep(waitMs, options.signal);
  }
}

export async function httpCall(url: string, init: RequestInit): Promise<HttpAnswer> {
  const response = await fetch(url, init);
  const body = await response.text();
  return { status: response.status, headers: response.headers, body: parseJsonOrNull(body), text: body };
}

