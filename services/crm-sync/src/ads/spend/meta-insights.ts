// Meta spend: the Marketing API insights edge of the ad account,
//   GET {base}/{version}/act_{ad_account_id}/insights?level=campaign|adset|ad&time_increment=1
//       &time_range={"since":..,"until":..}&fields=...&limit=...
// once per level, following paging.next until it is absent. Numbers come as strings; conversions
// are the `actions` entries whose action_type is one of the destination's conversion action types
// (default purchase and lead), their value the matching `action_values`. Every answer carries
// x-business-use-case-usage ({business_id: [{type, call_count, total_cputime, total_time,
// estimated_time_to_regain_access}]}, percentages and minutes): near the limit the pull pauses or
// stops with a retry hint. Errors are Graph errors {error: {message, type, code, error_subcode,
// fbtrace_id}}; 4, 17, 32, 613 and 80000–80014 are throttling, 190 an invalid or expired token,
// 200/10/100 with subcode 33 a missing permission or unknown account.
import type { AdReportRowV1 } from '@sightline/proto-schemas';
import { ProviderError } from '../../connectors/connector';
import { sleep } from '../../connectors/sleep';
import { apiVersion } from '../../api-versions';
import { businessUsage, META_THROTTLE_WAIT_MS, metaFailure } from '../meta-usage';
import { callWithRetry, digitsSetting, httpCall, money, num, reportRow, retryAfterOf, text, type HttpAnswer, type SpendConnector, type SpendPullRequest, type SpendReport } from './spend.types';

export const META_GRAPH_BASE_URL = 'https://graph.facebook.com';
export const DEFAULT_META_CONVERSION_ACTIONS = ['purchase', 'lead'];
const PAGE_LIMIT = 500;
/** Above this share of a business use case limit (percent) the pull pauses before the next call. */
const USAGE_PAUSE_PERCENT = 90;

const LEVELS = [
  { level: 'campaign', meta: 'campaign' },
  { level: 'ad_set', meta: 'adset' },
  { level: 'ad', meta: 'ad' },
] as const;

const FIELDS = [
  'account_id', 'account_name', 'account_currency', 'campaign_id', 'campaign_name', 'adset_id', 'adset_name', 'ad_id', 'ad_name',
  'objective', 'spend', 'impressions', 'clicks', 'actions', 'action_values', 'date_start', 'date_stop',
];

interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_msg?: string;
  fbtrace_id?: string;
}

function check(answer: HttpAnswer): ProviderError | null {
  const error = (answer.body as { error?: GraphError } | null)?.error;
  if (answer.status >= 200 && answer.status < 300 && !error) return null;
  const code = error?.code ?? 0;
  const { throttled, retryable } = metaFailure(answer.status, error);
  const usage = businessUsage(answer.headers);
  const asked = retryAfterOf(answer.headers) ?? (usage.regainMs > 0 ? usage.regainMs : throttled ? META_THROTTLE_WAIT_MS : null);
  const subcode = error?.error_subcode ? `/${error.error_subcode}` : '';
  const reason = error?.error_user_msg ?? error?.message ?? answer.text.slice(0, 200);
  const trace = error?.fbtrace_id ? ` (fbtrace_id ${error.fbtrace_id})` : '';
  return new ProviderError(`Meta ${answer.status} code ${code}${subcode}: ${reason}${trace}`.slice(0, 500), answer.status, retryable, asked);
}

function conversionActions(settings: Record<string, unknown>): string[] {
  const raw = settings['conversion_action_types'];
  return Array.isArray(raw) && raw.every((t) => typeof t === 'string' && t !== '') ? (raw as string[]) : DEFAULT_META_CONVERSION_ACTIONS;
}

function sumActions(list: unknown, types: ReadonlySet<string>): number {
  if (!Array.isArray(list)) return 0;
  let total = 0;
  for (const entry of list as { action_type?: string; value?: unknown }[]) if (entry.action_type && types.has(entry.action_type)) total += num(entry.value);
  return total;
}

/**
 * The next page: paging.next when it points at the API the pull was sent to (the token travels in
 * a header, so never to another host), else the first request with the `after` cursor.
 */
function nextPage(first: URL, paging: { next?: string; cursors?: { after?: string } } | undefined): string | null {
  if (!paging?.next) return null;
  try {
    if (new URL(paging.next).origin === first.origin) return paging.next;
  } catch {
    // Unreadable: fall back to the cursor.
  }
  if (!paging.cursors?.after) return null;
  const url = new URL(first.toString());
  url.searchParams.set('after', paging.cursors.after);
  return url.toString();
}

export const metaInsights: SpendConnector = {
  platform: 'meta_ads',
  checkSettings(settings) {
    return digitsSetting(settings, 'ad_account_id', /^act_/) === null ? 'setting "ad_account_id" (the Meta ad account id, digits, "act_" prefix allowed) is required to pull spend' : null;
  },
  async pull(request: SpendPullRequest): Promise<SpendReport> {
    const { settings, window } = request;
    const accountId = digitsSetting(settings, 'ad_account_id', /^act_/)!;
    const token = request.credentials['access_token'];
    if (!token) throw new ProviderError('Meta credentials need access_token', null, false);
    const version = apiVersion('meta_graph', text(settings['api_version']));
    const types = new Set(conversionActions(settings));
    const headers = { authorization: `Bearer ${token}` };
    let currency: string | null = null;
    let accountName: string | null = null;
    let requests = 0;
    const rows: AdReportRowV1[] = [];

    for (const { level, meta } of LEVELS) {
      const first = new URL(`${request.baseUrl.replace(/\/$/, '')}/${version}/act_${accountId}/insights`);
      first.searchParams.set('level', meta);
      first.searchParams.set('time_increment', '1');
      first.searchParams.set('time_range', JSON.stringify({ since: window.from, until: window.to }));
      first.searchParams.set('fields', FIELDS.join(','));
      first.searchParams.set('limit', String(PAGE_LIMIT));
      let next: string | null = first.toString();
      while (next) {
        const url: string = next;
        const answer = await callWithRetry(
          () => {
            requests += 1;
            return httpCall(url, { headers, signal: request.signal });
          },
          check,
          { signal: request.signal, maxWaitMs: request.maxWaitMs },
        );
        const body = answer.body as { data?: Record<string, unknown>[]; paging?: { next?: string; cursors?: { after?: string } } } | null;
        for (const r of body?.data ?? []) {
          currency ??= text(r['account_currency']);
          accountName ??= text(r['account_name']);
          const date = text(r['date_start']);
          const itemId = text(r[`${meta}_id`]);
          if (!date || !itemId) continue;
          rows.push(reportRow({
            date,
            level,
            item_id: itemId,
            item_name: text(r[`${meta}_name`]),
            campaign_id: text(r['campaign_id']),
            campaign_name: text(r['campaign_name']),
            campaign_type: text(r['objective'])?.toLowerCase() ?? null,
            ad_set_id: level === 'campaign' ? undefined : text(r['adset_id']),
            ad_set_name: level === 'campaign' ? undefined : text(r['adset_name']),
            ad_id: level === 'ad' ? itemId : undefined,
            ad_name: level === 'ad' ? text(r['ad_name']) : undefined,
            spend: money(num(r['spend'])),
            impressions: Math.round(num(r['impressions'])),
            clicks: Math.round(num(r['clicks'])),
            platform_conversions: sumActions(r['actions'], types),
            platform_revenue: money(sumActions(r['action_values'], types)),
          } as AdReportRowV1));
        }
        next = nextPage(first, body?.paging);
        // Close to a business use case limit: wait until Meta says access is back, or stop here
        // with that wait as the retry hint when it is longer than this pull may wait.
        const usage = businessUsage(answer.headers);
        if (next && usage.percent >= USAGE_PAUSE_PERCENT) {
          const waitMs = Math.max(usage.regainMs, 60_000);
          if (waitMs > request.maxWaitMs) throw new ProviderError(`Meta: business use case usage at ${usage.percent}%; pausing for ${Math.round(waitMs / 60_000)} min`, 200, true, waitMs);
          await sleep(waitMs, request.signal);
        }
      }
    }
    if (rows.length > 0 && !currency) throw new ProviderError('Meta insights returned rows without account_currency', 200, false);
    return { account_id: accountId, account_name: accountName, currency: currency ?? 'USD', rows, requests };
  },
};
