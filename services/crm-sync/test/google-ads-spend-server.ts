// A local stand-in for the Google Ads API's reporting call, answering as its REST documentation
// describes, so the spend connector is checked against the documented shapes:
//   POST /{version}/customers/{customer_id}/googleAds:searchStream   body {query: "<GAQL>"}
//   headers: Authorization: Bearer <token>, developer-token, login-customer-id (manager access).
//   200: a JSON array of SearchGoogleAdsStreamResponse batches {results: [GoogleAdsRow], fieldMask,
//        requestId}; row fields in lowerCamelCase nested by resource; int64 (costMicros,
//        impressions, clicks, ids) as strings; doubles (conversions, conversionsValue) as numbers;
//        only the SELECTed fields; rows without any metrics left out.
//   errors: {error: {code, message, status, details: [{@type: ...GoogleAdsFailure, errors:
//        [{errorCode: {<kind>: <CODE>}, message}], requestId}]}} with 401 UNAUTHENTICATED (bad token,
//        bad developer token), 403 PERMISSION_DENIED (no access to the customer), 400
//        INVALID_ARGUMENT (bad query), 429 RESOURCE_EXHAUSTED (quotaErrorDetails.retryDelay).
//   POST /token (Google's OAuth 2.0 token endpoint, form-encoded grant_type=refresh_token,
//        refresh_token, client_id, client_secret) → {access_token, expires_in: 3599, scope,
//        token_type: "Bearer"}; a revoked or unknown grant → 400 {error: "invalid_grant",
//        error_description: "Token has been expired or revoked."}; a wrong client → 401 invalid_client.
// The test owns the account's delivery (`ads`: one entry per ad and day); campaign and ad-group
// rows are the sums of their ads, as on the platform. `failNext` scripts answers before any checks.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One ad's delivery on one day, in the account currency; the shared model of the three stand-ins. */
export interface AdDay {
  date: string;
  campaign: { id: string; name: string; type?: string };
  adSet: { id: string; name: string };
  ad: { id: string; name: string };
  cost: number;
  impressions: number;
  clicks: number;
  conversions?: number;
  conversionValue?: number;
}

export interface ScriptedAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  status: number;
}

export type SpendLevel = 'campaign' | 'ad_set' | 'ad';

/** The account's rows at one level within [from, to]: ads summed up to their campaign or ad set per day. */
export function aggregate(ads: readonly AdDay[], level: SpendLevel, from: string, to: string): (AdDay & { key: string })[] {
  const out = new Map<string, AdDay & { key: string }>();
  for (const ad of ads) {
    if (ad.date < from || ad.date > to) continue;
    const id = level === 'campaign' ? ad.campaign.id : level === 'ad_set' ? ad.adSet.id : ad.ad.id;
    const key = `${id}|${ad.date}`;
    const row = out.get(key);
    if (!row) {
      out.set(key, { ...ad, key, conversions: ad.conversions ?? 0, conversionValue: ad.conversionValue ?? 0 });
    } else {
      row.cost += ad.cost;
      row.impressions += ad.impressions;
      row.clicks += ad.clicks;
      row.conversions = (row.conversions ?? 0) + (ad.conversions ?? 0);
      row.conversionValue = (row.conversionValue ?? 0) + (ad.conversionValue ?? 0);
    }
  }
  return [...out.values()].sort((a, b) => (a.date === b.date ? a.key.localeCompare(b.key) : a.date.localeCompare(b.date)));
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export const closeServer = (server: ReturnType<typeof createServer>): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

// --- Google Ads ------------------------------------------------------------------------------

export interface GoogleAdsSpendServerOptions {
  accessToken?: string;
  developerToken?: string;
  /** Customers the token may read, with their currency and name. */
  customers?: Record<string, { currency: string; name: string; ads: AdDay[] }>;
  /** Versions the server answers; others get Google's 404. */
  versions?: string[];
  /** Rows per stream batch. */
  batchSize?: number;
  /** The OAuth client and refresh token /token accepts. */
  oauth?: { clientId: string; clientSecret: string; refreshToken: string };
}

export interface GoogleAdsSpendServer {
  url: string;
  customers: Record<string, { currency: string; name: string; ads: AdDay[] }>;
  requests: Recorded[];
  /** The token is refused as revoked (true) or accepted again (false). */
  revoke(on?: boolean): void;
  /** Access tokens /token minted (each valid until the grant is revoked). */
  minted: string[];
  failNext(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

const FAILURE_TYPE = 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure';

/** The selectable fields per resource (a subset of Google's, the ones the connector may ask for). */
const COMMON = ['customer.id', 'customer.descriptive_name', 'customer.currency_code', 'campaign.id', 'campaign.name', 'campaign.advertising_channel_type', 'segments.date',
  'metrics.cost_micros', 'metrics.impressions', 'metrics.clicks', 'metrics.conversions', 'metrics.conversions_value'];
const SELECTABLE: Record<string, { level: SpendLevel; fields: Set<string> }> = {
  campaign: { level: 'campaign', fields: new Set(COMMON) },
  ad_group: { level: 'ad_set', fields: new Set([...COMMON, 'ad_group.id', 'ad_group.name']) },
  ad_group_ad: { level: 'ad', fields: new Set([...COMMON, 'ad_group.id', 'ad_group.name', 'ad_group_ad.ad.id', 'ad_group_ad.ad.name']) },
};

export function googleFailure(httpStatus: number, status: string, kind: string, code: string, message: string, extra: Record<string, unknown> = {}) {
  return {
    error: {
      code: httpStatus, message: status === 'INVALID_ARGUMENT' ? 'Request contains an invalid argument.' : message, status,
      details: [{ '@type': FAILURE_TYPE, errors: [{ errorCode: { [kind]: code }, message, ...extra }], requestId: randomBytes(11).toString('base64url') }],
    },
  };
}

const camel = (s: string): string => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

function setPath(row: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.').map(camel);
  let node = row;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts[parts.length - 1]!] = value;
}

export async function startGoogleAdsSpendServer(options: GoogleAdsSpendServerOptions = {}): Promise<GoogleAdsSpendServer> {
  const accessToken = options.accessToken ?? 'google-access-token';
  const developerToken = options.developerToken ?? 'google-developer-token';
  const versions = new Set(options.versions ?? ['v26']);
  const customers = options.customers ?? {};
  const requests: Recorded[] = [];
  const scripted: ScriptedAnswer[] = [];
  let revoked = false;
  const minted: string[] = [];

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const record: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } as Record<string, string | undefined>, body: raw, status: 0 };
    requests.push(record);
    const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, body, headers);
    };
    const next = scripted.shift();
    if (next) return reply(next.status, next.body, next.headers);

    if (req.method === 'POST' && req.url === '/token') {
      const form = new URLSearchParams(raw);
      const client = options.oauth;
      if (!client || form.get('client_id') !== client.clientId || form.get('client_secret') !== client.clientSecret) {
        return reply(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
      }
      if (form.get('grant_type') !== 'refresh_token') return reply(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: ' + form.get('grant_type') });
      if (revoked || form.get('refresh_token') !== client.refreshToken) return reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      const token = `ya29.${randomBytes(12).toString('base64url')}`;
      minted.push(token);
      return reply(200, { access_token: token, expires_in: 3599, scope: 'https://www.googleapis.com/auth/adwords', token_type: 'Bearer' });
    }
    const match = /^\/(v\d+)\/customers\/(\d+)\/googleAds:searchStream$/.exec((req.url ?? '').split('?')[0]!);
    if (req.method !== 'POST' || !match) return reply(404, '<!DOCTYPE html><title>Error 404 (Not Found)</title>', { 'content-type': 'text/html' });
    if (!versions.has(match[1]!)) return reply(404, `<!DOCTYPE html><title>Error 404 (Not Found)</title><p>The requested URL /${match[1]}/ was not found.`, { 'content-type': 'text/html' });
    const auth = req.headers['authorization'];
    if ((auth !== `Bearer ${accessToken}` && !minted.some((t) => auth === `Bearer ${t}`)) || revoked) {
      return reply(401, {
        error: {
          code: 401, status: 'UNAUTHENTICATED',
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          details: [{ '@type': FAILURE_TYPE, errors: [{ errorCode: { authenticationError: revoked ? 'OAUTH_TOKEN_REVOKED' : 'OAUTH_TOKEN_INVALID' }, message: revoked ? 'The OAuth access token is revoked.' : 'Oauth token is invalid.' }] }],
        },
      });
    }
    if (req.headers['developer-token'] !== developerToken) {
      return reply(401, googleFailure(401, 'UNAUTHENTICATED', 'authenticationError', 'DEVELOPER_TOKEN_INVALID', 'The developer token is not valid.'));
    }
    const customer = customers[match[2]!];
    if (!customer) {
      return reply(403, googleFailure(403, 'PERMISSION_DENIED', 'authorizationError', 'USER_PERMISSION_DENIED',
        "User doesn't have permission to access customer. Note: If you're accessing a client customer, the manager's customer id must be set in the 'login-customer-id' header."));
    }
    let query: string;
    try {
      query = String((JSON.parse(raw) as { query?: unknown }).query ?? '');
    } catch {
      return reply(400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
    }
    const parsed = /^\s*SELECT\s+(.+?)\s+FROM\s+(\w+)\s+WHERE\s+segments\.date\s+BETWEEN\s+'(\d{4}-\d{2}-\d{2})'\s+AND\s+'(\d{4}-\d{2}-\d{2})'\s*$/i.exec(query);
    if (!parsed) return reply(400, googleFailure(400, 'INVALID_ARGUMENT', 'queryError', 'UNEXPECTED_END_OF_QUERY', 'Error in query: the query this stand-in understands is SELECT … FROM … WHERE segments.date BETWEEN … AND ….'));
    const resource = SELECTABLE[parsed[2]!];
    const fields = parsed[1]!.split(',').map((f) => f.trim());
    if (!resource) return reply(400, googleFailure(400, 'INVALID_ARGUMENT', 'queryError', 'INVALID_RESOURCE_NAME', `Error in FROM clause: invalid resource name '${parsed[2]}'.`));
    const unknown = fields.find((f) => !resource.fields.has(f));
    if (unknown) return reply(400, googleFailure(400, 'INVALID_ARGUMENT', 'queryError', 'UNRECOGNIZED_FIELD', `Error in SELECT clause: unrecognized field '${unknown}'.`));

    const rows = aggregate(customer.ads, resource.level, parsed[3]!, parsed[4]!).map((a) => {
      const values: Record<string, unknown> = {
        'customer.id': match[2], 'customer.descriptive_name': customer.name, 'customer.currency_code': customer.currency,
        'campaign.id': a.campaign.id, 'campaign.name': a.campaign.name, 'campaign.advertising_channel_type': a.campaign.type ?? 'SEARCH',
        'segments.date': a.date, 'metrics.cost_micros': String(Math.round(a.cost * 1e6)), 'metrics.impressions': String(a.impressions),
        'metrics.clicks': String(a.clicks), 'metrics.conversions': a.conversions ?? 0, 'metrics.conversions_value': a.conversionValue ?? 0,
        'ad_group.id': a.adSet.id, 'ad_group.name': a.adSet.name, 'ad_group_ad.ad.id': a.ad.id, 'ad_group_ad.ad.name': a.ad.name,
      };
      const row: Record<string, unknown> = {};
      for (const f of fields) setPath(row, f, values[f]);
      // Every selected resource comes with its resource name, as Google's answers have it.
      const cid = match[2]!;
      const names: Record<string, string> = {
        customer: `customers/${cid}`, campaign: `customers/${cid}/campaigns/${a.campaign.id}`,
        adGroup: `customers/${cid}/adGroups/${a.adSet.id}`, adGroupAd: `customers/${cid}/adGroupAds/${a.adSet.id}~${a.ad.id}`,
      };
      for (const [resource, name] of Object.entries(names)) {
        const node = row[resource] as Record<string, unknown> | undefined;
        if (node) row[resource] = { resourceName: name, ...node };
      }
      return row;
    });
    const batchSize = options.batchSize ?? 10_000;
    const requestId = randomBytes(11).toString('base64url');
    const fieldMask = fields.map((f) => f.split('.').map(camel).join('.')).join(',');
    const batches: unknown[] = [];
    for (let i = 0; i < rows.length; i += batchSize) batches.push({ results: rows.slice(i, i + batchSize), fieldMask, requestId });
    if (batches.length === 0) batches.push({ fieldMask, requestId });
    return reply(200, batches, { 'request-id': requestId });
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => send(res, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } }));
  });
  const url = await listen(server);
  return {
    url,
    customers,
    requests,
    revoke: (on = true) => void (revoked = on),
    minted,
    failNext: (...answers) => void scripted.push(...answers),
    close: () => closeServer(server),
  };
}
