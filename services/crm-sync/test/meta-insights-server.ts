// A local stand-in for Meta's Marketing API insights edge, answering as its documentation
// describes:
//   GET /{version}/act_{ad_account_id}/insights?level=campaign|adset|ad&time_increment=1
//       &time_range={"since":"YYYY-MM-DD","until":"YYYY-MM-DD"}&fields=a,b,c&limit=N[&after=<cursor>]
//   token: Authorization: Bearer <token> or ?access_token=.
//   200: {data: [{..requested fields, all numbers as strings, actions/action_values as
//        [{action_type, value}], date_start, date_stop}], paging: {cursors: {before, after}, next?}}
//        and the header x-business-use-case-usage {<business id>: [{type: "ads_insights",
//        call_count, total_cputime, total_time, estimated_time_to_regain_access}]}.
//   errors: {error: {message, type, code, error_subcode?, fbtrace_id}}: 190 (invalid token; subcode
//        460/463 for a changed password or expiry, 458 for a removed app), 100/33 (no such account
//        or no permission), 80000 family (ads insights throttle, HTTP 400), 2 (transient, HTTP 500).
// The test owns the delivery (`accounts[id].ads`); campaign and ad set rows are sums of their ads.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { aggregate, closeServer, listen, send, type AdDay, type Recorded, type ScriptedAnswer } from './google-ads-spend-server';

export interface MetaAccount {
  name: string;
  currency: string;
  ads: AdDay[];
  /** Action type the ads' conversions are reported under (default purchase). */
  conversionType?: string;
}

export interface MetaInsightsServerOptions {
  accessToken?: string;
  accounts?: Record<string, MetaAccount>;
  versions?: string[];
  /** Insights calls per account before error 80004 (none when omitted); usage % = calls / limit. */
  callLimit?: number;
  /** Minutes stated in estimated_time_to_regain_access while throttled. */
  regainMinutes?: number;
  /** Most rows a page holds whatever limit is asked (Meta may answer fewer than asked). */
  pageSize?: number;
}

export interface MetaInsightsServer {
  url: string;
  accounts: Record<string, MetaAccount>;
  requests: Recorded[];
  /** Calls counted per account toward callLimit; reset to lift a throttle. */
  calls: Map<string, number>;
  /** The token is refused as revoked (true) or accepted again (false). */
  revoke(on?: boolean): void;
  failNext(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

const LEVELS: Record<string, 'campaign' | 'ad_set' | 'ad'> = { campaign: 'campaign', adset: 'ad_set', ad: 'ad' };
const KNOWN_FIELDS = new Set([
  'account_id', 'account_name', 'account_currency', 'campaign_id', 'campaign_name', 'adset_id', 'adset_name', 'ad_id', 'ad_name',
  'objective', 'spend', 'impressions', 'clicks', 'actions', 'action_values', 'date_start', 'date_stop', 'reach', 'cpc', 'ctr',
]);

const trace = (): string => randomBytes(9).toString('base64url');

export function graphError(code: number, message: string, extra: Record<string, unknown> = {}) {
  return { error: { message, type: code === 190 ? 'OAuthException' : code === 100 ? 'GraphMethodException' : 'OAuthException', code, ...extra, fbtrace_id: trace() } };
}

export async function startMetaInsightsServer(options: MetaInsightsServerOptions = {}): Promise<MetaInsightsServer> {
  const accessToken = options.accessToken ?? 'meta-access-token';
  const versions = new Set(options.versions ?? ['v25.0']);
  const accounts = options.accounts ?? {};
  const requests: Recorded[] = [];
  const scripted: ScriptedAnswer[] = [];
  const calls = new Map<string, number>();
  let revoked = false;

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const record: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } as Record<string, string | undefined>, body: null, status: 0 };
    requests.push(record);
    const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, body, headers);
    };
    const next = scripted.shift();
    if (next) return reply(next.status, next.body, next.headers);

    const match = /^\/(v\d+\.\d+)\/act_(\d+)\/insights$/.exec(url.pathname);
    if (req.method !== 'GET' || !match) return reply(400, graphError(100, 'Unknown path components: ' + url.pathname));
    if (!versions.has(match[1]!)) return reply(400, graphError(2635, `(#2635) You are calling a deprecated version of the Ads API. Please update to the latest version: ${[...versions][0]}.`));
    const token = req.headers['authorization']?.replace(/^Bearer /, '') ?? url.searchParams.get('access_token');
    if (!token) return reply(400, graphError(104, 'An access token is required to request this resource.'));
    if (revoked) return reply(400, graphError(190, 'Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.', { error_subcode: 460 }));
    if (token !== accessToken) return reply(400, graphError(190, 'Invalid OAuth access token - Cannot parse access token'));
    const accountId = match[2]!;
    const account = accounts[accountId];
    if (!account) {
      return reply(400, graphError(100, `Unsupported get request. Object with ID 'act_${accountId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`, { error_subcode: 33 }));
    }
    const count = (calls.get(accountId) ?? 0) + 1;
    calls.set(accountId, count);
    const limit = options.callLimit;
    const percent = limit ? Math.min(100, Math.round((count / limit) * 100)) : 1;
    const throttled = limit !== undefined && count > limit;
    const usage = { [`${accountId}0`]: [{ type: 'ads_insights', call_count: percent, total_cputime: Math.round(percent / 2), total_time: Math.round(percent / 2), estimated_time_to_regain_access: throttled ? (options.regainMinutes ?? 5) : 0, ads_api_access_tier: 'standard_access' }] };
    const usageHeader = { 'x-business-use-case-usage': JSON.stringify(usage) };
    if (throttled) {
      return reply(400, graphError(80004, 'There have been too many calls to this ad-account. Wait a bit and try again. For more info, please refer to https://developers.facebook.com/docs/graph-api/overview/rate-limiting#ads-management.', { error_subcode: 2446079, is_transient: true }), usageHeader);
    }

    const level = LEVELS[url.searchParams.get('level') ?? ''];
    if (!level) return reply(400, graphError(100, '(#100) level must be one of the following values: ad, adset, campaign, account'));
    if (url.searchParams.get('time_increment') !== '1') return reply(400, graphError(100, '(#100) this stand-in only serves time_increment=1'));
    let range: { since?: string; until?: string };
    try {
      range = JSON.parse(url.searchParams.get('time_range') ?? '') as { since?: string; until?: string };
    } catch {
      return reply(400, graphError(100, '(#100) param time_range must be a JSON object with since and until'));
    }
    if (!range.since || !range.until || !/^\d{4}-\d{2}-\d{2}$/.test(range.since) || !/^\d{4}-\d{2}-\d{2}$/.test(range.until)) {
      return reply(400, graphError(100, '(#100) param time_range must contain since and until dates'));
    }
    const fields = (url.searchParams.get('fields') ?? 'spend,impressions,date_start,date_stop').split(',');
    const unknown = fields.find((f) => !KNOWN_FIELDS.has(f));
    if (unknown) return reply(400, graphError(100, `(#100) ${unknown} is not valid for fields param. please check https://developers.facebook.com/docs/marketing-api/reference/ads-insights/ for all valid values`));
    const limitParam = Math.min(options.pageSize ?? 5000, Math.max(1, Number(url.searchParams.get('limit') ?? 25) || 25));
    const after = url.searchParams.get('after');
    const offset = after ? Number(Buffer.from(after, 'base64url').toString('utf8')) || 0 : 0;

    const all = aggregate(account.ads, level, range.since, range.until);
    const page = all.slice(offset, offset + limitParam).map((a) => {
      const type = account.conversionType ?? 'purchase';
      const values: Record<string, unknown> = {
        account_id: accountId, account_name: account.name, account_currency: account.currency,
        campaign_id: a.campaign.id, campaign_name: a.campaign.name, adset_id: a.adSet.id, adset_name: a.adSet.name, ad_id: a.ad.id, ad_name: a.ad.name,
        objective: a.campaign.type ?? 'OUTCOME_SALES', spend: String(Math.round(a.cost * 100) / 100), impressions: String(a.impressions), clicks: String(a.clicks),
        actions: [{ action_type: 'link_click', value: String(a.clicks) }, ...(a.conversions ? [{ action_type: type, value: String(a.conversions) }] : [])],
        action_values: a.conversionValue ? [{ action_type: type, value: String(a.conversionValue) }] : undefined,
        date_start: a.date, date_stop: a.date,
      };
      const row: Record<string, unknown> = {};
      for (const f of fields) if (values[f] !== undefined) row[f] = values[f];
      return row;
    });
    const cursor = (n: number) => Buffer.from(String(n)).toString('base64url');
    const paging: Record<string, unknown> = { cursors: { before: cursor(offset), after: cursor(offset + page.length) } };
    if (offset + page.length < all.length) {
      const nextUrl = new URL(url.toString());
      nextUrl.searchParams.set('after', cursor(offset + page.length));
      paging['next'] = `http://${req.headers.host}${nextUrl.pathname}${nextUrl.search}`;
    }
    return reply(200, { data: page, paging }, usageHeader);
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => send(res, 500, graphError(2, `An unexpected error has occurred: ${String(error)}`, { is_transient: true })));
  });
  const base = await listen(server);
  return {
    url: base,
    accounts,
    requests,
    calls,
    revoke: (on = true) => void (revoked = on),
    failNext: (...answers) => void scripted.push(...answers),
    close: () => closeServer(server),
  };
}
