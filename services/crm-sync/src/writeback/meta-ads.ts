// Meta Conversions API: POST {base}/{version}/{pixel_id}/events with data[] of server events, one
// per outcome of a write-back (a tracked conversion, a stage milestone), keyed on the stored fbclid
// (sent as fbc "fb.1.<ms>.<fbclid>", never hashed, like fbp) plus the contact's email and phone,
// normalised and SHA-256 hashed as Meta documents (em, ph; ads/identifiers.ts). event_id is the
// conversion id (+ ":<outcome key>" for a stage), the same on every retry and restart, so Meta
// drops a second copy. The version comes from src/api-versions.ts unless the account pins one.
// Errors are Graph API errors {error: {message, type, code, error_subcode, is_transient, fbtrace_id}};
// throttling comes back as codes 4 / 17 / 32 / 613 / 80004, often with HTTP 400.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type Credentials } from '../connectors/connector';
import { parseJsonOrNull } from '../connectors/json-body';
import { businessUsage, META_THROTTLE_WAIT_MS, metaFailure } from '../ads/meta-usage';
import { apiVersion } from '../api-versions';
import { hashedUserIds, normaliseEmail, sha256Hex } from '../ads/identifiers';
import { parseRetryAfter } from './backoff';
import { settingsObject, sharedSettings, textSetting, outcomeEventId, type ConversionSignal, type SharedUploadSettings, type UploadResult } from './conversion';

export const META_GRAPH_URL = 'https://graph.facebook.com';
/** The default version, from the table of API versions (src/api-versions.ts); `api_version` in settings overrides it. */
export const META_GRAPH_VERSION = apiVersion('meta_graph');


export interface MetaAdsSettings extends SharedUploadSettings {
  pixel_id: string;
  /** Event sent with a value (Meta requires value and currency with Purchase). */
  event_name: string;
  /** Event sent when the conversion has no value (a status-only conversion). */
  unvalued_event_name: string;
  api_version: string;
  test_event_code: string | null;
  /** Where the conversion happened as Meta classes it: system_generated (a CRM, default) or other. */
  action_source: MetaActionSource;
}

export type MetaActionSource = 'system_generated' | 'other';

export interface MetaServerEvent {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: MetaActionSource;
  user_data: { fbc: string; fbp?: string; em?: string[]; ph?: string[] };
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
    api_version: textSetting(raw, 'api_version', /^v\d+\.\d+$/, `a Graph API version such as ${META_GRAPH_VERSION}`, true) ?? META_GRAPH_VERSION,
    test_event_code: textSetting(raw, 'test_event_code', /^\S{1,100}$/, 'the Test Events code', true),
    action_source: (textSetting(raw, 'action_source', /^(system_generated|other)$/, '"system_generated" (a CRM event, default) or "other"', true) ?? 'system_generated') as MetaActionSource,
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
  return sha256Hex(normaliseEmail(email, 'meta_ads') ?? email.trim().toLowerCase());
}

/** One outcome to send: value and time, its key ("conversion", "stage:deal_won") and, optionally, its own event name. */
export interface MetaOutcome extends ConversionSignal {
  key?: string;
  conversion_action?: string | null;
}

/**
 * One server event per outcome, or null without a Meta click id (fbclid / fbc). Without its own
 * event name an outcome with a value goes as `event_name` (Purchase), one without as
 * `unvalued_event_name` (Lead): Meta refuses a Purchase without value and currency.
 */
export function metaEventsBody(request: OutcomeWritebackRequestedV1, outcomes: MetaOutcome | MetaOutcome[], settings: MetaAdsSettings): MetaEventsBody | null {
  const list = Array.isArray(outcomes) ? outcomes : [outcomes];
  const fbc = metaClickId(request.click_ids, request.conversion_occurred_at);
  if (fbc === null || list.length === 0) return null;
  const userData: MetaServerEvent['user_data'] = { fbc };
  // fbp (the _fbp browser id) goes as stored, unhashed; one not in Meta's format is left out rather than refusing the event.
  const fbp = request.click_ids['fbp']?.trim();
  if (fbp && /^fb\.\d\.\d{13}\.\d+$/.test(fbp)) userData.fbp = fbp;
  // em / ph: SHA-256 of the normalised values (email trimmed and lower-cased; phone digits with country code).
  const hashed = hashedUserIds('meta_ads', { email: request.email, phone: request.phone ?? null });
  if (hashed.email) userData.em = [hashed.email];
  if (hashed.phone) userData.ph = [hashed.phone];
  const data = list.map((outcome): MetaServerEvent => {
    // Meta needs a currency with every value; a value without one counts as no value.
    const custom = outcome.value !== null && outcome.currency !== null ? { value: outcome.value, currency: outcome.currency } : null;
    const event: MetaServerEvent = {
      event_name: outcome.conversion_action?.trim() || (custom ? settings.event_name : settings.unvalued_event_name),
      event_time: Math.floor(outcome.at.getTime() / 1000),
      event_id: outcomeEventId(request.conversion_id, outcome.key ?? 'conversion'),
      // The outcome was recorded in a system (the CRM / Sightline), not on the website itself.
      action_source: settings.action_source,
      user_data: userData,
    };
    if (custom) event.custom_data = custom;
    return event;
  });
  const body: MetaEventsBody = { data };
  if (settings.test_event_code) body.test_event_code = settings.test_event_code;
  return body;
}

/** Meta takes events up to 7 days old (except physical_store, not used here). */
export const META_MAX_AGE_MS = 7 * 24 * 3600_000;

/** Why Meta would refuse this upload for its age, or null when it is fresh enough. */
export function metaTooOld(body: MetaEventsBody, now: Date): string | null {
  const oldest = Math.min(...body.data.map((e) => e.event_time)) * 1000;
  if (now.getTime() - oldest <= META_MAX_AGE_MS) return null;
  return `the conversion happened ${new Date(oldest).toISOString()}, more than 7 days ago: Meta accepts events up to 7 days old`;
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
  const json = parseJsonOrNull(text);
  if (!response.ok) {
    const error: GraphError = (json as { error?: GraphError } | null)?.error ?? {};
    const { throttled, retryable } = metaFailure(response.status, error);
    const asked = parseRetryAfter(response.headers.get('retry-after'), now) ?? (businessUsage(response.headers).regainMs || (throttled ? META_THROTTLE_WAIT_MS : null));
    const trace = error.fbtrace_id ? ` (fbtrace_id ${error.fbtrace_id})` : '';
    const message = `Meta ${response.status} code ${error.code ?? '?'}${error.error_subcode ? `/${error.error_subcode}` : ''}: ${error.error_user_msg ?? error.message ?? text.slice(0, 200)}${trace}`;
    throw new ProviderError(message, response.status, retryable, asked);
  }
  const result = (json ?? {}) as { events_received?: number; fbtrace_id?: string; messages?: unknown[] };
  if ((result.events_received ?? 0) < body.data.length) {
    throw new ProviderError(`Meta received ${result.events_received ?? 0} of ${body.data.length} events`, response.status, false);
  }
  const trace = result.fbtrace_id ? ` (fbtrace ${result.fbtrace_id})` : '';
  const names = [...new Set(body.data.map((e) => e.event_name))].join(', ');
  return { detail: `sent to Meta pixel ${settings.pixel_id} as ${names || 'event'}${trace}`, externalId: body.data.map((e) => e.event_id).join(',') || null };
}
