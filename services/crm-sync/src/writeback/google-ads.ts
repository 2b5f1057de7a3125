// Google Ads settings for every Google account, and the opt-in legacy upload path ("api": "google_ads_api";
// the default is the Data Manager API, google-data-manager.ts). Google Ads offline click conversions:
// POST {base}/{version}/customers/{customer_id}:uploadClickConversions
// with one ClickConversion per write-back, partialFailure on (the API requires it). Keyed on the
// stored click id (gclid, else gbraid / wbraid); orderId is the conversion id, so Google refuses a
// second copy of the same conversion. Errors: a failing conversion comes back as HTTP 200 with
// partialFailureError; request-level errors as {error: {code, status, details: [GoogleAdsFailure]}}.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type Credentials } from '../connectors/connector';
import { parseJsonOrNull } from '../connectors/json-body';
import { apiVersion } from '../api-versions';
import { parseDuration, parseRetryAfter } from './backoff';
import { settingsObject, sharedSettings, SettingsError, textSetting, type ConversionSignal, type SharedUploadSettings, type UploadResult } from './conversion';

export const GOOGLE_ADS_URL = 'https://googleads.googleapis.com';
/** The default version, from the table of API versions (src/api-versions.ts); `api_version` in settings overrides it. */
export const GOOGLE_ADS_API_VERSION = apiVersion('google_ads');
/** Google asks to retry a conversion whose click is under 6 hours old after those hours. */
const TOO_RECENT_RETRY_MS = 6 * 3600_000;

/**
 * Which Google API carries the account's conversions: the Data Manager API (default,
 * google-data-manager.ts) or, only when the settings say "api": "google_ads_api", this file's
 * uploadClickConversions (Google refuses it to accounts that had not uploaded before 2026-06-15).
 */
export type GoogleConversionsApi = 'data_manager' | 'google_ads_api';

export interface GoogleAdsSettings extends SharedUploadSettings {
  api: GoogleConversionsApi;
  customer_id: string;
  conversion_action_id: string;
  login_customer_id: string | null;
  api_version: string;
}

export interface ClickConversion {
  conversionAction: string;
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  conversionDateTime: string;
  conversionValue?: number;
  currencyCode?: string;
  orderId: string;
}

export interface GoogleUploadBody {
  conversions: ClickConversion[];
  partialFailure: true;
}

/** A Google Ads customer or action id ("123-456-7890" or digits), without dashes; null when absent. */
const numericId = (raw: Record<string, unknown>, key: string): string | null =>
  textSetting(raw, key, /^\d{3}-?\d{3}-?\d{4}$|^\d+$/, 'a numeric id (dashes allowed)', true)?.replace(/-/g, '') ?? null;

const requiredId = (raw: Record<string, unknown>, key: string): string => {
  const id = numericId(raw, key);
  if (id === null) throw new SettingsError(`setting "${key}" is required (a numeric id)`);
  return id;
};

export function parseGoogleAdsSettings(input: unknown): GoogleAdsSettings {
  const raw = settingsObject(input, 'google_ads');
  const api = raw['api'] ?? 'data_manager';
  if (api !== 'data_manager' && api !== 'google_ads_api') throw new SettingsError('setting "api" must be "data_manager" (default) or "google_ads_api"');
  // The Data Manager API's own settings (google-data-manager.ts reads them), checked here too so an account is refused when it is saved.
  if (raw['validate_only'] !== undefined && typeof raw['validate_only'] !== 'boolean') throw new SettingsError('setting "validate_only" must be true or false');
  textSetting(raw, 'default_country', /^[A-Za-z]{2}$/, 'a two-letter country code such as DE', true);
  return {
    ...sharedSettings(raw),
    api,
    customer_id: requiredId(raw, 'customer_id'),
    conversion_action_id: requiredId(raw, 'conversion_action_id'),
    login_customer_id: numericId(raw, 'login_customer_id'),
    api_version: textSetting(raw, 'api_version', /^v\d+$/, `an API version such as ${GOOGLE_ADS_API_VERSION}`, true) ?? GOOGLE_ADS_API_VERSION,
  };
}

/** The Google click id of a conversion: gclid first, else the iOS gbraid / wbraid. */
export function googleClickId(clickIds: Record<string, string>): Pick<ClickConversion, 'gclid' | 'gbraid' | 'wbraid'> | null {
  for (const key of ['gclid', 'gbraid', 'wbraid'] as const) {
    const value = clickIds[key]?.trim();
    if (value) return { [key]: value };
  }
  return null;
}

/** "yyyy-mm-dd hh:mm:ss+00:00": the format the API demands, always with an explicit zone (UTC here). */
export function googleDateTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')}+00:00`;
}

export function googleUploadBody(request: OutcomeWritebackRequestedV1, signal: ConversionSignal, settings: GoogleAdsSettings): GoogleUploadBody | null {
  const click = googleClickId(request.click_ids);
  if (click === null) return null;
  const conversion: ClickConversion = {
    conversionAction: `customers/${settings.customer_id}/conversionActions/${settings.conversion_action_id}`,
    ...click,
    conversionDateTime: googleDateTime(signal.at),
    orderId: request.conversion_id,
  };
  if (signal.value !== null) {
    conversion.conversionValue = signal.value;
    if (signal.currency !== null) conversion.currencyCode = signal.currency;
  }
  return { conversions: [conversion], partialFailure: true };
}

interface GoogleAdsError {
  errorCode?: Record<string, string>;
  message?: string;
  details?: { quotaErrorDetails?: { retryDelay?: string } };
}

interface GoogleAdsFailure {
  errors?: GoogleAdsError[];
  requestId?: string;
}

interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: GoogleAdsFailure[];
}

const RETRYABLE_STATUSES = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'ABORTED']);
const ALREADY_THERE = new Set(['CLICK_CONVERSION_ALREADY_EXISTS', 'ORDER_ID_ALREADY_IN_USE']);
/** The click, or the conversion action, is under 6 hours old: Google asks to come back later. */
const TOO_RECENT = new Set(['TOO_RECENT_EVENT', 'TOO_RECENT_CONVERSION_ACTION']);

const errorsOf = (status: GoogleStatus | undefined): GoogleAdsError[] => (status?.details ?? []).flatMap((d) => d.errors ?? []);
const codeOf = (error: GoogleAdsError | undefined): string => Object.values(error?.errorCode ?? {})[0] ?? 'UNKNOWN';

export async function uploadClickConversions(
  baseUrl: string,
  credentials: Credentials,
  settings: GoogleAdsSettings,
  body: GoogleUploadBody,
  signal: AbortSignal,
  now: Date,
): Promise<UploadResult> {
  const accessToken = credentials['access_token'];
  const developerToken = credentials['developer_token'];
  if (!accessToken || !developerToken) throw new ProviderError('Google Ads credentials need access_token and developer_token', null, false);
  const headers: Record<string, string> = {
    authorization: `Bearer ${accessToken}`,
    'developer-token': developerToken,
    'content-type': 'application/json',
  };
  if (settings.login_customer_id) headers['login-customer-id'] = settings.login_customer_id;
  const url = `${baseUrl.replace(/\/$/, '')}/${settings.api_version}/customers/${settings.customer_id}:uploadClickConversions`;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const text = await response.text();
  const json = parseJsonOrNull(text);

  if (!response.ok) {
    const error = (json as { error?: GoogleStatus } | null)?.error;
    const first = errorsOf(error)[0];
    const asked = parseRetryAfter(response.headers.get('retry-after'), now) ?? parseDuration(first?.details?.quotaErrorDetails?.retryDelay);
    const retryable = response.status === 429 || response.status >= 500 || RETRYABLE_STATUSES.has(error?.status ?? '');
    const message = `Google Ads ${response.status} ${error?.status ?? ''} ${codeOf(first)}: ${first?.message ?? error?.message ?? text.slice(0, 200)}`;
    throw new ProviderError(message.replace(/\s+/g, ' '), response.status, retryable, asked);
  }

  const result = (json ?? {}) as { results?: Record<string, unknown>[]; partialFailureError?: GoogleStatus; jobId?: string | number };
  const failure = errorsOf(result.partialFailureError)[0];
  if (result.partialFailureError && failure) {
    const code = codeOf(failure);
    if (ALREADY_THERE.has(code)) return { detail: `already recorded by Google Ads (${code})`, externalId: body.conversions[0]?.orderId ?? null };
    const message = `Google Ads refused the conversion: ${code}: ${failure.message ?? result.partialFailureError.message ?? ''}`;
    if (TOO_RECENT.has(code)) throw new ProviderError(message, 200, true, TOO_RECENT_RETRY_MS);
    throw new ProviderError(message, 200, false);
  }
  const accepted = (result.results ?? []).filter((r) => Object.keys(r).length > 0).length;
  if (accepted < body.conversions.length) throw new ProviderError('Google Ads returned no result for the conversion', 200, false);
  const job = result.jobId === undefined ? '' : `, job ${result.jobId}`;
  return { detail: `uploaded to Google Ads customer ${settings.customer_id}, conversion action ${settings.conversion_action_id}${job}`, externalId: body.conversions[0]?.orderId ?? null };
}
