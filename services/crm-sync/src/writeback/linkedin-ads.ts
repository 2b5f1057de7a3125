// LinkedIn Conversions API: POST {base}/rest/conversionEvents, one event per write-back (the batch
// form, X-RestLi-Method: BATCH_CREATE with {elements: [...]}, carries up to 5,000). Every request
// names its Marketing API version (Linkedin-Version: YYYYMM, mandatory) and Rest.li 2.0.0, with
// the member's OAuth token as a bearer. An event names the conversion rule
// (urn:lla:llaPartnerConversion:<id>), when it happened (epoch ms, at most 90 days ago), its value
// (amount as a string) and the member: SHA-256 of the normalised email and/or the li_fat_id
// first-party click id. eventId (conversion id + stage) lets LinkedIn drop a second copy.
// Errors are {status, serviceErrorCode?, code?, message}; a batch answers 200 with one
// {status, error?} per element; 429 is the throttle (Retry-After when LinkedIn sends one).
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { apiVersion } from '../api-versions';
import { hashedUserIds } from '../ads/identifiers';
import { ProviderError, type Credentials } from '../connectors/connector';
import { parseJsonOrNull } from '../connectors/json-body';
import { parseRetryAfter } from './backoff';
import { settingsObject, sharedSettings, textSetting, SettingsError, outcomeEventId, type ConversionSignal, type SharedUploadSettings, type UploadResult } from './conversion';

export const LINKEDIN_API_URL = 'https://api.linkedin.com';
/** LinkedIn refuses events that happened more than 90 days before they are sent. */
export const LINKEDIN_MAX_AGE_MS = 90 * 24 * 3600_000;
/** Events per BATCH_CREATE request. */
export const LINKEDIN_BATCH_LIMIT = 5000;
export const CONVERSION_URN_PREFIX = 'urn:lla:llaPartnerConversion:';

export interface LinkedinAdsSettings extends SharedUploadSettings {
  /** The conversion rule's URN (urn:lla:llaPartnerConversion:<id>). */
  conversion: string;
  /** Linkedin-Version override (YYYYMM); null: the versions table's. */
  api_version: string | null;
}

export interface LinkedinUserId {
  idType: 'SHA256_EMAIL' | 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID' | 'ACXIOM_ID' | 'ORACLE_MOAT_ID';
  idValue: string;
}

export interface LinkedinConversionEvent {
  conversion: string;
  conversionHappenedAt: number;
  conversionValue?: { currencyCode: string; amount: string };
  eventId: string;
  user: { userIds: LinkedinUserId[] };
}

/** What a LinkedIn write-back row holds (no credentials): the elements of one upload. */
export interface LinkedinUploadBody {
  elements: LinkedinConversionEvent[];
}

export function parseLinkedinAdsSettings(input: unknown): LinkedinAdsSettings {
  const raw = settingsObject(input, 'linkedin_ads');
  const rule = raw['conversion_rule_id'] ?? raw['conversion'];
  if (rule === undefined || rule === null) throw new SettingsError('setting "conversion_rule_id" is required (the numeric id of a Conversions API conversion rule)');
  const text = String(rule);
  const id = text.startsWith(CONVERSION_URN_PREFIX) ? text.slice(CONVERSION_URN_PREFIX.length) : text;
  if (!/^\d{1,20}$/.test(id)) throw new SettingsError('setting "conversion_rule_id" must be the numeric conversion rule id (or its urn:lla:llaPartnerConversion URN)');
  return {
    ...sharedSettings(raw),
    conversion: `${CONVERSION_URN_PREFIX}${id}`,
    api_version: textSetting(raw, 'api_version', /^\d{6}(\.\d{2})?$/, 'a Linkedin-Version such as 202610', true),
  };
}

/** The Linkedin-Version to send: the operator's pinned version (ad_destinations.api_version), else the settings' api_version, else the versions table's. */
export const linkedinVersion = (settings: LinkedinAdsSettings, pinned?: string | null): string => apiVersion('linkedin_marketing', pinned?.trim() || settings.api_version);

/** One outcome to send: its value and time, its key ("conversion", "stage:deal_won") and, optionally, its own conversion rule. */
export interface LinkedinOutcome extends ConversionSignal {
  key?: string;
  conversion_action?: string | null;
}

/** The rule URN of an outcome: its own rule (a send rule's conversion_action) or the account's. */
function ruleUrn(outcome: LinkedinOutcome, settings: LinkedinAdsSettings): string {
  const own = outcome.conversion_action?.trim();
  if (!own) return settings.conversion;
  return own.startsWith(CONVERSION_URN_PREFIX) ? own : `${CONVERSION_URN_PREFIX}${own}`;
}

/**
 * One event per outcome (sent as one request, a batch when there are several), or null when
 * LinkedIn could not match the member (no li_fat_id and no usable email). Each outcome's key is
 * part of its eventId, so every outcome is counted once however often it is sent.
 */
export function linkedinUploadBody(request: OutcomeWritebackRequestedV1, outcomes: LinkedinOutcome[], settings: LinkedinAdsSettings): LinkedinUploadBody | null {
  if (outcomes.length === 0) return null;
  const userIds: LinkedinUserId[] = [];
  // LinkedIn matches SHA256_EMAIL on the trimmed, lower-cased address; it takes no phone.
  const { email } = hashedUserIds('linkedin_ads', { email: request.email });
  if (email) userIds.push({ idType: 'SHA256_EMAIL', idValue: email });
  const click = request.click_ids['li_fat_id']?.trim();
  if (click) userIds.push({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: click });
  if (userIds.length === 0) return null;
  const elements = outcomes.map((outcome): LinkedinConversionEvent => {
    const event: LinkedinConversionEvent = {
      conversion: ruleUrn(outcome, settings),
      conversionHappenedAt: outcome.at.getTime(),
      eventId: outcomeEventId(request.conversion_id, outcome.key ?? 'conversion'),
      user: { userIds },
    };
    // LinkedIn wants the amount as a string; a value without a currency is sent as none.
    if (outcome.value !== null && outcome.currency !== null) event.conversionValue = { currencyCode: outcome.currency, amount: String(outcome.value) };
    return event;
  });
  return { elements };
}

/** Why LinkedIn would refuse this upload for its age, or null when it is fresh enough. */
export function linkedinTooOld(body: LinkedinUploadBody, now: Date): string | null {
  const oldest = Math.min(...body.elements.map((e) => e.conversionHappenedAt));
  if (now.getTime() - oldest <= LINKEDIN_MAX_AGE_MS) return null;
  return `the conversion happened ${new Date(oldest).toISOString()}, more than 90 days ago: LinkedIn accepts events up to 90 days old`;
}

interface LinkedinError {
  status?: number;
  serviceErrorCode?: number;
  code?: string;
  message?: string;
}

function describeError(prefix: string, httpStatus: number, error: LinkedinError, fallback: string): string {
  const code = [error.code, error.serviceErrorCode === undefined ? null : `serviceErrorCode ${error.serviceErrorCode}`].filter(Boolean).join(', ');
  return `${prefix} ${error.status ?? httpStatus}${code ? ` (${code})` : ''}: ${error.message ?? fallback}`;
}

/** 429 and 5xx come back; the rest (bad token 401, no access 403, bad body 400/422, inactive version 426) do not. */
const retryableStatus = (status: number): boolean => status === 429 || status >= 500;

export async function sendConversionEvents(
  baseUrl: string,
  credentials: Credentials,
  settings: LinkedinAdsSettings,
  version: string,
  body: LinkedinUploadBody,
  signal: AbortSignal,
  now: Date,
): Promise<UploadResult> {
  const accessToken = credentials['access_token'];
  if (!accessToken) throw new ProviderError('LinkedIn credentials need access_token', null, false);
  if (body.elements.length === 0 || body.elements.length > LINKEDIN_BATCH_LIMIT) {
    throw new ProviderError(`LinkedIn takes 1 to ${LINKEDIN_BATCH_LIMIT} events per request, not ${body.elements.length}`, null, false);
  }
  const batch = body.elements.length > 1;
  const headers: Record<string, string> = {
    authorization: `Bearer ${accessToken}`,
    'content-type': 'application/json',
    'linkedin-version': version,
    'x-restli-protocol-version': '2.0.0',
  };
  if (batch) headers['x-restli-method'] = 'BATCH_CREATE';
  const response = await fetch(`${baseUrl.replace(/\/$/, '')}/rest/conversionEvents`, {
    method: 'POST',
    headers,
    body: JSON.stringify(batch ? body : body.elements[0]),
    signal,
  });
  const text = await response.text();
  const json = parseJsonOrNull(text);
  if (!response.ok) {
    const error = (json ?? {}) as LinkedinError;
    const asked = parseRetryAfter(response.headers.get('retry-after'), now);
    throw new ProviderError(describeError('LinkedIn', response.status, error, text.slice(0, 200)), response.status, retryableStatus(response.status), asked);
  }
  const rule = settings.conversion.slice(CONVERSION_URN_PREFIX.length);
  if (batch) {
    const results = ((json as { elements?: { status?: number; error?: LinkedinError }[] } | null)?.elements ?? []);
    const failed = results.map((r, i) => ({ ...r, index: i })).filter((r) => r.status !== 201);
    if (results.length !== body.elements.length || failed.length > 0) {
      const first = failed[0];
      const reason = first ? describeError(`LinkedIn element ${first.index}:`, first.status ?? 0, first.error ?? {}, 'refused') : `LinkedIn answered ${results.length} results for ${body.elements.length} events`;
      const retryable = failed.length > 0 && failed.every((f) => retryableStatus(f.status ?? 0));
      throw new ProviderError(`${failed.length} of ${body.elements.length} events refused; ${reason}`, response.status, retryable);
    }
  }
  const eventId = body.elements[0]?.eventId ?? null;
  return { detail: `sent to LinkedIn conversion rule ${rule} (Linkedin-Version ${version})${batch ? `: ${body.elements.length} events` : ''}`, externalId: eventId };
}
