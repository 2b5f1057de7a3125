// Google Ads spend: three GAQL queries (campaign, ad_group, ad_group_ad) segmented by day, sent to
// POST {base}/{version}/customers/{customer_id}/googleAds:searchStream. The REST stream answers a
// JSON array of batches ({results: [GoogleAdsRow], fieldMask, requestId}); fields come back in
// lowerCamelCase and int64 values (costMicros, impressions, clicks) as strings. cost_micros are
// millionths of the account currency (customer.currency_code). Errors are
// {error: {code, message, status, details: [GoogleAdsFailure {errors: [{errorCode, message}]}]}}
// — also as an element of the stream array when the stream fails after it started.
import { createHash } from 'node:crypto';
import type { AdReportRowV1 } from '@sightline/proto-schemas';
import { ProviderError, type Credentials } from '../../connectors/connector';
import { parseDuration } from '../../writeback/backoff';
import { apiVersion } from '../../api-versions';
import { callWithRetry, digitsSetting, httpCall, money, num, reportRow, retryAfterOf, text, type HttpAnswer, type SpendConnector, type SpendPullRequest, type SpendReport } from './spend.types';

export const GOOGLE_ADS_BASE_URL = 'https://googleads.googleapis.com';
/** Google's OAuth 2.0 token endpoint host (adPlatformUrls.google_oauth overrides it). */
export const GOOGLE_OAUTH_URL = 'https://oauth2.googleapis.com';
export const GOOGLE_OAUTH_URL_KEY = 'google_oauth';
/** A refreshed access token is used until this long before Google says it expires. */
const TOKEN_MARGIN_MS = 5 * 60_000;

/** Access tokens minted from refresh tokens, by token endpoint and a hash of the grant (never the grant itself). */
const minted = new Map<string, { token: string; until: number }>();

/**
 * The access token to send: with refresh_token, client_id and client_secret, one minted at Google's
 * token endpoint (POST /token, grant_type=refresh_token; access tokens last an hour) and reused
 * until shortly before it expires; else the stored access_token as is. A refused grant
 * (invalid_grant: expired or revoked) is a non-retryable ProviderError naming Google's reason.
 */
export async function googleAccessToken(credentials: Credentials, tokenBase: string, signal: AbortSignal, forceNew = false): Promise<string> {
  const { refresh_token: refresh, client_id: clientId, client_secret: secret } = credentials;
  if (!refresh || !clientId || !secret) {
    if (!credentials['access_token']) throw new ProviderError('Google Ads credentials need access_token, or refresh_token with client_id and client_secret', null, false);
    return credentials['access_token'];
  }
  const key = `${tokenBase}|${createHash('sha256').update(`${clientId}\u001f${refresh}`).digest('hex')}`;
  const cached = minted.get(key);
  if (cached && !forceNew && cached.until > Date.now()) return cached.token;
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId, client_secret: secret });
  const answer = await callWithRetry(
    () => httpCall(`${tokenBase.replace(/\/$/, '')}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString(), signal }),
    (a) => {
      if (a.status >= 200 && a.status < 300 && typeof (a.body as { access_token?: unknown } | null)?.access_token === 'string') return null;
      const error = (a.body ?? {}) as { error?: string; error_description?: string };
      return new ProviderError(`Google OAuth ${a.status} ${error.error ?? ''}: ${error.error_description ?? a.text.slice(0, 200)}`.replace(/\s+/g, ' '), a.status, a.status === 429 || a.status >= 500, retryAfterOf(a.headers));
    },
    { signal, maxWaitMs: 10_000 },
  );
  const granted = answer.body as { access_token: string; expires_in?: number };
  minted.set(key, { token: granted.access_token, until: Date.now() + Math.max(0, (granted.expires_in ?? 3600) * 1000 - TOKEN_MARGIN_MS) });
  return granted.access_token;
}

interface GoogleAdsError {
  errorCode?: Record<string, string>;
  message?: string;
  details?: { quotaErrorDetails?: { retryDelay?: string } };
}
interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: { errors?: GoogleAdsError[] }[];
}
type GoogleRow = Record<string, Record<string, unknown> | undefined>;

const RETRYABLE = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'ABORTED']);

/** The levels pulled and the GAQL resource each comes from. */
const LEVELS = [
  { level: 'campaign', resource: 'campaign', fields: [] },
  { level: 'ad_set', resource: 'ad_group', fields: ['ad_group.id', 'ad_group.name'] },
  { level: 'ad', resource: 'ad_group_ad', fields: ['ad_group.id', 'ad_group.name', 'ad_group_ad.ad.id', 'ad_group_ad.ad.name'] },
] as const;

const COMMON_FIELDS = [
  'customer.id', 'customer.descriptive_name', 'customer.currency_code',
  'campaign.id', 'campaign.name', 'campaign.advertising_channel_type', 'segments.date',
  'metrics.cost_micros', 'metrics.impressions', 'metrics.clicks', 'metrics.conversions', 'metrics.conversions_value',
];

export function gaqlQuery(resource: string, extra: readonly string[], from: string, to: string): string {
  return `SELECT ${[...COMMON_FIELDS, ...extra].join(', ')} FROM ${resource} WHERE segments.date BETWEEN '${from}' AND '${to}'`;
}

function errorOf(status: GoogleStatus | undefined, httpStatus: number, headers: Headers, fallback: string): ProviderError {
  const first = (status?.details ?? []).flatMap((d) => d.errors ?? [])[0];
  const code = Object.values(first?.errorCode ?? {})[0];
  const reason = [status?.status, code].filter(Boolean).join(' ');
  const message = `Google Ads ${httpStatus}${reason ? ` ${reason}` : ''}: ${first?.message ?? status?.message ?? fallback}`;
  const retryable = httpStatus === 429 || httpStatus >= 500 || RETRYABLE.has(status?.status ?? '');
  const asked = retryAfterOf(headers) ?? parseDuration(first?.details?.quotaErrorDetails?.retryDelay);
  return new ProviderError(message.replace(/\s+/g, ' ').slice(0, 500), httpStatus, retryable, asked);
}

function check(answer: HttpAnswer): ProviderError | null {
  if (answer.status >= 200 && answer.status < 300) {
    if (!Array.isArray(answer.body)) return new ProviderError('Google Ads answered searchStream with something other than a JSON array', answer.status, true);
    const failed = (answer.body as { error?: GoogleStatus }[]).find((b) => b && b.error);
    return failed ? errorOf(failed.error, failed.error?.code === 8 ? 429 : 500, answer.headers, 'the stream failed') : null;
  }
  const status = Array.isArray(answer.body) ? (answer.body as { error?: GoogleStatus }[])[0]?.error : (answer.body as { error?: GoogleStatus } | null)?.error;
  return errorOf(status, answer.status, answer.headers, answer.text.slice(0, 200));
}

export const googleAdsSpend: SpendConnector = {
  platform: 'google_ads',
  checkSettings(settings) {
    return digitsSetting(settings, 'customer_id', /-/g) === null ? 'setting "customer_id" (the Google Ads customer id, digits, dashes allowed) is required to pull spend' : null;
  },
  async pull(request: SpendPullRequest): Promise<SpendReport> {
    const { credentials, settings, window } = request;
    const customerId = digitsSetting(settings, 'customer_id', /-/g)!;
    const loginCustomerId = digitsSetting(settings, 'login_customer_id', /-/g);
    const tokenBase = request.urls?.[GOOGLE_OAUTH_URL_KEY] ?? GOOGLE_OAUTH_URL;
    const headers: Record<string, string> = { authorization: `Bearer ${await googleAccessToken(credentials, tokenBase, request.signal)}`, 'content-type': 'application/json' };
    if (credentials['developer_token']) headers['developer-token'] = credentials['developer_token'];
    if (loginCustomerId) headers['login-customer-id'] = loginCustomerId;
    const version = apiVersion('google_ads', text(settings['api_version']));
    const url = `${request.baseUrl.replace(/\/$/, '')}/${version}/customers/${customerId}/googleAds:searchStream`;

    let currency: string | null = null;
    let accountName: string | null = null;
    let requests = 0;
    const rows: AdReportRowV1[] = [];
    for (const { level, resource, fields } of LEVELS) {
      const query = gaqlQuery(resource, fields, window.from, window.to);
      let reminted = false;
      const answer = await callWithRetry(
        async () => {
          requests += 1;
          const first = await httpCall(url, { method: 'POST', headers, body: JSON.stringify({ query }), signal: request.signal });
          // A minted token Google no longer takes (revoked early, clock skew): mint once more and repeat.
          if (first.status !== 401 || reminted || !credentials['refresh_token']) return first;
          reminted = true;
          headers['authorization'] = `Bearer ${await googleAccessToken(credentials, tokenBase, request.signal, true)}`;
          requests += 1;
          return httpCall(url, { method: 'POST', headers, body: JSON.stringify({ query }), signal: request.signal });
        },
        check,
        { signal: request.signal, maxWaitMs: request.maxWaitMs },
      );
      for (const batch of answer.body as { results?: GoogleRow[] }[]) {
        for (const r of batch.results ?? []) {
          const customer = r['customer'] ?? {};
          const campaign = r['campaign'] ?? {};
          const adGroup = r['adGroup'] ?? {};
          const ad = (r['adGroupAd']?.['ad'] ?? {}) as Record<string, unknown>;
          const metrics = r['metrics'] ?? {};
          const date = text(r['segments']?.['date']);
          currency ??= text(customer['currencyCode']);
          accountName ??= text(customer['descriptiveName']);
          if (!date) continue;
          const campaignId = text(campaign['id']);
          const adGroupId = text(adGroup['id']);
          const adId = text(ad['id']);
          const itemId = level === 'campaign' ? campaignId : level === 'ad_set' ? adGroupId : adId;
          if (!itemId) continue;
          const campaignType = text(campaign['advertisingChannelType']);
          rows.push(reportRow({
            date,
            level,
            item_id: itemId,
            item_name: level === 'campaign' ? text(campaign['name']) : level === 'ad_set' ? text(adGroup['name']) : text(ad['name']),
            campaign_id: campaignId,
            campaign_name: text(campaign['name']),
            campaign_type: campaignType ? campaignType.toLowerCase() : null,
            ad_set_id: level === 'campaign' ? undefined : adGroupId,
            ad_set_name: level === 'campaign' ? undefined : text(adGroup['name']),
            ad_id: level === 'ad' ? adId : undefined,
            ad_name: level === 'ad' ? text(ad['name']) : undefined,
            spend: money(num(metrics['costMicros']) / 1e6),
            impressions: Math.round(num(metrics['impressions'])),
            clicks: Math.round(num(metrics['clicks'])),
            platform_conversions: num(metrics['conversions']),
            platform_revenue: money(num(metrics['conversionsValue'])),
          } as AdReportRowV1));
        }
      }
    }
    if (rows.length > 0 && !currency) throw new ProviderError('Google Ads returned rows without customer.currency_code', 200, false);
    return { account_id: customerId, account_name: accountName, currency: currency ?? 'USD', rows, requests };
  },
};
