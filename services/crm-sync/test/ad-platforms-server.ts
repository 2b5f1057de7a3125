// A local stand-in for the two ad-platform endpoints the write-back calls, answering as their
// documentation describes, so the client code and payloads are checked against the documented
// shapes rather than against themselves:
//   Google Ads REST: POST /{version}/customers/{customer_id}:uploadClickConversions
//     body {conversions: [ClickConversion], partialFailure: true}; unknown fields refused whole
//     ("Invalid JSON payload received. Unknown name ..."); a bad conversion comes back as HTTP 200
//     with partialFailureError {code: 3, details: [GoogleAdsFailure {errors: [{errorCode, message,
//     location}]}]} and an empty result in its place; request errors as {error: {code, message,
//     status, details: [GoogleAdsFailure]}}; quota as 429 RESOURCE_EXHAUSTED with quotaErrorDetails.retryDelay.
//   Meta Graph: POST /{version}/{pixel_id}/events, data[] of server events (JSON or form fields),
//     access_token in the body or query; answers {events_received, messages, fbtrace_id}; errors
//     {error: {message, type, code, error_subcode?, error_user_title?, error_user_msg?, fbtrace_id}}.
// Tests script failures (failNext) and read what was received (google.requests, meta.events, ...).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  /** The scripted or computed HTTP status it was answered with. */
  status: number;
}

export interface AdPlatformsServerOptions {
  googleAccessToken?: string;
  googleDeveloperToken?: string;
  metaAccessToken?: string;
  /** Conversion action ids Google knows; any when omitted. */
  googleConversionActions?: string[];
  /** Requests per window before each platform answers with its rate-limit error. */
  rateLimit?: { requests: number; windowMs: number };
  now?: () => Date;
}

export type Platform = 'google_ads' | 'meta_ads';

export interface AdPlatformsServer {
  url: string;
  google: { requests: RecordedRequest[]; accepted: Record<string, unknown>[] };
  meta: { requests: RecordedRequest[]; events: Record<string, unknown>[]; deduplicated: number };
  /** Answers the next requests to `platform` with these responses, in order, before any checks. */
  failNext(platform: Platform, ...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

// --- Google Ads ------------------------------------------------------------------------------

const GOOGLE_FAILURE = 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure';
const CLICK_CONVERSION_FIELDS = new Set([
  'gbraid', 'wbraid', 'externalAttributionData', 'gclid', 'conversionAction', 'conversionDateTime', 'conversionValue', 'currencyCode',
  'orderId', 'customVariables', 'cartData', 'userIdentifiers', 'conversionEnvironment', 'consent', 'customerType', 'userIpAddress', 'sessionAttributesEncoded', 'sessionAttributesKeyValuePairs',
]);
const UPLOAD_FIELDS = new Set(['conversions', 'partialFailure', 'validateOnly', 'debugEnabled', 'jobId']);
const GOOGLE_DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;

interface GoogleError {
  errorCode: Record<string, string>;
  message: string;
  location?: { fieldPathElements: { fieldName: string; index?: number }[] };
  details?: Record<string, unknown>;
}

/** A request-level Google Ads error (HTTP status, RPC status name, one GoogleAdsError). */
export function googleError(httpStatus: number, rpcStatus: string, errorCode: Record<string, string>, message: string, retryDelaySeconds?: number): ScriptedResponse {
  const error: GoogleError = { errorCode, message };
  if (retryDelaySeconds !== undefined) {
    error.details = { quotaErrorDetails: { rateScope: 'DEVELOPER', rateName: 'Number of operations for basic access', retryDelay: `${retryDelaySeconds}s` } };
  }
  return {
    status: httpStatus,
    body: { error: { code: httpStatus, message: rpcMessage(rpcStatus), status: rpcStatus, details: [{ '@type': GOOGLE_FAILURE, errors: [error], requestId: requestId() }] } },
  };
}

/** An HTTP 200 whose only conversion failed with `code` (partial failure mode). */
export function googlePartialFailure(errorCode: Record<string, string>, message: string): ScriptedResponse {
  return { status: 200, body: partialFailureBody([{ errorCode, message, location: { fieldPathElements: [{ fieldName: 'conversions', index: 0 }] } }], [{}]) };
}

function partialFailureBody(errors: GoogleError[], results: Record<string, unknown>[]): Record<string, unknown> {
  return {
    partialFailureError: { code: 3, message: errors.map((e) => e.message).join(', '), details: [{ '@type': GOOGLE_FAILURE, errors, requestId: requestId() }] },
    results,
    jobId: String(Date.now()),
  };
}

function rpcMessage(status: string): string {
  const messages: Record<string, string> = {
    INVALID_ARGUMENT: 'Request contains an invalid argument.',
    UNAUTHENTICATED: 'Request is missing required authentication credential.',
    PERMISSION_DENIED: 'The caller does not have permission',
    RESOURCE_EXHAUSTED: 'Resource has been exhausted (e.g. check quota).',
    INTERNAL: 'Internal error encountered.',
    UNAVAILABLE: 'The service is currently unavailable.',
  };
  return messages[status] ?? status;
}

const requestId = (): string => randomBytes(11).toString('base64url');

function googleUpload(options: AdPlatformsServerOptions, state: AdPlatformsServer['google'], path: string, headers: IncomingMessage['headers'], body: unknown): ScriptedResponse {
  const match = /^\/v\d+\/customers\/(\d+):uploadClickConversions$/.exec(path);
  if (!match) return { status: 404, body: { error: { code: 404, message: 'Method not found.', status: 'NOT_FOUND' } } };
  const token = options.googleAccessToken ?? 'google-token';
  if (headers['authorization'] !== `Bearer ${token}`) {
    return googleError(401, 'UNAUTHENTICATED', { authenticationError: 'OAUTH_TOKEN_INVALID' }, 'Oauth token is invalid.');
  }
  if (headers['developer-token'] !== (options.googleDeveloperToken ?? 'google-developer-token')) {
    return googleError(401, 'UNAUTHENTICATED', { authenticationError: 'DEVELOPER_TOKEN_INVALID' }, 'The developer token is not valid.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return googleError(400, 'INVALID_ARGUMENT', { requestError: 'BAD_REQUEST' }, 'Invalid JSON payload received.');
  const request = body as Record<string, unknown>;
  const unknown = Object.keys(request).find((k) => !UPLOAD_FIELDS.has(k));
  if (unknown) return invalidJson(unknown);
  const conversions = request['conversions'];
  if (!Array.isArray(conversions) || conversions.length === 0) {
    return googleError(400, 'INVALID_ARGUMENT', { requestError: 'REQUIRED_FIELD_MISSING' }, 'Required field was not specified.');
  }
  if (conversions.length > 2000) return googleError(400, 'INVALID_ARGUMENT', { conversionUploadError: 'TOO_MANY_CONVERSIONS_IN_REQUEST' }, 'Upload fewer than 2001 events in a single request.');
  if (request['partialFailure'] !== true) {
    return googleError(400, 'INVALID_ARGUMENT', { requestError: 'INVALID_INPUT' }, 'partial_failure must be true for conversion uploads.');
  }
  for (const [index, conversion] of conversions.entries()) {
    if (typeof conversion !== 'object' || conversion === null) return googleError(400, 'INVALID_ARGUMENT', { requestError: 'BAD_REQUEST' }, 'Invalid JSON payload received.');
    const field = Object.keys(conversion).find((k) => !CLICK_CONVERSION_FIELDS.has(k));
    if (field) return invalidJson(`conversions[${index}].${field}`);
  }
  const errors: GoogleError[] = [];
  const results: Record<string, unknown>[] = [];
  conversions.forEach((raw: Record<string, unknown>, index) => {
    const problem = conversionProblem(options, state, raw);
    if (problem) {
      errors.push({ errorCode: problem.code, message: problem.message, location: { fieldPathElements: [{ fieldName: 'conversions', index }, ...(problem.field ? [{ fieldName: problem.field }] : [])] } });
      results.push({});
      return;
    }
    state.accepted.push(raw);
    const result: Record<string, unknown> = { conversionAction: raw['conversionAction'], conversionDateTime: raw['conversionDateTime'] };
    for (const key of ['gclid', 'gbraid', 'wbraid']) if (raw[key] !== undefined) result[key] = raw[key];
    results.push(result);
  });
  if (errors.length > 0) return { status: 200, body: partialFailureBody(errors, results) };
  return { status: 200, body: { results, jobId: String(Date.now()) } };
}

function invalidJson(name: string): ScriptedResponse {
  return {
    status: 400,
    body: { error: { code: 400, message: `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: `Invalid JSON payload received. Unknown name "${name}": Cannot find field.` }] }] } },
  };
}

function conversionProblem(options: AdPlatformsServerOptions, state: AdPlatformsServer['google'], c: Record<string, unknown>): { code: Record<string, string>; message: string; field?: string } | null {
  const action = typeof c['conversionAction'] === 'string' ? /^customers\/\d+\/conversionActions\/(\d+)$/.exec(c['conversionAction']) : null;
  if (!action) return { code: { requestError: 'RESOURCE_NAME_MALFORMED' }, message: 'Resource name provided is malformed.', field: 'conversion_action' };
  if (options.googleConversionActions && !options.googleConversionActions.includes(action[1]!)) {
    return { code: { conversionUploadError: 'NO_CONVERSION_ACTION_FOUND' }, message: 'The conversion action specified in the upload request cannot be found.', field: 'conversion_action' };
  }
  const ids = ['gclid', 'gbraid', 'wbraid'].filter((k) => typeof c[k] === 'string' && c[k] !== '');
  if (ids.length !== 1) return { code: { requestError: 'REQUIRED_FIELD_MISSING' }, message: 'Exactly one of gclid, gbraid or wbraid is required.', field: ids[0] ?? 'gclid' };
  if (typeof c['gclid'] === 'string' && c['gclid'].startsWith('bad')) return { code: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The imported gclid could not be decoded.', field: 'gclid' };
  if (typeof c['conversionDateTime'] !== 'string' || !GOOGLE_DATE_TIME.test(c['conversionDateTime'])) {
    return { code: { dateError: 'INVALID_FIELD_VALUES_IN_DATE_TIME' }, message: 'The field values in the date time are invalid.', field: 'conversion_date_time' };
  }
  if (c['conversionValue'] !== undefined && (typeof c['conversionValue'] !== 'number' || c['conversionValue'] < 0)) {
    return { code: { fieldError: 'INVALID_VALUE' }, message: 'The field contains an invalid value.', field: 'conversion_value' };
  }
  if (c['currencyCode'] !== undefined && (typeof c['currencyCode'] !== 'string' || !/^[A-Z]{3}$/.test(c['currencyCode']))) {
    return { code: { currencyCodeError: 'UNSUPPORTED' }, message: 'The currency code is not supported.', field: 'currency_code' };
  }
  if (c['orderId'] !== undefined) {
    const duplicate = state.accepted.some((a) => a['orderId'] === c['orderId'] && a['conversionAction'] === c['conversionAction']);
    if (duplicate) return { code: { conversionUploadError: 'ORDER_ID_ALREADY_IN_USE' }, message: 'The order ID is already in use by another conversion.', field: 'order_id' };
  }
  return null;
}

// --- Meta ------------------------------------------------------------------------------------

const ACTION_SOURCES = new Set(['email', 'website', 'app', 'phone_call', 'chat', 'physical_store', 'system_generated', 'business_messaging', 'other']);
const EVENT_FIELDS = new Set([
  'event_name', 'event_time', 'event_source_url', 'opt_out', 'event_id', 'action_source', 'user_data', 'custom_data', 'data_processing_options',
  'data_processing_options_country', 'data_processing_options_state', 'referrer_url', 'customer_segmentation', 'app_data', 'original_event_data', 'messaging_channel',
]);
const USER_KEYS = ['em', 'ph', 'fn', 'ln', 'ge', 'db', 'ct', 'st', 'zp', 'country', 'external_id', 'client_ip_address', 'client_user_agent', 'fbc', 'fbp', 'subscription_id', 'fb_login_id', 'lead_id'];
const HASHED = /^[0-9a-f]{64}$/;
const SEVEN_DAYS_S = 7 * 24 * 3600;

/** A Graph API error body. */
export function metaError(httpStatus: number, code: number, message: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): ScriptedResponse {
  // The Graph API labels nearly every error OAuthException, parameter errors included.
  return { status: httpStatus, body: { error: { message, type: 'OAuthException', code, ...extra, fbtrace_id: requestId() } }, ...(headers ? { headers } : {}) };
}

const invalidParameter = (userTitle: string, userMsg: string, subcode?: number): ScriptedResponse =>
  metaError(400, 100, 'Invalid parameter', { ...(subcode ? { error_subcode: subcode } : {}), error_user_title: userTitle, error_user_msg: userMsg, is_transient: false });

function metaEvents(options: AdPlatformsServerOptions, state: AdPlatformsServer['meta'], path: string, query: URLSearchParams, body: unknown): ScriptedResponse {
  if (!/^\/v\d+\.\d+\/\d+\/events$/.test(path)) return metaError(400, 100, 'Unsupported post request.', { error_subcode: 33 });
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const token = typeof fields['access_token'] === 'string' ? fields['access_token'] : query.get('access_token');
  if (!token) return metaError(400, 104, 'An access token is required to request this resource.');
  if (token !== (options.metaAccessToken ?? 'meta-token')) return metaError(400, 190, 'Invalid OAuth access token - Cannot parse access token');
  let data = fields['data'];
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      return invalidParameter('Invalid data', 'The data parameter is not valid JSON.');
    }
  }
  if (!Array.isArray(data) || data.length === 0 || data.length > 1000) return invalidParameter('Invalid data', 'data must be an array of 1 to 1000 events.');
  const now = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  for (const [index, raw] of data.entries()) {
    const problem = eventProblem(raw, now);
    if (problem) return invalidParameter('Invalid event', `data[${index}]: ${problem}`);
  }
  for (const event of data as Record<string, unknown>[]) {
    // Meta keeps the first of two events with the same event_name and event_id.
    const seen = state.events.some((e) => e['event_id'] !== undefined && e['event_id'] === event['event_id'] && e['event_name'] === event['event_name']);
    if (seen) state.deduplicated += 1;
    else state.events.push(event);
  }
  return { status: 200, body: { events_received: data.length, messages: [], fbtrace_id: requestId() } };
}

function eventProblem(raw: unknown, now: number): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'an event must be an object';
  const event = raw as Record<string, unknown>;
  const unknown = Object.keys(event).find((k) => !EVENT_FIELDS.has(k));
  if (unknown) return `unexpected key "${unknown}"`;
  if (typeof event['event_name'] !== 'string' || event['event_name'] === '') return 'event_name is required';
  const time = event['event_time'];
  if (typeof time !== 'number' || !Number.isInteger(time)) return 'event_time must be a Unix timestamp in seconds';
  if (time > now + 60) return 'event_time is in the future';
  if (event['action_source'] !== 'physical_store' && time < now - SEVEN_DAYS_S) return 'event_time is more than 7 days in the past';
  if (typeof event['action_source'] !== 'string' || !ACTION_SOURCES.has(event['action_source'])) return 'action_source is required and must be a known source';
  if (event['event_id'] !== undefined && typeof event['event_id'] !== 'string') return 'event_id must be a string';
  const user = event['user_data'];
  if (typeof user !== 'object' || user === null || Array.isArray(user)) return 'user_data is required';
  const u = user as Record<string, unknown>;
  if (!USER_KEYS.some((k) => u[k] !== undefined)) return 'user_data needs at least one customer information parameter';
  for (const key of ['em', 'ph', 'fn', 'ln', 'ct', 'st', 'zp', 'country', 'ge', 'db']) {
    if (u[key] === undefined) continue;
    const values = Array.isArray(u[key]) ? u[key] : [u[key]];
    if (!values.every((v) => typeof v === 'string' && HASHED.test(v))) return `user_data.${key} must be SHA-256 hashes (64 lower-case hex characters)`;
  }
  // fbp (the browser id) is sent as set, never hashed.
  if (u['fbp'] !== undefined && (typeof u['fbp'] !== 'string' || !/^fb\.\d\.\d{13}\.\d+$/.test(u['fbp']))) return 'user_data.fbp must look like fb.1.<creation time ms>.<random number> (not hashed)';
  if (u['fbc'] !== undefined && (typeof u['fbc'] !== 'string' || !/^fb\.\d\.\d{13}\..+$/.test(u['fbc']))) return 'user_data.fbc must look like fb.1.<creation time ms>.<fbclid>';
  const custom = event['custom_data'];
  if (custom !== undefined) {
    if (typeof custom !== 'object' || custom === null) return 'custom_data must be an object';
    const c = custom as Record<string, unknown>;
    if (c['value'] !== undefined && typeof c['value'] !== 'number') return 'custom_data.value must be a number';
    if (c['currency'] !== undefined && (typeof c['currency'] !== 'string' || !/^[A-Za-z]{3}$/.test(c['currency']))) return 'custom_data.currency must be an ISO 4217 code';
  }
  if (event['event_name'] === 'Purchase') {
    const c = (custom ?? {}) as Record<string, unknown>;
    if (typeof c['value'] !== 'number' || typeof c['currency'] !== 'string') return 'a Purchase event needs custom_data.value and custom_data.currency';
  }
  return null;
}

// --- the server ------------------------------------------------------------------------------

export async function startAdPlatformsServer(options: AdPlatformsServerOptions = {}): Promise<AdPlatformsServer> {
  const google: AdPlatformsServer['google'] = { requests: [], accepted: [] };
  const meta: AdPlatformsServer['meta'] = { requests: [], events: [], deduplicated: 0 };
  const scripted: Record<Platform, ScriptedResponse[]> = { google_ads: [], meta_ads: [] };
  const windows: Record<Platform, number[]> = { google_ads: [], meta_ads: [] };

  const rateLimited = (platform: Platform): ScriptedResponse | null => {
    if (!options.rateLimit) return null;
    const now = (options.now?.() ?? new Date()).getTime();
    const recent = windows[platform].filter((t) => t > now - options.rateLimit!.windowMs);
    windows[platform] = recent;
    if (recent.length >= options.rateLimit.requests) {
      const waitS = Math.max(1, Math.ceil((recent[0]! + options.rateLimit.windowMs - now) / 1000));
      return platform === 'google_ads'
        ? googleError(429, 'RESOURCE_EXHAUSTED', { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, 'Too many requests in a short amount of time.', waitS)
        : metaError(400, 4, 'Application request limit reached', { is_transient: true }, { 'x-business-use-case-usage': JSON.stringify({ '1': [{ type: 'ads_management', call_count: 100, estimated_time_to_regain_access: Math.ceil(waitS / 60) }] }) });
    }
    recent.push(now);
    return null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = await readBody(req);
    const platform: Platform = url.pathname.includes(':uploadClickConversions') ? 'google_ads' : 'meta_ads';
    let body: unknown = null;
    if ((req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) body = Object.fromEntries(new URLSearchParams(text));
    else {
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = text;
      }
    }
    let reply: ScriptedResponse;
    if (req.method !== 'POST') reply = { status: 405, body: { error: 'POST only' } };
    else {
      reply = scripted[platform].shift()
        ?? rateLimited(platform)
        ?? (platform === 'google_ads' ? googleUpload(options, google, url.pathname, req.headers, body) : metaEvents(options, meta, url.pathname, url.searchParams, body));
    }
    const recorded: RecordedRequest = { path: url.pathname, headers: { ...req.headers } as Record<string, string | undefined>, body, status: reply.status };
    (platform === 'google_ads' ? google : meta).requests.push(recorded);
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    google,
    meta,
    failNext(platform, ...responses) {
      scripted[platform].push(...responses);
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
