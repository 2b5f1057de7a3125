// A local stand-in for LinkedIn's Conversions API, answering as LinkedIn documents it, so the client
// is checked against the documented contract rather than against itself:
//   POST /rest/conversionEvents            one event → 201 Created, empty body
//   POST /rest/conversionEvents + X-RestLi-Method: BATCH_CREATE, {elements: [...]} (≤ 5,000)
//                                          → 200 {elements: [{status: 201} | {status, error}]} (partial failures)
//   every request: Authorization: Bearer <token> (401 without or with a bad/revoked one),
//   Linkedin-Version: YYYYMM (400 VERSION_MISSING without, 426 NONEXISTENT_VERSION for an inactive one),
//   X-Restli-Protocol-Version: 2.0.0. Errors: {status, serviceErrorCode?, code?, message}. 429 when throttled.
// An event needs a known conversion rule URN, conversionHappenedAt in epoch ms within the last 90
// days, user.userIds (SHA256_EMAIL must be a SHA-256 hex digest), conversionValue.amount as a
// string. A second event with the same rule and eventId is dropped (deduplicated), as LinkedIn does.
// Tests script failures (failNext) and read what arrived (requests, events, deduplicated).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LinkedinReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface LinkedinRecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  status: number;
}

export interface LinkedinServerOptions {
  accessToken?: string;
  /** Tokens the member revoked: 401 REVOKED_ACCESS_TOKEN. */
  revokedTokens?: string[];
  /** Active Linkedin-Version values; any YYYYMM when omitted. */
  activeVersions?: string[];
  /** Conversion rule ids the ad account has; any when omitted. */
  conversionRules?: string[];
  /** Requests per window before 429. */
  rateLimit?: { requests: number; windowMs: number };
  now?: () => Date;
  /** Holds every accepted request's answer this long (a lost answer, for timeouts). */
  answerDelayMs?: number;
}

export interface LinkedinConversionsServer {
  url: string;
  requests: LinkedinRecordedRequest[];
  /** Accepted events, first copy of each (rule, eventId). */
  events: Record<string, unknown>[];
  deduplicated: number;
  failNext(...replies: LinkedinReply[]): void;
  setAnswerDelay(ms: number): void;
  close(): Promise<void>;
}

export const linkedinError = (status: number, message: string, extra: { serviceErrorCode?: number; code?: string } = {}, headers?: Record<string, string>): LinkedinReply => ({
  status,
  body: { status, ...extra, message },
  ...(headers ? { headers } : {}),
});

const NINETY_DAYS_MS = 90 * 24 * 3600_000;
const EVENT_FIELDS = new Set(['conversion', 'conversionHappenedAt', 'conversionValue', 'eventId', 'user', 'leadGenFormResponse', 'externalIds']);
const ID_TYPES = new Set(['SHA256_EMAIL', 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', 'ACXIOM_ID', 'ORACLE_MOAT_ID']);
const USER_INFO_FIELDS = new Set(['firstName', 'lastName', 'companyName', 'title', 'countryCode']);

/** Rest.li validation message: "ERROR :: /path :: problem". */
function eventProblem(raw: unknown, options: LinkedinServerOptions, now: number, at: string): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `ERROR :: ${at} :: expected a record`;
  const e = raw as Record<string, unknown>;
  const unknown = Object.keys(e).find((k) => !EVENT_FIELDS.has(k));
  if (unknown) return `ERROR :: ${at}/${unknown} :: unrecognized field found but not allowed`;
  const conversion = e['conversion'];
  if (typeof conversion !== 'string') return `ERROR :: ${at}/conversion :: field is required but not found and has no default value`;
  const rule = /^urn:lla:llaPartnerConversion:(\d+)$/.exec(conversion);
  if (!rule) return `ERROR :: ${at}/conversion :: invalid URN syntax: ${conversion}`;
  if (options.conversionRules && !options.conversionRules.includes(rule[1]!)) return `ERROR :: ${at}/conversion :: conversion rule ${rule[1]} does not exist or is not a CONVERSIONS_API rule`;
  const happened = e['conversionHappenedAt'];
  if (typeof happened !== 'number' || !Number.isInteger(happened)) return `ERROR :: ${at}/conversionHappenedAt :: field is required and must be a long (epoch milliseconds)`;
  if (happened > now + 60_000) return `ERROR :: ${at}/conversionHappenedAt :: conversion time is in the future`;
  if (happened < now - NINETY_DAYS_MS) return `ERROR :: ${at}/conversionHappenedAt :: conversion happened more than 90 days ago`;
  const value = e['conversionValue'];
  if (value !== undefined) {
    const v = (value ?? {}) as Record<string, unknown>;
    if (typeof v['currencyCode'] !== 'string' || !/^[A-Z]{3}$/.test(v['currencyCode'])) return `ERROR :: ${at}/conversionValue/currencyCode :: must be an ISO 4217 code`;
    if (typeof v['amount'] !== 'string' || !/^\d+(\.\d+)?$/.test(v['amount'])) return `ERROR :: ${at}/conversionValue/amount :: must be a decimal number as a string`;
  }
  if (e['eventId'] !== undefined && typeof e['eventId'] !== 'string') return `ERROR :: ${at}/eventId :: must be a string`;
  const user = e['user'] as Record<string, unknown> | undefined;
  if (typeof user !== 'object' || user === null) return `ERROR :: ${at}/user :: field is required but not found and has no default value`;
  const ids = user['userIds'];
  if (!Array.isArray(ids) || ids.length === 0) return `ERROR :: ${at}/user/userIds :: at least one user id is required`;
  for (const [i, id] of ids.entries()) {
    const { idType, idValue } = (id ?? {}) as Record<string, unknown>;
    if (typeof idType !== 'string' || !ID_TYPES.has(idType)) return `ERROR :: ${at}/user/userIds/${i}/idType :: not an enum symbol`;
    if (typeof idValue !== 'string' || idValue === '') return `ERROR :: ${at}/user/userIds/${i}/idValue :: field is required`;
    if (idType === 'SHA256_EMAIL' && !/^[0-9a-f]{64}$/.test(idValue)) return `ERROR :: ${at}/user/userIds/${i}/idValue :: SHA256_EMAIL must be the SHA-256 hex digest of the email`;
  }
  const info = user['userInfo'];
  if (info !== undefined) {
    if (typeof info !== 'object' || info === null) return `ERROR :: ${at}/user/userInfo :: expected a record`;
    const bad = Object.keys(info).find((k) => !USER_INFO_FIELDS.has(k));
    if (bad) return `ERROR :: ${at}/user/userInfo/${bad} :: unrecognized field found but not allowed`;
  }
  return null;
}

export async function startLinkedinConversionsServer(options: LinkedinServerOptions = {}): Promise<LinkedinConversionsServer> {
  const requests: LinkedinRecordedRequest[] = [];
  const events: Record<string, unknown>[] = [];
  const scripted: LinkedinReply[] = [];
  let deduplicated = 0;
  let window: number[] = [];
  let answerDelayMs = options.answerDelayMs ?? 0;
  const clock = () => (options.now?.() ?? new Date()).getTime();

  const accept = (event: Record<string, unknown>): void => {
    const dup = event['eventId'] !== undefined && events.some((e) => e['eventId'] === event['eventId'] && e['conversion'] === event['conversion']);
    if (dup) deduplicated += 1;
    else events.push(event);
  };

  const answer = (method: string, path: string, headers: IncomingMessage['headers'], body: unknown): LinkedinReply => {
    if (path !== '/rest/conversionEvents') return linkedinError(404, `No virtual resource found`, { code: 'NOT_FOUND' });
    if (method !== 'POST') return linkedinError(405, `Method ${method} is not allowed`, { code: 'METHOD_NOT_ALLOWED' });
    const auth = headers['authorization'];
    if (!auth) return linkedinError(401, 'Empty oauth2_access_token', { serviceErrorCode: 401, code: 'EMPTY_ACCESS_TOKEN' });
    const token = /^Bearer (.+)$/.exec(auth)?.[1];
    if (!token) return linkedinError(401, 'Unknown authentication scheme', { serviceErrorCode: 401, code: 'UNKNOWN_AUTH_SCHEME' });
    if (options.revokedTokens?.includes(token)) return linkedinError(401, 'The token used in the request has been revoked by the user', { serviceErrorCode: 65601, code: 'REVOKED_ACCESS_TOKEN' });
    if (token !== (options.accessToken ?? 'linkedin-token')) return linkedinError(401, 'Invalid access token', { serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN' });
    const version = headers['linkedin-version'];
    if (typeof version !== 'string' || version === '') return linkedinError(400, 'A version must be present: add the Linkedin-Version header', { code: 'VERSION_MISSING' });
    if (!/^\d{6}(\.\d{2})?$/.test(version) || (options.activeVersions && !options.activeVersions.includes(version))) {
      return linkedinError(426, `Requested version ${version} is not active`, { code: 'NONEXISTENT_VERSION' });
    }
    if (headers['x-restli-protocol-version'] !== '2.0.0') return linkedinError(400, 'X-Restli-Protocol-Version 2.0.0 is required for this resource', { code: 'INVALID_PROTOCOL_VERSION' });
    if (options.rateLimit) {
      const now = clock();
      window = window.filter((t) => t > now - options.rateLimit!.windowMs);
      if (window.length >= options.rateLimit.requests) return linkedinError(429, 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.', { serviceErrorCode: 101 });
      window.push(now);
    }
    const now = clock();
    const method2 = headers['x-restli-method'];
    if (typeof method2 === 'string' && method2.toUpperCase() === 'BATCH_CREATE') {
      const elements = (body as { elements?: unknown } | null)?.elements;
      if (!Array.isArray(elements) || elements.length === 0) return linkedinError(400, 'Batch create needs a non-empty elements array', { code: 'INVALID_BATCH' });
      if (elements.length > 5000) return linkedinError(400, `Batch of ${elements.length} exceeds the maximum of 5000 elements`, { code: 'BATCH_TOO_LARGE' });
      const results = elements.map((raw, i) => {
        const problem = eventProblem(raw, options, now, `/elements/${i}`);
        if (problem) return { status: 422, error: { status: 422, message: problem } };
        accept(raw as Record<string, unknown>);
        return { status: 201 };
      });
      return { status: 200, body: { elements: results } };
    }
    const problem = eventProblem(body, options, now, '');
    if (problem) return linkedinError(422, problem, { code: 'UNPROCESSABLE_ENTITY' });
    accept(body as Record<string, unknown>);
    return { status: 201, body: null };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = await readBody(req);
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    const reply = scripted.shift() ?? answer(req.method ?? 'GET', url.pathname, req.headers, body);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: { ...req.headers } as Record<string, string | undefined>, body, status: reply.status });
    if (answerDelayMs > 0) await new Promise((r) => setTimeout(r, answerDelayMs));
    if (reply.body === null) {
      res.writeHead(reply.status, { ...reply.headers });
      res.end();
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 500, message: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    events,
    get deduplicated() {
      return deduplicated;
    },
    failNext(...replies) {
      scripted.push(...replies);
    },
    setAnswerDelay(ms) {
      answerDelayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
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
