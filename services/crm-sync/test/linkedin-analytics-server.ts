// A local stand-in for the LinkedIn Marketing API calls the spend connector makes, answering as
// its documentation describes:
//   GET /rest/adAccounts/{id}  → {id, name, currency, status, type, reference, ...}
//   GET /rest/adAnalytics?q=analytics&pivot=CAMPAIGN|CREATIVE&timeGranularity=DAILY
//       &dateRange=(start:(year:Y,month:M,day:D),end:(year:Y,month:M,day:D))
//       &accounts=List(urn%3Ali%3AsponsoredAccount%3A<id>)&fields=a,b,c
//     → {elements: [{pivotValues: [urn], dateRange: {start, end}, <requested metrics>}], paging: {start, count, links: []}}
//     costInLocalCurrency and conversionValueInLocalCurrency as decimal strings; at most
//     `elementCap` elements (15,000 on LinkedIn), the rest silently left out; no paging offered
//     ("start" is refused).
//   headers: Authorization: Bearer, Linkedin-Version: YYYYMM (mandatory; an unknown or sunset
//   version is refused), X-Restli-Protocol-Version: 2.0.0 (needed for the List(...) syntax).
//   errors (Rest.li): {status, serviceErrorCode, code, message}: 401 INVALID_ACCESS_TOKEN (65600)
//   or REVOKED_ACCESS_TOKEN (65601), 403 ACCESS_DENIED (100), 400 VERSION_MISSING / NONEXISTENT_VERSION,
//   429 TOO_MANY_REQUESTS (daily application or member throttle).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { aggregate, closeServer, listen, send, type AdDay, type Recorded, type ScriptedAnswer } from './google-ads-spend-server';

export interface LinkedInAccount {
  name: string;
  currency: string;
  ads: AdDay[];
}

export interface LinkedInAnalyticsServerOptions {
  accessToken?: string;
  accounts?: Record<string, LinkedInAccount>;
  /** Versions answered (YYYYMM); default 202603. */
  versions?: string[];
  elementCap?: number;
}

export interface LinkedInAnalyticsServer {
  url: string;
  accounts: Record<string, LinkedInAccount>;
  requests: Recorded[];
  /** The token is refused as revoked (true) or accepted again (false). */
  revoke(on?: boolean): void;
  failNext(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

const restliError = (status: number, code: string, serviceErrorCode: number, message: string) => ({ status, serviceErrorCode, code, message });

const METRICS = new Set(['costInLocalCurrency', 'costInUsd', 'impressions', 'clicks', 'externalWebsiteConversions', 'conversionValueInLocalCurrency', 'oneClickLeads', 'landingPageClicks']);

function parseRestliDate(text: string | undefined): string | null {
  const m = /^\(year:(\d{4}),month:(\d{1,2}),day:(\d{1,2})\)$/.exec(text ?? '');
  return m ? `${m[1]}-${m[2]!.padStart(2, '0')}-${m[3]!.padStart(2, '0')}` : null;
}

const liDate = (day: string) => {
  const [year, month, d] = day.split('-').map(Number);
  return { year, month, day: d };
};

export async function startLinkedInAnalyticsServer(options: LinkedInAnalyticsServerOptions = {}): Promise<LinkedInAnalyticsServer> {
  const accessToken = options.accessToken ?? 'linkedin-access-token';
  const versions = new Set(options.versions ?? ['202603']);
  const accounts = options.accounts ?? {};
  const requests: Recorded[] = [];
  const scripted: ScriptedAnswer[] = [];
  let revoked = false;

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawUrl = req.url ?? '/';
    const record: Recorded = { method: req.method ?? '', url: rawUrl, headers: { ...req.headers } as Record<string, string | undefined>, body: null, status: 0 };
    requests.push(record);
    const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, body, { 'x-restli-protocol-version': '2.0.0', ...headers });
    };
    const next = scripted.shift();
    if (next) return reply(next.status, next.body, next.headers);

    if (req.headers['authorization'] !== `Bearer ${accessToken}`) return reply(401, restliError(401, 'INVALID_ACCESS_TOKEN', 65600, 'Invalid access token'));
    if (revoked) return reply(401, restliError(401, 'REVOKED_ACCESS_TOKEN', 65601, 'The token used in the request has been revoked by the user'));
    const version = req.headers['linkedin-version'];
    if (typeof version !== 'string' || version === '') return reply(400, restliError(400, 'VERSION_MISSING', 0, 'A version must be present. Please specify a version by adding the LinkedIn-Version header.'));
    if (!versions.has(version)) return reply(426, restliError(426, 'NONEXISTENT_VERSION', 0, `Requested version ${version} is not active`));

    // Rest.li 2.0 keeps List(...) and (...) literal in the query string; URLSearchParams would mangle it.
    const [path, query = ''] = rawUrl.split('?') as [string, string?];
    const params = new Map<string, string>();
    for (const pair of query.split('&')) {
      if (!pair) continue;
      const i = pair.indexOf('=');
      params.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const accountPath = /^\/rest\/adAccounts\/(\d+)$/.exec(path);
    if (req.method === 'GET' && accountPath) {
      const account = accounts[accountPath[1]!];
      if (!account) return reply(403, restliError(403, 'ACCESS_DENIED', 100, `Not enough permissions to access: adAccounts.GET.20260301`));
      return reply(200, { id: Number(accountPath[1]), name: account.name, currency: account.currency, status: 'ACTIVE', type: 'BUSINESS', reference: 'urn:li:organization:1', test: false });
    }
    if (req.method !== 'GET' || path !== '/rest/adAnalytics') return reply(404, restliError(404, 'NOT_FOUND', 0, `No resource found at ${path}`));
    if (req.headers['x-restli-protocol-version'] !== '2.0.0') return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'Invalid param. Please see errorDetails for more information.'));
    if (params.get('q') !== 'analytics') return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'Invalid query parameters passed to request'));
    if (params.has('start')) return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'Setting a paging start value is not permitted'));
    const pivot = params.get('pivot');
    if (pivot !== 'CAMPAIGN' && pivot !== 'CREATIVE') return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, `Invalid value for param pivot: ${pivot}`));
    if (params.get('timeGranularity') !== 'DAILY') return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'this stand-in only serves timeGranularity=DAILY'));
    const range = /^\(start:(\([^)]*\)),end:(\([^)]*\))\)$/.exec(decodeURIComponent(params.get('dateRange') ?? ''));
    const from = parseRestliDate(range?.[1]);
    const to = parseRestliDate(range?.[2]);
    if (!from || !to) return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'Invalid param dateRange'));
    const accountsParam = /^List\(urn:li:sponsoredAccount:(\d+)\)$/.exec(decodeURIComponent(params.get('accounts') ?? ''));
    if (!accountsParam) return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, 'Invalid param accounts: expected List(urn:li:sponsoredAccount:<id>)'));
    const account = accounts[accountsParam[1]!];
    if (!account) return reply(403, restliError(403, 'ACCESS_DENIED', 100, 'Not enough permissions to access: adAnalytics.FINDER-analytics.20260301'));
    const fields = decodeURIComponent(params.get('fields') ?? 'impressions,clicks').split(',');
    const unknown = fields.find((f) => f !== 'dateRange' && f !== 'pivotValues' && !METRICS.has(f));
    if (unknown) return reply(400, restliError(400, 'ILLEGAL_ARGUMENT', 0, `Invalid field ${unknown} in fields`));

    const level = pivot === 'CAMPAIGN' ? 'campaign' : 'ad';
    const elements = aggregate(account.ads, level, from, to).slice(0, options.elementCap ?? 15_000).map((a) => {
      const urn = level === 'campaign' ? `urn:li:sponsoredCampaign:${a.campaign.id}` : `urn:li:sponsoredCreative:${a.ad.id}`;
      const values: Record<string, unknown> = {
        pivotValues: [urn], dateRange: { start: liDate(a.date), end: liDate(a.date) },
        costInLocalCurrency: String(Math.round(a.cost * 100) / 100), costInUsd: String(Math.round(a.cost * 100) / 100),
        impressions: a.impressions, clicks: a.clicks, landingPageClicks: a.clicks, oneClickLeads: 0,
        externalWebsiteConversions: a.conversions ?? 0, conversionValueInLocalCurrency: String(a.conversionValue ?? 0),
      };
      const row: Record<string, unknown> = {};
      for (const f of fields) row[f] = values[f];
      return row;
    });
    return reply(200, { paging: { start: 0, count: 10, links: [] }, elements });
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => send(res, 500, restliError(500, 'INTERNAL_SERVER_ERROR', 0, String(error))));
  });
  const base = await listen(server);
  return {
    url: base,
    accounts,
    requests,
    revoke: (on = true) => void (revoked = on),
    failNext: (...answers) => void scripted.push(...answers),
    close: () => closeServer(server),
  };
}
