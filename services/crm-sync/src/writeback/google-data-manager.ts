// Google offline conversions and enhanced conversions for leads through the Data Manager API:
// POST {base}/v1/events:ingest (version from src/api-versions.ts) with an IngestEventsRequest (the default for a google_ads account;
// the Google Ads API's uploadClickConversions in google-ads.ts is kept only for an account whose
// settings say "api": "google_ads_api").
//
//   - destinations: one per conversion action used, operatingAccount {accountType GOOGLE_ADS,
//     accountId customer id}, loginAccount when a manager account is set, productDestinationId the
//     conversion action id, `reference` so each event names its destination;
//   - events: transactionId "<conversion id>:<send key>" (Google deduplicates on it, so a retry
//     after a crash between the call and our record is harmless), eventTimestamp (RFC 3339),
//     eventSource OTHER, conversionValue + currency when there is a value, adIdentifiers with the
//     gclid (else gbraid / wbraid) when the contact came from a click, userData.userIdentifiers
//     with the email / phone normalised and SHA-256 hashed (ads/identifiers.ts) otherwise and as
//     well, consent {adUserData, adPersonalization} CONSENT_GRANTED when the contact granted it (a
//     denied contact never reaches this file: plan.ts skips it);
//   - encoding HEX, validateOnly from the account's "validate_only" setting.
// Auth: an OAuth bearer token (credentials.access_token) with the datamanager scope; no developer
// token. The answer is {requestId}; processing is asynchronous and retrieveRequestStatus() reads
// GET {base}/v1/requestStatus:retrieve?requestId=… (requestStatusPerDestination); the periodic
// follow-up of sent rows (confirmed, partly rejected, failed) is google-request-status.ts.
// Errors follow google.rpc.Status: {error: {code, message, status, details: [ErrorInfo {reason,
// domain, metadata}, BadRequest {fieldViolations}, RetryInfo {retryDelay}, RequestInfo {requestId},
// ...]}}. The API fails fast: one bad event fails the whole request.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { apiVersion } from '../api-versions';
import { hashedUserIds } from '../ads/identifiers';
import { ProviderError, type Credentials } from '../connectors/connector';
import { parseJsonOrNull } from '../connectors/json-body';
import { parseDuration, parseRetryAfter } from './backoff';
import { SettingsError, textSetting, type PlannedSend, type UploadResult } from './conversion';
import { googleClickId } from './google-ads';

export const DATA_MANAGER_URL = 'https://datamanager.googleapis.com';
/** adPlatformUrls key (deps.ts options) that points the client at another base URL (tests, proxies). */
export const DATA_MANAGER_URL_KEY = 'google_data_manager';
/** Google's limit on events in one request. */
export const DATA_MANAGER_MAX_EVENTS = 2000;

export interface DataManagerSettings {
  customer_id: string;
  conversion_action_id: string;
  login_customer_id: string | null;
  validate_only: boolean;
  /** ISO 3166 alpha-2 region for phone numbers written without a country code; else such a number is not sent. */
  default_country: string | null;
}

export interface ProductAccount {
  accountType: 'GOOGLE_ADS';
  accountId: string;
}

export interface DataManagerDestination {
  reference: string;
  operatingAccount: ProductAccount;
  loginAccount?: ProductAccount;
  productDestinationId: string;
}

export type UserIdentifier = { emailAddress: string } | { phoneNumber: string };
type ConsentStatus = 'CONSENT_GRANTED' | 'CONSENT_DENIED';

export interface DataManagerEvent {
  destinationReferences: string[];
  transactionId: string;
  eventTimestamp: string;
  eventSource: 'OTHER';
  conversionValue?: number;
  currency?: string;
  adIdentifiers?: { gclid?: string; gbraid?: string; wbraid?: string };
  userData?: { userIdentifiers: UserIdentifier[] };
  consent?: { adUserData: ConsentStatus; adPersonalization: ConsentStatus };
}

export interface IngestEventsBody {
  destinations: DataManagerDestination[];
  events: DataManagerEvent[];
  encoding: 'HEX';
  validateOnly: boolean;
}

const numericId = (raw: Record<string, unknown>, key: string): string | null =>
  textSetting(raw, key, /^\d{3}-?\d{3}-?\d{4}$|^\d+$/, 'a numeric id (dashes allowed)', true)?.replace(/-/g, '') ?? null;

/** The Data Manager view of a google_ads account's settings (shared settings are parsed in google-ads.ts). */
export function parseDataManagerSettings(raw: Record<string, unknown>): DataManagerSettings {
  const customer = numericId(raw, 'customer_id');
  if (customer === null) throw new SettingsError('setting "customer_id" is required (a numeric id)');
  const action = numericId(raw, 'conversion_action_id');
  if (action === null) throw new SettingsError('setting "conversion_action_id" is required (a numeric id)');
  const validate = raw['validate_only'];
  if (validate !== undefined && typeof validate !== 'boolean') throw new SettingsError('setting "validate_only" must be true or false');
  const country = textSetting(raw, 'default_country', /^[A-Za-z]{2}$/, 'a two-letter country code such as DE', true);
  return {
    customer_id: customer,
    conversion_action_id: action,
    login_customer_id: numericId(raw, 'login_customer_id'),
    validate_only: validate === true,
    default_country: country === null ? null : country.toUpperCase(),
  };
}

/** Google's transaction id for one outcome of one conversion (stable across retries and restarts). */
export function transactionId(conversionId: string, key: string): string {
  return `${conversionId}:${key}`;
}

/**
 * The ingest request for a request's planned sends, or null when the contact can be matched by
 * neither a Google click id nor an email / phone.
 */
export function dataManagerBody(request: OutcomeWritebackRequestedV1, sends: PlannedSend[], settings: DataManagerSettings): IngestEventsBody | null {
  if (sends.length === 0) return null;
  const click = googleClickId(request.click_ids);
  const ids = hashedUserIds('google_ads', { email: request.email, phone: request.phone ?? null }, settings.default_country);
  const identifiers: UserIdentifier[] = [];
  if (ids.email !== null) identifiers.push({ emailAddress: ids.email });
  if (ids.phone !== null) identifiers.push({ phoneNumber: ids.phone });
  if (click === null && identifiers.length === 0) return null;

  const destinations = new Map<string, DataManagerDestination>();
  const events = sends.map((send): DataManagerEvent => {
    const action = send.conversion_action ?? settings.conversion_action_id;
    if (!/^\d+$/.test(action)) throw new SettingsError(`conversion_action "${action}" of the ${send.key} rule must be a numeric Google conversion action id`);
    const reference = `action-${action}`;
    if (!destinations.has(reference)) {
      destinations.set(reference, {
        reference,
        operatingAccount: { accountType: 'GOOGLE_ADS', accountId: settings.customer_id },
        ...(settings.login_customer_id ? { loginAccount: { accountType: 'GOOGLE_ADS' as const, accountId: settings.login_customer_id } } : {}),
        productDestinationId: action,
      });
    }
    const event: DataManagerEvent = {
      destinationReferences: [reference],
      transactionId: transactionId(request.conversion_id, send.key),
      eventTimestamp: send.at.toISOString(),
      eventSource: 'OTHER',
    };
    if (send.value !== null) {
      event.conversionValue = send.value;
      if (send.currency !== null) event.currency = send.currency;
    }
    if (click !== null) event.adIdentifiers = { ...click };
    if (identifiers.length > 0) event.userData = { userIdentifiers: identifiers.map((i) => ({ ...i })) };
    if (request.ad_consent === 'granted') event.consent = { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' };
    return event;
  });
  return { destinations: [...destinations.values()], events, encoding: 'HEX', validateOnly: settings.validate_only };
}

// --- errors ----------------------------------------------------------------------------------

interface StatusDetail {
  '@type'?: string;
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  fieldViolations?: { field?: string; description?: string; reason?: string }[];
  retryDelay?: string;
  requestId?: string;
}

interface RpcStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: StatusDetail[];
}

const RETRYABLE = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'ABORTED']);
const detailOf = (status: RpcStatus | undefined, type: string): StatusDetail | undefined =>
  status?.details?.find((d) => typeof d['@type'] === 'string' && d['@type'].endsWith(`/google.rpc.${type}`));

/** A Data Manager error answer as a ProviderError: retryable for 429 / 5xx (with Google's retry hint), permanent otherwise with Google's reason. */
export function dataManagerError(httpStatus: number, text: string, headers: Headers, now: Date): ProviderError {
  const status = (parseJsonOrNull(text) as { error?: RpcStatus } | null)?.error;
  const info = detailOf(status, 'ErrorInfo');
  const violations = detailOf(status, 'BadRequest')?.fieldViolations ?? [];
  const retryInfo = detailOf(status, 'RetryInfo');
  const requestInfo = detailOf(status, 'RequestInfo');
  const asked = parseRetryAfter(headers.get('retry-after'), now) ?? parseDuration(retryInfo?.retryDelay);
  const retryable = httpStatus === 429 || httpStatus >= 500 || RETRYABLE.has(status?.status ?? '');
  const reason = info?.reason ? ` ${info.reason}` : '';
  const fields = violations.length > 0 ? ` (${violations.map((v) => `${v.field ?? '?'}: ${v.description ?? v.reason ?? ''}`).join('; ')})` : '';
  const request = requestInfo?.requestId ? ` [request ${requestInfo.requestId}]` : '';
  const message = `Google Data Manager ${httpStatus} ${status?.status ?? ''}${reason}: ${status?.message ?? text.slice(0, 200)}${fields}${request}`;
  return new ProviderError(message.replace(/\s+/g, ' ').trim(), httpStatus, retryable, asked);
}

function headersFor(credentials: Credentials): Record<string, string> {
  const accessToken = credentials['access_token'];
  if (!accessToken) throw new ProviderError('Google Data Manager credentials need an access_token (OAuth, scope https://www.googleapis.com/auth/datamanager)', null, false);
  return { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
}

/** Sends the events; answers what to record (the requestId is the external id). */
export async function ingestEvents(baseUrl: string, credentials: Credentials, body: IngestEventsBody, signal: AbortSignal, now: Date): Promise<UploadResult> {
  const response = await fetch(`${baseUrl.replace(/\/$/, '')}/${apiVersion('google_data_manager')}/events:ingest`, { method: 'POST', headers: headersFor(credentials), body: JSON.stringify(body), signal });
  const text = await response.text();
  if (!response.ok) throw dataManagerError(response.status, text, response.headers, now);
  const requestId = (parseJsonOrNull(text) as { requestId?: string } | null)?.requestId ?? null;
  const accounts = [...new Set(body.destinations.map((d) => d.operatingAccount.accountId))].join(', ');
  const actions = body.destinations.map((d) => d.productDestinationId).join(', ');
  const what = body.validateOnly ? 'validated (validate_only: nothing recorded by Google)' : 'sent';
  const keys = body.events.map((e) => e.transactionId.slice(e.transactionId.indexOf(':') + 1)).join(', ');
  return {
    detail: `${what} to Google Ads ${accounts} through the Data Manager API (${keys}; conversion action ${actions})${requestId ? `, request ${requestId}` : ''}`,
    externalId: requestId,
  };
}

export type RequestStatus = 'REQUEST_STATUS_UNKNOWN' | 'SUCCESS' | 'PROCESSING' | 'FAILED' | 'PARTIAL_SUCCESS';

export interface RequestStatusSummary {
  status: RequestStatus;
  /** Google's error reasons with their record counts, e.g. "INVALID_CLICK_ID: 1". */
  errors: string[];
  recordCount: number | null;
}

interface RequestStatusPerDestination {
  requestStatus?: RequestStatus;
  errorInfo?: { errorCounts?: { recordCount?: string | number; reason?: string }[] };
  eventsIngestionStatus?: { recordCount?: string | number };
}

/**
 * The asynchronous outcome of an ingest request, summed over its destinations: not final while any
 * destination is PROCESSING (or unknown); SUCCESS or FAILED when every destination says so; else
 * PARTIAL_SUCCESS (Google took part of it: some destinations or some events).
 */
export async function retrieveRequestStatus(baseUrl: string, credentials: Credentials, requestId: string, signal: AbortSignal, now: Date): Promise<RequestStatusSummary> {
  const url = `${baseUrl.replace(/\/$/, '')}/${apiVersion('google_data_manager')}/requestStatus:retrieve?requestId=${encodeURIComponent(requestId)}`;
  const { authorization } = headersFor(credentials);
  const response = await fetch(url, { method: 'GET', headers: { authorization: authorization ?? '' }, signal });
  const text = await response.text();
  if (!response.ok) throw dataManagerError(response.status, text, response.headers, now);
  const perDestination = (parseJsonOrNull(text) as { requestStatusPerDestination?: RequestStatusPerDestination[] } | null)?.requestStatusPerDestination ?? [];
  const each = perDestination.map((entry) => entry.requestStatus ?? 'REQUEST_STATUS_UNKNOWN');
  let status: RequestStatus;
  if (each.length === 0) status = 'REQUEST_STATUS_UNKNOWN';
  else if (each.includes('PROCESSING')) status = 'PROCESSING';
  else if (each.includes('REQUEST_STATUS_UNKNOWN')) status = 'REQUEST_STATUS_UNKNOWN';
  else if (each.every((s) => s === 'SUCCESS')) status = 'SUCCESS';
  else if (each.every((s) => s === 'FAILED')) status = 'FAILED';
  else status = 'PARTIAL_SUCCESS';
  const errors: string[] = [];
  let records: number | null = null;
  for (const entry of perDestination) {
    for (const count of entry.errorInfo?.errorCounts ?? []) errors.push(`${count.reason ?? 'UNKNOWN'}: ${count.recordCount ?? '?'}`);
    if (entry.eventsIngestionStatus?.recordCount !== undefined) records = (records ?? 0) + Number(entry.eventsIngestionStatus.recordCount);
  }
  return { status, errors, recordCount: records };
}

/** A queued Google row carries either this (Data Manager) or an uploadClickConversions body (opt-in Google Ads API path). */
export function isIngestEventsBody(payload: unknown): payload is IngestEventsBody {
  return typeof payload === 'object' && payload !== null && Array.isArray((payload as { events?: unknown }).events) && Array.isArray((payload as { destinations?: unknown }).destinations);
}
