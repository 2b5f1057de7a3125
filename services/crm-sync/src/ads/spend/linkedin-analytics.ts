// LinkedIn spend: the Marketing API's ad analytics finder, once per pivot (CAMPAIGN, then CREATIVE),
//   GET {base}/rest/adAnalytics?q=analytics&pivot=CAMPAIGN&timeGranularity=DAILY
//       &dateRange=(start:(year:Y,month:M,day:D),end:(...))&accounts=List(urn%3Ali%3AsponsoredAccount%3A<id>)
//       &fields=dateRange,pivotValues,costInLocalCurrency,impressions,clicks,externalWebsiteConversions,conversionValueInLocalCurrency
// with the mandatory `Linkedin-Version: YYYYMM` and `X-Restli-Protocol-Version: 2.0.0` headers.
// The finder does not page: it answers every element at once, at most 15,000; an answer at that
// cap is taken as cut short and the window is split in halves and asked again. The account's
// currency and name come from GET {base}/rest/adAccounts/{id}. Errors are Rest.li errors
// {status, serviceErrorCode, code, message}; 429 is throttling (daily application and member limits).
import type { AdReportRowV1 } from '@sightline/proto-schemas';
import { ProviderError } from '../../connectors/connector';
import { apiVersion } from '../../api-versions';
import { addDays, callWithRetry, dayCount, digitsSetting, httpCall, money, num, reportRow, retryAfterOf, text, type DayWindow, type HttpAnswer, type SpendConnector, type SpendPullRequest, type SpendReport } from './spend.types';

export const LINKEDIN_BASE_URL = 'https://api.linkedin.com';
/** The most elements the analytics finder answers; a full answer may be cut short. */
export const LINKEDIN_ANALYTICS_CAP = 15_000;
const FIELDS = ['dateRange', 'pivotValues', 'costInLocalCurrency', 'impressions', 'clicks', 'externalWebsiteConversions', 'conversionValueInLocalCurrency'];

const PIVOTS = [
  { level: 'campaign', pivot: 'CAMPAIGN', urn: 'urn:li:sponsoredCampaign:' },
  { level: 'ad', pivot: 'CREATIVE', urn: 'urn:li:sponsoredCreative:' },
] as const;

interface RestliError {
  status?: number;
  serviceErrorCode?: number;
  code?: string;
  message?: string;
}

function check(answer: HttpAnswer): ProviderError | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  const error = (answer.body ?? {}) as RestliError;
  const code = [error.code, error.serviceErrorCode].filter((v) => v !== undefined).join(' ');
  const retryable = answer.status === 429 || answer.status >= 500;
  const asked = retryAfterOf(answer.headers) ?? (answer.status === 429 ? 5 * 60_000 : null);
  return new ProviderError(`LinkedIn ${answer.status}${code ? ` ${code}` : ''}: ${error.message ?? answer.text.slice(0, 200)}`.slice(0, 500), answer.status, retryable, asked);
}

const restliDate = (day: string): string => {
  const [y, m, d] = day.split('-').map(Number);
  return `(year:${y},month:${m},day:${d})`;
};

interface LinkedInDate {
  year?: number;
  month?: number;
  day?: number;
}
const isoDay = (d: LinkedInDate | undefined): string | null =>
  d?.year && d.month && d.day ? `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}` : null;

/** The connector; `cap` is the finder's element limit (a test's stand-in may state a smaller one). */
export const linkedinAnalyticsConnector = (cap = LINKEDIN_ANALYTICS_CAP): SpendConnector => ({
  platform: 'linkedin_ads',
  checkSettings(settings) {
    return digitsSetting(settings, 'ad_account_id', /^urn:li:sponsoredAccount:/) === null
      ? 'setting "ad_account_id" (the LinkedIn ad account id, digits or urn:li:sponsoredAccount:<id>) is required to pull spend'
      : null;
  },
  async pull(request: SpendPullRequest): Promise<SpendReport> {
    const { settings } = request;
    const accountId = digitsSetting(settings, 'ad_account_id', /^urn:li:sponsoredAccount:/)!;
    const token = request.credentials['access_token'];
    if (!token) throw new ProviderError('LinkedIn credentials need access_token', null, false);
    const headers = {
      authorization: `Bearer ${token}`,
      'Linkedin-Version': apiVersion('linkedin_marketing', text(settings['api_version'])),
      'X-Restli-Protocol-Version': '2.0.0',
    };
    const base = request.baseUrl.replace(/\/$/, '');
    let requests = 0;
    const get = (url: string) =>
      callWithRetry(
        () => {
          requests += 1;
          return httpCall(url, { headers, signal: request.signal });
        },
        check,
        { signal: request.signal, maxWaitMs: request.maxWaitMs },
      );

    const account = (await get(`${base}/rest/adAccounts/${accountId}`)).body as { currency?: string; name?: string } | null;
    const currency = text(account?.currency);
    if (!currency) throw new ProviderError(`LinkedIn ad account ${accountId} states no currency`, 200, false);

    const rows: AdReportRowV1[] = [];
    const accounts = `List(${encodeURIComponent(`urn:li:sponsoredAccount:${accountId}`)})`;
    const pullWindow = async (level: 'campaign' | 'ad', pivot: string, urnPrefix: string, window: DayWindow): Promise<void> => {
      const url = `${base}/rest/adAnalytics?q=analytics&pivot=${pivot}&timeGranularity=DAILY`
        + `&dateRange=(start:${restliDate(window.from)},end:${restliDate(window.to)})&accounts=${accounts}&fields=${FIELDS.join(',')}`;
      const body = (await get(url)).body as { elements?: Record<string, unknown>[] } | null;
      const elements = body?.elements ?? [];
      if (elements.length >= cap && dayCount(window) > 1) {
        const half = Math.floor(dayCount(window) / 2);
        await pullWindow(level, pivot, urnPrefix, { from: window.from, to: addDays(window.from, half - 1) });
        await pullWindow(level, pivot, urnPrefix, { from: addDays(window.from, half), to: window.to });
        return;
      }
      for (const e of elements) {
        const date = isoDay((e['dateRange'] as { start?: LinkedInDate } | undefined)?.start);
        const urn = (e['pivotValues'] as unknown[] | undefined)?.find((v): v is string => typeof v === 'string' && v.startsWith(urnPrefix));
        if (!date || !urn) continue;
        const id = urn.slice(urnPrefix.length);
        rows.push(reportRow({
          date,
          level,
          item_id: id,
          campaign_id: level === 'campaign' ? id : undefined,
          ad_id: level === 'ad' ? id : undefined,
          spend: money(num(e['costInLocalCurrency'])),
          impressions: Math.round(num(e['impressions'])),
          clicks: Math.round(num(e['clicks'])),
          platform_conversions: num(e['externalWebsiteConversions']),
          platform_revenue: money(num(e['conversionValueInLocalCurrency'])),
        } as AdReportRowV1));
      }
    };
    for (const { level, pivot, urn } of PIVOTS) await pullWindow(level, pivot, urn, request.window);
    return { account_id: accountId, account_name: text(account?.name), currency, rows, requests };
  },
});

export const linkedinAnalytics = linkedinAnalyticsConnector();
