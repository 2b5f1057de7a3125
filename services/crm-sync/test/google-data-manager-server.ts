// A local stand-in for Google's Data Manager API, answering as its reference documents, so the
// client (writeback/google-data-manager.ts) is checked against the documented shapes:
//   POST /v1/events:ingest  IngestEventsRequest {destinations, events, consent?, validateOnly?,
//     encoding?, encryptionInfo?} → {requestId}. Fast-fail: any invalid field fails the whole
//     request with 400 INVALID_ARGUMENT and google.rpc.BadRequest fieldViolations; unknown JSON
//     fields are refused ("Invalid JSON payload received. Unknown name ..."). At most 2000 events.
//     Hashed identifiers must be 64 hex characters when encoding is HEX (and encoding is required
//     with userData). validateOnly checks and records nothing.
//   GET /v1/requestStatus:retrieve?requestId=…  → {requestStatusPerDestination: [{destination,
//     requestStatus, errorInfo?: {errorCounts: [{recordCount, reason}]}, eventsIngestionStatus:
//     {recordCount}}]}: per-event failures are reported here, asynchronously, with Google's
//     processing error reasons and counts (no event is named): a destination is SUCCESS when it took
//     every event, FAILED when it took none, else PARTIAL_SUCCESS. An unknown request id → 404
//     NOT_FOUND. holdStatus(n) makes the next n reads answer PROCESSING (still being processed).
//   Auth: "Authorization: Bearer <token>"; a missing or unknown token → 401 UNAUTHENTICATED, an
//     operating account the token cannot reach → 403 PERMISSION_DENIED, both with google.rpc.ErrorInfo.
//   Quota: 429 RESOURCE_EXHAUSTED with google.rpc.RetryInfo {retryDelay}.
// Errors are google.rpc.Status: {error: {code, message, status, details: [{"@type": ...}]}}.
// Google deduplicates conversions on transactionId per conversion action: the stand-in keeps one
// accepted copy per (account, conversion action, transactionId) and counts the duplicates.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  status: number;
}

export interface AcceptedEvent {
  accountId: string;
  conversionAction: string;
  event: Record<string, unknown>;
}

export interface DataManagerServerOptions {
  /** Tokens the server accepts (default: "google-token"). */
  accessTokens?: string[];
  /** Operating accounts the tokens can write to; any when omitted. */
  accounts?: string[];
  /** Conversion actions (productDestinationId) that exist; any when omitted. */
  conversionActions?: string[];
  /** gclids Google cannot match: the request succeeds, its status says PARTIAL_SUCCESS with this reason. */
  unmatchedClickIds?: string[];
  /** Per-event failures by transactionId → Google's processing error reason (e.g. PROCESSING_ERROR_REASON_EVENT_TOO_OLD). */
  eventFailures?: Record<string, string>;
}

export interface DataManagerServer {
  url: string;
  requests: RecordedRequest[];
  /** Unique accepted events (one per account, conversion action and transactionId). */
  accepted: AcceptedEvent[];
  duplicates: number;
  failNext(...responses: ScriptedResponse[]): void;
  /** The next `reads` status reads answer PROCESSING for every destination. */
  holdStatus(reads: number): void;
  /** Adds a per-event failure for later requests (transactionId → processing error reason). */
  failEvent(transactionId: string, reason: string): void;
  close(): Promise<void>;
}

const TYPE = 'type.googleapis.com/google.rpc.';
const SERVICE = 'datamanager.googleapis.com';
const CODES: Record<string, number> = { INVALID_ARGUMENT: 400, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403, NOT_FOUND: 404, RESOURCE_EXHAUSTED: 429, INTERNAL: 500, UNAVAILABLE: 503 };

/** A google.rpc.Status error body as the API sends it. */
export function dataManagerError(status: keyof typeof CODES, message: string, details: Record<string, unknown>[] = []): ScriptedResponse {
  const code = CODES[status]!;
  return { status: code, body: { error: { code, message, status, details } } };
}
export const errorInfo = (reason: string, domain = SERVICE): Record<string, unknown> => ({ '@type': `${TYPE}ErrorInfo`, reason, domain, metadata: { service: SERVICE } });
export const retryInfo = (seconds: number): Record<string, unknown> => ({ '@type': `${TYPE}RetryInfo`, retryDelay: `${seconds}s` });
const badRequest = (violations: { field: string; description: string }[]): Record<string, unknown> => ({ '@type': `${TYPE}BadRequest`, fieldViolations: violations });

const REQUEST_FIELDS = new Set(['destinations', 'events', 'consent', 'validateOnly', 'encoding', 'encryptionInfo']);
const DESTINATION_FIELDS = new Set(['reference', 'loginAccount', 'linkedAccount', 'operatingAccount', 'productDestinationId']);
const ACCOUNT_FIELDS = new Set(['accountType', 'accountId', 'product']);
const EVENT_FIELDS = new Set([
  'destinationReferences', 'transactionId', 'eventTimestamp', 'lastUpdatedTimestamp', 'userData', 'consent', 'adIdentifiers', 'currency',
  'conversionValue', 'eventSource', 'eventDeviceInfo', 'cartData', 'customVariables', 'experimentalFields', 'userProperties', 'eventName', 'clientId', 'userId', 'additionalEventParameters',
]);
const AD_ID_FIELDS = new Set(['sessionAttributes', 'gclid', 'gbraid', 'wbraid', 'landingPageDeviceInfo']);
const CONSENT_VALUES = new Set(['CONSENT_STATUS_UNSPECIFIED', 'CONSENT_GRANTED', 'CONSENT_DENIED']);
const EVENT_SOURCES = new Set(['EVENT_SOURCE_UNSPECIFIED', 'WEB', 'APP', 'IN_STORE', 'PHONE', 'OTHER']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const HEX64 = /^[0-9a-f]{64}$/i;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(JSON.stringify(body));
}

interface StoredStatus {
  destinations: Obj[];
  perDestination: { recordCount: number; errors: Map<string, number> }[];
}

export async function startDataManagerServer(options: DataManagerServerOptions = {}): Promise<DataManagerServer> {
  const tokens = new Set(options.accessTokens ?? ['google-token']);
  const accounts = options.accounts ? new Set(options.accounts) : null;
  const actions = options.conversionActions ? new Set(options.conversionActions) : null;
  const unmatched = new Set(options.unmatchedClickIds ?? []);
  const eventFailures = new Map(Object.entries(options.eventFailures ?? {}));
  const scripted: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const accepted: AcceptedEvent[] = [];
  const seen = new Set<string>();
  const statuses = new Map<string, StoredStatus>();
  const state = { duplicates: 0, held: 0 };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = await readBody(req);
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    const record = (status: number): void => {
      requests.push({ method: req.method ?? '', path: url.pathname + url.search, headers: { authorization: req.headers.authorization, 'content-type': req.headers['content-type'], 'developer-token': req.headers['developer-token'] as string | undefined }, body, status });
    };
    const answer = (r: ScriptedResponse): void => {
      record(r.status);
      send(res, r.status, r.body, r.headers);
    };

    const next = scripted.shift();
    if (next) return answer(next);

    const auth = req.headers.authorization;
    if (!auth) return answer(dataManagerError('UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.', [errorInfo('CREDENTIALS_MISSING', 'googleapis.com')]));
    const token = /^Bearer (.+)$/.exec(auth)?.[1];
    if (!token || !tokens.has(token)) {
      return answer(dataManagerError('UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', [errorInfo('ACCESS_TOKEN_TYPE_UNSUPPORTED', 'googleapis.com')]));
    }

    if (req.method === 'GET' && url.pathname === '/v1/requestStatus:retrieve') {
      const id = url.searchParams.get('requestId') ?? '';
      const stored = statuses.get(id);
      if (!stored) return answer(dataManagerError('NOT_FOUND', `Request ${id} not found.`, [errorInfo('REQUEST_ID_NOT_FOUND')]));
      if (state.held > 0) {
        state.held -= 1;
        return answer({ status: 200, body: { requestStatusPerDestination: stored.destinations.map((destination) => ({ destination, requestStatus: 'PROCESSING' })) } });
      }
      return answer({
        status: 200,
        body: {
          requestStatusPerDestination: stored.destinations.map((destination, i) => {
            const s = stored.perDestination[i]!;
            const failed = [...s.errors.values()].reduce((a, b) => a + b, 0);
            const entry: Obj = {
              destination,
              requestStatus: failed === 0 ? 'SUCCESS' : failed >= s.recordCount ? 'FAILED' : 'PARTIAL_SUCCESS',
              eventsIngestionStatus: { recordCount: String(s.recordCount) },
            };
            if (failed > 0) entry['errorInfo'] = { errorCounts: [...s.errors].map(([reason, count]) => ({ recordCount: String(count), reason })) };
            return entry;
          }),
        },
      });
    }

    if (req.method !== 'POST' || url.pathname !== '/v1/events:ingest') return answer(dataManagerError('NOT_FOUND', `Method not found: ${req.method} ${url.pathname}`));
    if (!isObj(body)) return answer(dataManagerError('INVALID_ARGUMENT', 'Invalid JSON payload received.'));

    const unknownAt = (obj: Obj, allowed: Set<string>, where: string): string | null => {
      const extra = Object.keys(obj).find((k) => !allowed.has(k));
      return extra === undefined ? null : `Invalid JSON payload received. Unknown name "${extra}" at '${where}': Cannot find field.`;
    };
    const unknownField = unknownAt(body, REQUEST_FIELDS, 'request');
    if (unknownField) return answer(dataManagerError('INVALID_ARGUMENT', unknownField, [badRequest([{ field: 'request', description: unknownField }])]));

    const violations: { field: string; description: string }[] = [];
    const violate = (field: string, description: string): void => {
      violations.push({ field, description });
    };
    const destinations = Array.isArray(body['destinations']) ? (body['destinations'] as unknown[]) : [];
    const events = Array.isArray(body['events']) ? (body['events'] as unknown[]) : [];
    if (destinations.length === 0) violate('destinations', 'At least one destination is required.');
    if (events.length === 0) violate('events', 'At least one event is required.');
    if (events.length > 2000) violate('events', 'Too many events in the request: at most 2000.');
    const encoding = body['encoding'];
    if (encoding !== undefined && encoding !== 'HEX' && encoding !== 'BASE64') violate('encoding', `Invalid value "${String(encoding)}".`);

    const references = new Map<string, number>();
    const forbidden: string[] = [];
    destinations.forEach((d, i) => {
      const at = `destinations[${i}]`;
      if (!isObj(d)) return violate(at, 'Must be an object.');
      const extra = unknownAt(d, DESTINATION_FIELDS, at);
      if (extra) return violate(at, extra);
      const account = d['operatingAccount'];
      if (!isObj(account) || unknownAt(account, ACCOUNT_FIELDS, `${at}.operatingAccount`)) return violate(`${at}.operatingAccount`, 'Required: {accountType, accountId}.');
      if (account['accountType'] !== 'GOOGLE_ADS' && account['product'] !== 'GOOGLE_ADS') violate(`${at}.operatingAccount.accountType`, 'Must be GOOGLE_ADS for Google Ads conversions.');
      if (typeof account['accountId'] !== 'string' || !/^\d+$/.test(account['accountId'])) violate(`${at}.operatingAccount.accountId`, 'Must be the account id, digits only without dashes.');
      else if (accounts && !accounts.has(account['accountId'])) forbidden.push(account['accountId']);
      const login = d['loginAccount'];
      if (login !== undefined && (!isObj(login) || typeof login['accountId'] !== 'string' || !/^\d+$/.test(login['accountId']))) violate(`${at}.loginAccount.accountId`, 'Must be the account id, digits only.');
      const action = d['productDestinationId'];
      if (typeof action !== 'string' || action === '') violate(`${at}.productDestinationId`, 'Required.');
      else if (actions && !actions.has(action)) violate(`${at}.productDestinationId`, `Conversion action ${action} does not exist in the operating account.`);
      if (typeof d['reference'] === 'string') {
        if (references.has(d['reference'])) violate(`${at}.reference`, 'References must be unique within the request.');
        references.set(d['reference'], i);
      }
    });

    events.forEach((e, i) => {
      const at = `events[${i}]`;
      if (!isObj(e)) return violate(at, 'Must be an object.');
      const extra = unknownAt(e, EVENT_FIELDS, at);
      if (extra) return violate(at, extra);
      if (typeof e['eventTimestamp'] !== 'string' || !RFC3339.test(e['eventTimestamp'])) violate(`${at}.eventTimestamp`, 'Required, an RFC 3339 timestamp.');
      if (e['transactionId'] !== undefined && (typeof e['transactionId'] !== 'string' || e['transactionId'] === '')) violate(`${at}.transactionId`, 'Must be a non-empty string.');
      if (e['currency'] !== undefined && (typeof e['currency'] !== 'string' || !/^[A-Z]{3}$/.test(e['currency']))) violate(`${at}.currency`, 'Must be an ISO 4217 code.');
      if (e['conversionValue'] !== undefined && typeof e['conversionValue'] !== 'number') violate(`${at}.conversionValue`, 'Must be a number.');
      if (e['eventSource'] !== undefined && !EVENT_SOURCES.has(String(e['eventSource']))) violate(`${at}.eventSource`, `Invalid value "${String(e['eventSource'])}".`);
      for (const ref of Array.isArray(e['destinationReferences']) ? (e['destinationReferences'] as unknown[]) : []) {
        if (typeof ref !== 'string' || !references.has(ref)) violate(`${at}.destinationReferences`, `Unknown destination reference "${String(ref)}".`);
      }
      const ads = e['adIdentifiers'];
      if (ads !== undefined) {
        if (!isObj(ads) || unknownAt(ads, AD_ID_FIELDS, `${at}.adIdentifiers`)) violate(`${at}.adIdentifiers`, 'Unknown or invalid ad identifier.');
      }
      const user = e['userData'];
      let identifiers = 0;
      if (user !== undefined) {
        const list = isObj(user) && Array.isArray(user['userIdentifiers']) ? (user['userIdentifiers'] as unknown[]) : null;
        if (list === null) violate(`${at}.userData.userIdentifiers`, 'Required when userData is set.');
        else {
          if (encoding === undefined) violate('encoding', 'Required for UserData uploads.');
          if (list.length > 10) violate(`${at}.userData.userIdentifiers`, 'At most 10 user identifiers.');
          list.forEach((id, j) => {
            const where = `${at}.userData.userIdentifiers[${j}]`;
            if (!isObj(id) || Object.keys(id).length !== 1) return violate(where, 'Exactly one of emailAddress, phoneNumber, address.');
            const [kind, value] = Object.entries(id)[0]!;
            if (kind !== 'emailAddress' && kind !== 'phoneNumber' && kind !== 'address') return violate(where, `Unknown name "${kind}".`);
            if (kind !== 'address' && (typeof value !== 'string' || (encoding === 'HEX' && !HEX64.test(value)))) violate(`${where}.${kind}`, 'Must be a SHA-256 hash, hex-encoded (encoding HEX).');
            identifiers += 1;
          });
        }
      }
      if (!isObj(ads) && identifiers === 0) violate(at, 'A conversion needs ad identifiers (gclid, gbraid, wbraid) or user data.');
      const consent = e['consent'];
      if (consent !== undefined) {
        if (!isObj(consent) || Object.entries(consent).some(([k, v]) => (k !== 'adUserData' && k !== 'adPersonalization') || !CONSENT_VALUES.has(String(v)))) violate(`${at}.consent`, 'adUserData / adPersonalization: CONSENT_GRANTED or CONSENT_DENIED.');
      }
    });

    if (violations.length > 0) return answer(dataManagerError('INVALID_ARGUMENT', 'Request contains an invalid argument.', [errorInfo('INVALID_ARGUMENT'), badRequest(violations)]));
    if (forbidden.length > 0) {
      return answer(dataManagerError('PERMISSION_DENIED', `The caller does not have permission to access operating account ${forbidden[0]}.`, [errorInfo('PERMISSION_DENIED')]));
    }

    const requestId = randomUUID();
    if (body['validateOnly'] === true) return answer({ status: 200, body: { requestId } });
    const stored: StoredStatus = { destinations: destinations as Obj[], perDestination: destinations.map(() => ({ recordCount: 0, errors: new Map() })) };
    for (const e of events as Obj[]) {
      const refs = Array.isArray(e['destinationReferences']) && e['destinationReferences'].length > 0 ? (e['destinationReferences'] as string[]).map((r) => references.get(r)!) : destinations.map((_, i) => i);
      for (const index of refs) {
        const d = destinations[index] as Obj;
        const accountId = String((d['operatingAccount'] as Obj)['accountId']);
        const conversionAction = String(d['productDestinationId']);
        const tally = stored.perDestination[index]!;
        tally.recordCount += 1;
        const gclid = isObj(e['adIdentifiers']) ? e['adIdentifiers']['gclid'] : undefined;
        if (typeof gclid === 'string' && unmatched.has(gclid)) {
          tally.errors.set('PROCESSING_ERROR_REASON_INVALID_GCLID', (tally.errors.get('PROCESSING_ERROR_REASON_INVALID_GCLID') ?? 0) + 1);
          continue;
        }
        const failure = eventFailures.get(String(e['transactionId']));
        if (failure !== undefined) {
          tally.errors.set(failure, (tally.errors.get(failure) ?? 0) + 1);
          continue;
        }
        const key = `${accountId}|${conversionAction}|${String(e['transactionId'] ?? randomUUID())}`;
        if (seen.has(key)) {
          state.duplicates += 1;
          continue;
        }
        seen.add(key);
        accepted.push({ accountId, conversionAction, event: e });
      }
    }
    statuses.set(requestId, stored);
    return answer({ status: 200, body: { requestId } });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted,
    get duplicates() {
      return state.duplicates;
    },
    failNext: (...responses) => {
      scripted.push(...responses);
    },
    holdStatus: (reads) => {
      state.held = reads;
    },
    failEvent: (transactionId, reason) => {
      eventFailures.set(transactionId, reason);
    },
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
