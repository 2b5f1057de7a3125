// Meta Conversions API: POST {base}/{version}/{pixel_id}/events with data[] of server events. One
// event per write-back, keyed on the stored fbclid (sent as fbc "fb.1.<ms>.<fbclid>") and the
// hashed email; event_id is the conversion id, so Meta drops a second copy of the same event.
// Errors are Graph API errors {error: {message, type, code, error_subcode, is_transient, fbtrace_id}};
// throttling comes back as codes 4 / 17 / 32 / 613 / 80004, often with HTTP 400.
import { createHash } from 'node:crypto';
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type Credentials } from '../connectors/connector';
import { parseRetryAfter } from './backoff';
import { settingsObject, sharedSettings, textSetting, type ConversionSignal, type SharedUploadSettings, type UploadResult } from './conversion';

export const META_GRAPH_URL = 'https://graph.facebook.com';
export const META_GRAPH_VERSION = 'v21.0';

/** Graph error codes that mean "later": unknown/service trouble and the rate limits. */
const RETRYABLE_CODES = new Set([1, 2, 4, 17, 32, 341, 613, 80004]);

export interface MetaAdsSettings extends SharedUploadSettings {
  pixel_id: string;
  /** Event sent with a value (Meta requires value and currency with Purchase). */
  event_name: string;
  /** Event sent when the conversion has no value (a status-only conversion). */
  unvalued_event_name: string;
  api_version: string;
  test_event_code: string | null;
}

export interface MetaServerEvent {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: 'system_generated';
  user_data: { fbc: string; em?: string[] };
  custom_data?: { value: number; currency: string };
}

export interface MetaEventsBody {
  data: MetaServerEvent[];
  test_event_code?: string;
}

export function parseMetaAdsSettings(input: unknown): MetaAdsSettings {
  const raw = settingsObject(input, 'meta_ads');
  return {
    ...sharedSettings(raw),
    pixel_id: textSetting(raw, 'pixel_id', /^\d+$/, 'the numeric pixel (dataset) id'),
    event_name: textSetting(raw, 'event_name', /^\S.{0,99}$/, 'an event name such as Purchase', true) ?? 'Purchase',
    unvalued_event_name: textSetting(raw, 'unvalued_event_name', /^\S.{0,99}$/, 'an event name such as Lead', true) ?? 'Lead',
    api_version: textSetting(raw, 'api_version', /^v\d+\.\d+$/, 'a Graph API version such as v21.0', true) ?? META_GRAPH_VERSION,
    test_event_code: textSetting(raw, 'test_event_code', /^\S{1,100}$/, 'the Test Events code', true),
  };
}

/**
 * The fbc value for a click id: "fb.1.<creation ms>.<fbclid>". A stored fbc is used as is; a bare
 * fbclid gets the conversion's time as its creation time (the earliest moment we knew the click).
 */
export function metaClickId(clickIds: Record<string, string>, conversionOccurredAt: string): string | null {
  const fbc = clickIds['fbc']?.trim();
  if (fbc && /^fb\.\d\.\d+\..+$/.test(fbc)) return fbc;
  const fbclid = clickIds['fbclid']?.trim();
  if (!fbclid) return null;
  return `fb.1.${Date.parse(conversionOccurredAt)}.${fbclid}`;
}

/** SHA-256 of the normalised email (trimmed, lower case), as Meta requires for `em`. */
export function hashEmail(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

export function metaEventsBody(request: OutcomeWritebackRequestedV1, signal: ConversionSignal, settings: MetaAdsSettings): MetaEventsBody | null {
  const fbc = metaClickId(request.click_ids, request.conversion_occurred_at);
  if (fbc === null) return null;
  // Meta needs a currency with every value; a value without one counts as no value.
  const { value, currency } = signal;
  const custom = value !== null && currency !== null ? { value, currency } : null;
  const event: MetaServerEvent = {
    event_name: custom ? settings.event_name : settings.unvalued_event_name,
    event_time: Math.floor(signal.at.getTime() / 1000),
    event_id: request.conversion_id,
    // The sale was recorded in a system (CRM / API), not on the website itself.
    action_source: 'system_generated',
    user_data: { fbc },
  };
  if (request.email) event.user_data.em = [hashEmail(request.email)];
  if (custom) event.custom_data = custom;
  const body: MetaEventsBody = { data: [event] };
  if (settings.test_event_code) body.test_event_code = settings.test_event_code;
  return body;
}

interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_msg?: string;
  fbtrace_id?: string;
}

export async function sendServerEvents(
  baseUrl: string,
  credentials: Credentials,
  settings: MetaAdsSettings,
  body: MetaEventsBody,
  signal: AbortSignal,
  now: Date,
): Promise<UploadResult> {
  const accessToken = credentials['access_token'];
  if (!accessToken) throw new ProviderError('Meta credentials need access_token', null, false);
  const url = `${baseUrl.replace(/\/$/, '')}/${settings.api_version}/${settings.pixel_id}/events`;
  // The token travels in the body, not the URL, so it never lands in an access log.
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, access_token: accessToken }),
    signal,
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!response.ok) {
    const error: GraphError = (json as { error?: GraphError } | null)?.error ?? {};
    const retryable = response.status >= 500 || response.status === 429 || error.is_transient === true || RETRYABLE_CODES.has(error.code ?? -1);
    const asked = parseRetryAfter(response.headers.get('retry-after'), now) ?? regainAccessMs(response.headers.get('x-business-use-case-usage'));
    const message = `Meta ${response.status} code ${error.code ?? '?'}${error.error_subcode ? `/${error.error_subcode}` : ''}: ${error.error_user_msg ?? error.message ?? text.slice(0, 200)}`;
    throw new ProviderError(message, response.status, retryable, asked);
  }
  const result = (json ?? {}) as { events_received?: number; fbtrace_id?: string; messages?: unknown[] };
  if ((result.events_received ?? 0) < body.data.length) {
    throw new ProviderError(`Meta received ${result.events_received ?? 0} of ${body.data.length} events`, response.status, false);
  }
  const trace = result.fbtrace_id ? ` (fbtrace ${result.fbtrace_id})` : '';
  return { detail: `sent to Meta pixel ${settings.pixel_id} as ${body.data[0]?.event_name ?? 'event'}${trace}`, externalId: body.data[0]?.event_id ?? null };
}

/** X-Business-Use-Case-Usage: {"<id>": [{"estimated_time_to_regain_access": <minutes>, ...}]} → ms. */
function regainAccessMs(header: string | null): number | null {
  if (!header) return null;
  try {
    const usage = JSON.parse(header) as Record<string, { estimated_time_to_regain_access?: number }[]>;
    const minutes = Object.values(usage).flat().map((u) => u.estimated_time_to_regain_access ?? 0);
    const longest = Math.max(0, ...minutes);
    return longest > 0 ? longest * 60_000 : null;
  } catch {
    return null;
  }
}
