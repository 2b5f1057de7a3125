// The documented example payloads in test/fixtures/<api>/ (written after each platform's public
// reference, see the READMEs there) held against three things:
//   1. the connector code: every response fixture is served from a small local HTTP server at the
//      connector's base URL, and the real exported connector function reads it as if the platform
//      had answered (rows, dates, money, ids, paging, error → ProviderError and its retry verdict);
//   2. the requests our upload code builds: same keys and nesting as the documented request
//      examples (values differ by design, so only the structure is compared);
//   3. the stand-in servers in test/*-server.ts the other suites use: one request each, and their
//      answer must have the documented structure.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { startAdPlatformsServer } from '../../test/ad-platforms-server';
import { startDataManagerServer } from '../../test/google-data-manager-server';
import { startGoogleAdsSpendServer } from '../../test/google-ads-spend-server';
import { startLinkedInAnalyticsServer } from '../../test/linkedin-analytics-server';
import { startLinkedinConversionsServer } from '../../test/linkedin-conversions-server';
import { startMetaInsightsServer } from '../../test/meta-insights-server';
import type { PlannedSend } from '../writeback/conversion';
import { dataManagerBody, ingestEvents, parseDataManagerSettings, retrieveRequestStatus } from '../writeback/google-data-manager';
import { linkedinUploadBody, parseLinkedinAdsSettings, sendConversionEvents } from '../writeback/linkedin-ads';
import { metaEventsBody, parseMetaAdsSettings, sendServerEvents } from '../writeback/meta-ads';
import { gaqlQuery, googleAdsSpend } from './spend/google-ads-spend';
import { linkedinAnalytics } from './spend/linkedin-analytics';
import { metaInsights } from './spend/meta-insights';
import type { SpendPullRequest } from './spend/spend.types';
import { providerError } from '../../test/provider-error';

const FIXTURES = join(__dirname, '..', '..', 'test', 'fixtures');
const fixture = (api: string, file: string): unknown => JSON.parse(readFileSync(join(FIXTURES, api, file), 'utf8'));

// --- structure comparison --------------------------------------------------------------------

type Kind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
const kindOf = (v: unknown): Kind => (v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as Kind));
const isRecord = (v: unknown): v is Record<string, unknown> => kindOf(v) === 'object';

/** One sample holding every key seen across `values` (array elements differ in optional keys). */
function merged(values: unknown[]): unknown {
  if (values.length === 0) return undefined;
  if (values.every(isRecord)) {
    const keys = [...new Set(values.flatMap((v) => Object.keys(v)))];
    return Object.fromEntries(keys.map((k) => [k, merged(values.filter((v) => k in v).map((v) => v[k]))]));
  }
  if (values.every(Array.isArray)) {
    const all = values.flat();
    return all.length === 0 ? [] : [merged(all)];
  }
  return values[0];
}

interface ShapeDiff {
  /** Keys the payload has that the documented example does not. */
  extra: string[];
  /** Keys of the documented example the payload leaves out. */
  missing: string[];
  /** Same key, different JSON type (a string number where the docs show a number, ...). */
  types: string[];
}

function shapeDiff(actual: unknown, documented: unknown): ShapeDiff {
  const out: ShapeDiff = { extra: [], missing: [], types: [] };
  const walk = (a: unknown, d: unknown, path: string): void => {
    if (kindOf(a) !== kindOf(d)) {
      out.types.push(`${path}: ${kindOf(a)}, documented ${kindOf(d)}`);
      return;
    }
    if (isRecord(a) && isRecord(d)) {
      for (const key of Object.keys(d)) if (!(key in a)) out.missing.push(`${path}.${key}`);
      for (const key of Object.keys(a)) if (!(key in d)) out.extra.push(`${path}.${key}`);
      for (const key of Object.keys(a)) if (key in d) walk(a[key], d[key], `${path}.${key}`);
    } else if (Array.isArray(a) && Array.isArray(d) && a.length > 0 && d.length > 0) {
      walk(merged(a), merged(d), `${path}[]`);
    }
  };
  walk(actual, documented, '$');
  return { extra: out.extra.sort(), missing: out.missing.sort(), types: out.types.sort() };
}

/** For error bodies: fields are optional, so only invented keys and wrong types count. */
const undocumented = (actual: unknown, documented: unknown) => {
  const { extra, types } = shapeDiff(actual, documented);
  return { extra, types };
};

// --- a local server answering with fixtures ----------------------------------------------------

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
interface Answer {
  status: number;
  body?: unknown;
}

async function fixtureServer(route: (req: Seen, base: string) => Answer) {
  const seen: Seen[] = [];
  let base = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(request);
      const answer = route(request, base);
      if (answer.body === undefined) {
        res.writeHead(answer.status);
        res.end();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type FixtureServer = Awaited<ReturnType<typeof fixtureServer>>;

const WINDOW = { from: '2026-11-24', to: '2026-11-25' };
const pull = (baseUrl: string, credentials: Record<string, string>, settings: Record<string, unknown>): SpendPullRequest => ({
  credentials,
  settings,
  baseUrl,
  window: WINDOW,
  signal: new AbortController().signal,
  // No waiting: a retryable error comes straight back with its retry hint.
  maxWaitMs: 0,
});

function writeback(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    conversion_id: 'c0ffee00-0000-4000-8000-000000000001',
    email: 'Ada.Example@Example.com',
    phone: '+49 30 1234567',
    ad_consent: 'granted',
    click_ids: { gclid: 'Sl-TestGclid_0001', fbclid: 'SlTestFbclid0002', fbp: 'fb.1.1795944000000.1234567890', li_fat_id: 'sl-test-li-fat-0001' },
    ...overrides,
  };
}

// ================================================================================================

describe('Google Ads searchStream fixtures', () => {
  const api = 'google-ads-search-stream';
  let server: FixtureServer;
  let failWith: Answer | null = null;
  beforeAll(async () => {
    server = await fixtureServer((req) => {
      if (failWith) return failWith;
      const resource = /FROM (\w+)/.exec((JSON.parse(req.body) as { query: string }).query)?.[1];
      const file = resource === 'campaign' ? 'search-stream-campaign-response.json' : resource === 'ad_group' ? 'search-stream-ad-group-response.json' : 'search-stream-empty-response.json';
      return { status: 200, body: fixture(api, file) };
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    failWith = null;
    server.seen.length = 0;
  });
  const credentials = { access_token: 'ya29.test', developer_token: 'dev-token' };

  it('reads the documented stream: batches, micros as account currency, int64 strings, an empty batch', async () => {
    const report = await googleAdsSpend.pull(pull(server.url, credentials, { customer_id: '481-516-2342' }));
    expect(report).toMatchObject({ account_id: '4815162342', account_name: 'Sightline Demo GmbH', currency: 'EUR', requests: 3 });
    expect(report.rows).toEqual([
      { date: '2026-11-24', level: 'campaign', item_id: '700100', item_name: 'winter_boots', campaign_id: '700100', campaign_name: 'winter_boots', campaign_type: 'search', spend: 12.34, impressions: 1500, clicks: 75, platform_conversions: 3, platform_revenue: 150.5 },
      { date: '2026-11-25', level: 'campaign', item_id: '700200', item_name: 'brand_terms', campaign_id: '700200', campaign_name: 'brand_terms', campaign_type: 'performance_max', spend: 0.99, impressions: 210, clicks: 9, platform_conversions: 0.5, platform_revenue: 20 },
      { date: '2026-11-24', level: 'ad_set', item_id: '880011', item_name: 'Boots - exact', campaign_id: '700100', campaign_name: 'winter_boots', campaign_type: 'search', ad_set_id: '880011', ad_set_name: 'Boots - exact', spend: 12.34, impressions: 1500, clicks: 75, platform_conversions: 3, platform_revenue: 150.5 },
    ]);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill('POST /v26/customers/4815162342/googleAds:searchStream'));
    expect(server.seen[0]!.headers['developer-token']).toBe('dev-token');
  });

  it('sends a request body with the documented keys', async () => {
    await googleAdsSpend.pull(pull(server.url, credentials, { customer_id: '4815162342' }));
    const documented = fixture(api, 'search-stream-request.json');
    for (const r of server.seen) expect(shapeDiff(JSON.parse(r.body), documented)).toEqual({ extra: [], missing: [], types: [] });
  });

  it('turns the documented PERMISSION_DENIED body into a permanent error with Google\'s reason', async () => {
    failWith = { status: 403, body: fixture(api, 'error-permission-denied.json') };
    const error = await providerError(googleAdsSpend.pull(pull(server.url, credentials, { customer_id: '4815162342' })));
    expect(error.status).toBe(403);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('PERMISSION_DENIED USER_PERMISSION_DENIED');
    expect(error.message).toContain('cannot read customer 4815162342');
  });

  it('turns the documented quota body into a retryable error with the quotaErrorDetails delay', async () => {
    failWith = { status: 429, body: fixture(api, 'error-quota-exhausted.json') };
    const error = await providerError(googleAdsSpend.pull(pull(server.url, credentials, { customer_id: '4815162342' })));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(42_000);
    expect(error.message).toContain('RESOURCE_EXHAUSTED RESOURCE_TEMPORARILY_EXHAUSTED');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const standIn = await startGoogleAdsSpendServer({
      customers: { '4815162342': { currency: 'EUR', name: 'Demo', ads: [{ date: '2026-11-24', campaign: { id: '1', name: 'c' }, adSet: { id: '2', name: 's' }, ad: { id: '3', name: 'a' }, cost: 1.5, impressions: 10, clicks: 1, conversions: 1, conversionValue: 5 }] } },
    });
    try {
      const call = (customer: string) =>
        fetch(`${standIn.url}/v26/customers/${customer}/googleAds:searchStream`, {
          method: 'POST',
          headers: { authorization: 'Bearer google-access-token', 'developer-token': 'google-developer-token', 'content-type': 'application/json' },
          body: JSON.stringify({ query: gaqlQuery('campaign', [], WINDOW.from, WINDOW.to) }),
        });
      const ok = await call('4815162342');
      expect(ok.status).toBe(200);
      expect(shapeDiff(await ok.json(), fixture(api, 'search-stream-campaign-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const denied = await call('999');
      expect(denied.status).toBe(403);
      expect(undocumented(await denied.json(), fixture(api, 'error-permission-denied.json'))).toEqual({ extra: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});

describe('Meta insights fixtures', () => {
  const api = 'meta-insights';
  let server: FixtureServer;
  let failWith: Answer | null = null;
  beforeAll(async () => {
    server = await fixtureServer((req, base) => {
      if (failWith) return failWith;
      const url = new URL(req.url, base);
      if (url.searchParams.get('level') !== 'campaign') return { status: 200, body: fixture(api, 'insights-empty.json') };
      if (url.searchParams.get('after') === 'c2wtYWZ0ZXItMQ') return { status: 200, body: fixture(api, 'insights-page-2.json') };
      // paging.next names Graph's host in the docs; here it points back at this server.
      return { status: 200, body: JSON.parse(JSON.stringify(fixture(api, 'insights-page-1.json')).replace('https://graph.facebook.com', base)) };
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    failWith = null;
    server.seen.length = 0;
  });

  it('reads the documented pages: spend strings, day rows, conversions from actions, paging.next followed', async () => {
    const report = await metaInsights.pull(pull(server.url, { access_token: 'meta-token' }, { ad_account_id: 'act_900700500' }));
    expect(report).toMatchObject({ account_id: '900700500', account_name: 'Sightline Demo Shop', currency: 'EUR', requests: 4 });
    expect(report.rows).toEqual([
      { date: '2026-11-24', level: 'campaign', item_id: '120210000000000001', item_name: 'winter_boots_prospecting', campaign_id: '120210000000000001', campaign_name: 'winter_boots_prospecting', campaign_type: 'outcome_sales', spend: 45.67, impressions: 3210, clicks: 88, platform_conversions: 3, platform_revenue: 199.9 },
      { date: '2026-11-25', level: 'campaign', item_id: '120210000000000001', item_name: 'winter_boots_prospecting', campaign_id: '120210000000000001', campaign_name: 'winter_boots_prospecting', campaign_type: 'outcome_sales', spend: 12, impressions: 900, clicks: 21, platform_conversions: 0, platform_revenue: 0 },
    ]);
    expect(new URL(server.seen[1]!.url, server.url).searchParams.get('after')).toBe('c2wtYWZ0ZXItMQ');
    expect(server.seen[0]!.url.startsWith('/v25.0/act_900700500/insights?')).toBe(true);
  });

  it('turns the documented throttle body (80004, is_transient) into a retryable error', async () => {
    failWith = { status: 400, body: fixture(api, 'error-throttled.json') };
    const error = await providerError(metaInsights.pull(pull(server.url, { access_token: 'meta-token' }, { ad_account_id: '900700500' })));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(5 * 60_000);
    expect(error.message).toContain('code 80004/2446079');
    expect(error.message).toContain("the ad account's insights call limit is reached");
    expect(error.message).toContain('SlTraceInsights429');
  });

  it('turns the documented invalid-token body (190/460) into a permanent error', async () => {
    failWith = { status: 400, body: fixture(api, 'error-invalid-token.json') };
    const error = await providerError(metaInsights.pull(pull(server.url, { access_token: 'meta-token' }, { ad_account_id: '900700500' })));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('code 190/460: Error validating access token');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const ad = { campaign: { id: '1', name: 'c' }, adSet: { id: '2', name: 's' }, ad: { id: '3', name: 'a' }, cost: 2, impressions: 10, clicks: 1, conversions: 1, conversionValue: 9 };
    const standIn = await startMetaInsightsServer({ accounts: { '900700500': { name: 'Demo', currency: 'EUR', ads: [{ date: '2026-11-24', ...ad }, { date: '2026-11-25', ...ad }] } } });
    try {
      // The fields of the documented campaign-level row (which ids Meta fills depends on the level).
      const fields = Object.keys((fixture(api, 'insights-page-1.json') as { data: Record<string, unknown>[] }).data[0]!);
      const query = new URLSearchParams({ level: 'campaign', time_increment: '1', time_range: JSON.stringify({ since: WINDOW.from, until: WINDOW.to }), fields: fields.join(','), limit: '1' });
      const call = (token: string) => fetch(`${standIn.url}/v25.0/act_900700500/insights?${query}`, { headers: { authorization: `Bearer ${token}` } });
      const ok = await call('meta-access-token');
      expect(ok.status).toBe(200);
      expect(shapeDiff(await ok.json(), fixture(api, 'insights-page-1.json'))).toEqual({ extra: [], missing: [], types: [] });
      const refused = await call('wrong');
      expect(refused.status).toBe(400);
      expect(undocumented(await refused.json(), fixture(api, 'error-invalid-token.json'))).toEqual({ extra: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});

describe('LinkedIn adAnalytics fixtures', () => {
  const api = 'linkedin-ad-analytics';
  let server: FixtureServer;
  let failWith: Answer | null = null;
  beforeAll(async () => {
    server = await fixtureServer((req) => {
      if (failWith) return failWith;
      if (req.url === '/rest/adAccounts/512340001') return { status: 200, body: fixture(api, 'ad-account-response.json') };
      if (req.url.includes('pivot=CAMPAIGN&')) return { status: 200, body: fixture(api, 'analytics-campaign-response.json') };
      if (req.url.includes('pivot=CREATIVE&')) return { status: 200, body: fixture(api, 'analytics-creative-response.json') };
      return { status: 404, body: { status: 404, message: 'not a fixture route' } };
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    failWith = null;
    server.seen.length = 0;
  });
  const settings = { ad_account_id: 'urn:li:sponsoredAccount:512340001' };

  it('reads the documented elements: dateRange objects, decimal-string cost, pivot URNs', async () => {
    const report = await linkedinAnalytics.pull(pull(server.url, { access_token: 'li-token' }, settings));
    expect(report).toMatchObject({ account_id: '512340001', account_name: 'Sightline Demo Ads', currency: 'EUR', requests: 3 });
    expect(report.rows).toEqual([
      { date: '2026-11-24', level: 'campaign', item_id: '660001', campaign_id: '660001', spend: 123.45, impressions: 2000, clicks: 40, platform_conversions: 3, platform_revenue: 300 },
      { date: '2026-11-25', level: 'campaign', item_id: '660001', campaign_id: '660001', spend: 7.5, impressions: 150, clicks: 2, platform_conversions: 0, platform_revenue: 0 },
      { date: '2026-11-24', level: 'ad', item_id: '770001', ad_id: '770001', spend: 123.45, impressions: 2000, clicks: 40, platform_conversions: 3, platform_revenue: 300 },
    ]);
    expect(server.seen[1]!.headers['linkedin-version']).toBe('202603');
    expect(server.seen[1]!.headers['x-restli-protocol-version']).toBe('2.0.0');
  });

  it('turns the documented 403 body into a permanent error naming LinkedIn\'s code', async () => {
    failWith = { status: 403, body: fixture(api, 'error-access-denied.json') };
    const error = await providerError(linkedinAnalytics.pull(pull(server.url, { access_token: 'li-token' }, settings)));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('LinkedIn 403 ACCESS_DENIED 100: Not enough permissions to access: adAnalytics.FINDER-analytics.20260301');
  });

  it('turns the documented 429 body into a retryable error', async () => {
    failWith = { status: 429, body: fixture(api, 'error-throttled.json') };
    const error = await providerError(linkedinAnalytics.pull(pull(server.url, { access_token: 'li-token' }, settings)));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(5 * 60_000);
    expect(error.message).toContain('TOO_MANY_REQUESTS 101');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const standIn = await startLinkedInAnalyticsServer({
      accounts: { '512340001': { name: 'Demo', currency: 'EUR', ads: [{ date: '2026-11-24', campaign: { id: '1', name: 'c' }, adSet: { id: '2', name: 's' }, ad: { id: '3', name: 'a' }, cost: 2.5, impressions: 10, clicks: 1, conversions: 1, conversionValue: 9 }] } },
    });
    try {
      const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'linkedin-version': '202603', 'x-restli-protocol-version': '2.0.0' });
      const fields = 'dateRange,pivotValues,costInLocalCurrency,impressions,clicks,externalWebsiteConversions,conversionValueInLocalCurrency';
      const url = `${standIn.url}/rest/adAnalytics?q=analytics&pivot=CAMPAIGN&timeGranularity=DAILY&dateRange=(start:(year:2026,month:11,day:24),end:(year:2026,month:11,day:25))`
        + `&accounts=List(${encodeURIComponent('urn:li:sponsoredAccount:512340001')})&fields=${fields}`;
      const ok = await fetch(url, { headers: headers('linkedin-access-token') });
      expect(ok.status).toBe(200);
      expect(shapeDiff(await ok.json(), fixture(api, 'analytics-campaign-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const account = await fetch(`${standIn.url}/rest/adAccounts/512340001`, { headers: headers('linkedin-access-token') });
      expect(shapeDiff(await account.json(), fixture(api, 'ad-account-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const refused = await fetch(url, { headers: headers('wrong') });
      expect(refused.status).toBe(401);
      expect(shapeDiff(await refused.json(), fixture(api, 'error-access-denied.json'))).toEqual({ extra: [], missing: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});

describe('Google Data Manager fixtures', () => {
  const api = 'google-data-manager';
  const AT = new Date('2026-11-24T09:30:00.000Z');
  const sends: PlannedSend[] = [
    { key: 'conversion', outcome: 'conversion', stage: null, conversion_action: null, value: 480.5, currency: 'EUR', at: AT },
    { key: 'stage:deal_won', outcome: 'stage', stage: 'deal_won', conversion_action: null, value: null, currency: null, at: AT },
  ];
  const settings = parseDataManagerSettings({ customer_id: '481-516-2342', conversion_action_id: '6021', login_customer_id: '100-100-1001', default_country: 'DE' });
  let server: FixtureServer;
  let next: Answer = { status: 200 };
  beforeAll(async () => {
    server = await fixtureServer(() => next);
  });
  afterAll(() => server.close());
  const token = { access_token: 'google-token' };

  it('builds an ingest request with the documented keys', () => {
    const body = dataManagerBody(writeback(), sends, settings)!;
    expect(shapeDiff(body, fixture(api, 'ingest-events-request.json'))).toEqual({ extra: [], missing: [], types: [] });
  });

  it('reads the documented ingest answer: the requestId becomes the external id', async () => {
    next = { status: 200, body: fixture(api, 'ingest-events-response.json') };
    const result = await ingestEvents(server.url, token, dataManagerBody(writeback(), sends, settings)!, new AbortController().signal, AT);
    expect(result.externalId).toBe('sl-dm-7f3c2a10-5b44-4e0e-9a51-2d8c61f0a001');
    expect(server.seen.at(-1)!.url).toBe('/v1/events:ingest');
  });

  it('reads the documented request status: per-destination statuses summed, reasons with counts, int64 record counts', async () => {
    next = { status: 200, body: fixture(api, 'request-status-response.json') };
    const summary = await retrieveRequestStatus(server.url, token, 'sl-dm-7f3c2a10-5b44-4e0e-9a51-2d8c61f0a001', new AbortController().signal, AT);
    expect(summary).toEqual({ status: 'PARTIAL_SUCCESS', errors: ['PROCESSING_ERROR_REASON_INVALID_GCLID: 1'], recordCount: 5 });
    expect(server.seen.at(-1)!.url).toBe('/v1/requestStatus:retrieve?requestId=sl-dm-7f3c2a10-5b44-4e0e-9a51-2d8c61f0a001');
  });

  it('turns the documented INVALID_ARGUMENT body into a permanent error naming the field and request', async () => {
    next = { status: 400, body: fixture(api, 'error-invalid-argument.json') };
    const error = await providerError(ingestEvents(server.url, token, dataManagerBody(writeback(), sends, settings)!, new AbortController().signal, AT));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Google Data Manager 400 INVALID_ARGUMENT INVALID_ARGUMENT: Request contains an invalid argument. (events[0].eventTimestamp: Sightline test: the timestamp is missing its time zone.) [request sl-dm-err-0400]');
  });

  it('turns the documented RESOURCE_EXHAUSTED body into a retryable error with the RetryInfo delay', async () => {
    next = { status: 429, body: fixture(api, 'error-quota-exhausted.json') };
    const error = await providerError(retrieveRequestStatus(server.url, token, 'x', new AbortController().signal, AT));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(20_000);
    expect(error.message).toContain('RESOURCE_EXHAUSTED RATE_LIMIT_EXCEEDED');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const r = writeback();
    const standIn = await startDataManagerServer({ eventFailures: { [`${r.conversion_id}:stage:deal_won`]: 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD' } });
    try {
      // Without a login account: the status answer echoes the destinations as sent.
      const plain = parseDataManagerSettings({ customer_id: '4815162342', conversion_action_id: '6021', default_country: 'DE' });
      const ingest = await fetch(`${standIn.url}/v1/events:ingest`, { method: 'POST', headers: { authorization: 'Bearer google-token', 'content-type': 'application/json' }, body: JSON.stringify(dataManagerBody(r, sends, plain)) });
      expect(ingest.status).toBe(200);
      const answer = (await ingest.json()) as { requestId: string };
      expect(shapeDiff(answer, fixture(api, 'ingest-events-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const status = await fetch(`${standIn.url}/v1/requestStatus:retrieve?requestId=${answer.requestId}`, { headers: { authorization: 'Bearer google-token' } });
      expect(shapeDiff(await status.json(), fixture(api, 'request-status-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const refused = await fetch(`${standIn.url}/v1/events:ingest`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      expect(undocumented(await refused.json(), fixture(api, 'error-invalid-argument.json'))).toEqual({ extra: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});

describe('Meta Conversions API fixtures', () => {
  const api = 'meta-capi';
  const settings = parseMetaAdsSettings({ pixel_id: '555000', test_event_code: 'TEST4711' });
  const outcomes = (at: Date) => [{ value: 480.5, currency: 'EUR', at, key: 'conversion' }];
  const AT = new Date('2026-11-27T09:30:00.000Z');
  let server: FixtureServer;
  let next: Answer = { status: 200 };
  beforeAll(async () => {
    server = await fixtureServer(() => next);
  });
  afterAll(() => server.close());

  it('builds an events request with the documented keys', () => {
    expect(shapeDiff(metaEventsBody(writeback(), outcomes(AT), settings), fixture(api, 'events-request.json'))).toEqual({ extra: [], missing: [], types: [] });
  });

  it('reads the documented success answer and sends the token in the body', async () => {
    next = { status: 200, body: fixture(api, 'events-response.json') };
    const result = await sendServerEvents(server.url, { access_token: 'meta-token' }, settings, metaEventsBody(writeback(), outcomes(AT), settings)!, new AbortController().signal, AT);
    expect(result).toEqual({ detail: 'sent to Meta pixel 555000 as Purchase (fbtrace SlTraceCapi0001)', externalId: 'c0ffee00-0000-4000-8000-000000000001' });
    const sent = server.seen.at(-1)!;
    expect(sent.url).toBe('/v25.0/555000/events');
    const { access_token: token, ...payload } = JSON.parse(sent.body) as Record<string, unknown>;
    expect(token).toBe('meta-token');
    expect(shapeDiff(payload, fixture(api, 'events-request.json'))).toEqual({ extra: [], missing: [], types: [] });
  });

  it('refuses an answer that received fewer events than sent', async () => {
    next = { status: 200, body: fixture(api, 'events-response.json') };
    const two = metaEventsBody(writeback(), [...outcomes(AT), { value: null, currency: null, at: AT, key: 'stage:mql' }], settings)!;
    const error = await providerError(sendServerEvents(server.url, { access_token: 'meta-token' }, settings, two, new AbortController().signal, AT));
    expect(error.message).toBe('Meta received 1 of 2 events');
  });

  it('turns the documented throttle body (code 17) into a retryable error with Meta\'s user message', async () => {
    next = { status: 400, body: fixture(api, 'error-throttled.json') };
    const error = await providerError(sendServerEvents(server.url, { access_token: 'meta-token' }, settings, metaEventsBody(writeback(), outcomes(AT), settings)!, new AbortController().signal, AT));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('Meta 400 code 17/2446079: Sightline test: too many requests from this app; try again later. (fbtrace_id SlTraceCapi0017)');
  });

  it('turns the documented invalid-parameter body into a permanent error', async () => {
    next = { status: 400, body: fixture(api, 'error-invalid-parameter.json') };
    const error = await providerError(sendServerEvents(server.url, { access_token: 'meta-token' }, settings, metaEventsBody(writeback(), outcomes(AT), settings)!, new AbortController().signal, AT));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('code 100/2804003: Sightline test: the event_time is more than seven days');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const standIn = await startAdPlatformsServer();
    try {
      // The stand-in takes events up to 7 days old: an event an hour ago.
      const body = metaEventsBody(writeback(), outcomes(new Date(Date.now() - 3600_000)), settings)!;
      const call = (token: string) => fetch(`${standIn.url}/v25.0/555000/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, access_token: token }) });
      const ok = await call('meta-token');
      expect(ok.status).toBe(200);
      expect(shapeDiff(await ok.json(), fixture(api, 'events-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const refused = await call('wrong');
      expect(refused.status).toBe(400);
      expect(undocumented(await refused.json(), fixture(api, 'error-invalid-parameter.json'))).toEqual({ extra: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});

describe('LinkedIn Conversions API fixtures', () => {
  const api = 'linkedin-conversions';
  const settings = parseLinkedinAdsSettings({ conversion_rule_id: '104012' });
  const AT = new Date('2026-11-27T09:30:00.000Z');
  const outcomes = (at: Date) => [
    { value: 480.5, currency: 'EUR', at, key: 'conversion' },
    { value: null, currency: null, at: new Date(at.getTime() + 3600_000), key: 'stage:mql' },
  ];
  let server: FixtureServer;
  let next: Answer = { status: 201 };
  beforeAll(async () => {
    server = await fixtureServer(() => next);
  });
  afterAll(() => server.close());

  it('builds batch and single requests with the documented keys (userInfo is documented, not sent)', () => {
    const batch = linkedinUploadBody(writeback(), outcomes(AT), settings)!;
    expect(shapeDiff(batch, fixture(api, 'conversion-events-batch-request.json'))).toEqual({ extra: [], missing: ['$.elements[].user.userInfo'], types: [] });
    expect(shapeDiff(batch.elements[0], fixture(api, 'conversion-event-request.json'))).toEqual({ extra: [], missing: ['$.user.userInfo'], types: [] });
  });

  it('reads the documented batch answer (every element 201) and sends BATCH_CREATE', async () => {
    next = { status: 200, body: fixture(api, 'conversion-events-batch-response.json') };
    const result = await sendConversionEvents(server.url, { access_token: 'li-token' }, settings, '202603', linkedinUploadBody(writeback(), outcomes(AT), settings)!, new AbortController().signal, AT);
    expect(result).toEqual({ detail: 'sent to LinkedIn conversion rule 104012 (Linkedin-Version 202603): 2 events', externalId: 'c0ffee00-0000-4000-8000-000000000001' });
    const sent = server.seen.at(-1)!;
    expect(sent.url).toBe('/rest/conversionEvents');
    expect(sent.headers['x-restli-method']).toBe('BATCH_CREATE');
  });

  it('reads the documented partial answer as a refusal naming the failed element', async () => {
    next = { status: 200, body: fixture(api, 'conversion-events-batch-partial-response.json') };
    const error = await providerError(sendConversionEvents(server.url, { access_token: 'li-token' }, settings, '202603', linkedinUploadBody(writeback(), outcomes(AT), settings)!, new AbortController().signal, AT));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('1 of 2 events refused; LinkedIn element 1: 422: ERROR :: /elements/1/conversionHappenedAt :: Sightline test: the conversion happened more than 90 days ago');
  });

  it('reads the documented single-event 201 with an empty body', async () => {
    next = { status: 201 };
    const single = linkedinUploadBody(writeback(), outcomes(AT).slice(0, 1), settings)!;
    const result = await sendConversionEvents(server.url, { access_token: 'li-token' }, settings, '202603', single, new AbortController().signal, AT);
    expect(result.externalId).toBe('c0ffee00-0000-4000-8000-000000000001');
    expect(shapeDiff(JSON.parse(server.seen.at(-1)!.body), fixture(api, 'conversion-event-request.json'))).toEqual({ extra: [], missing: ['$.user.userInfo'], types: [] });
  });

  it('turns the documented 401 body into a permanent error with LinkedIn\'s codes', async () => {
    next = { status: 401, body: fixture(api, 'error-invalid-token.json') };
    const single = linkedinUploadBody(writeback(), outcomes(AT).slice(0, 1), settings)!;
    const error = await providerError(sendConversionEvents(server.url, { access_token: 'li-token' }, settings, '202603', single, new AbortController().signal, AT));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('LinkedIn 401 (INVALID_ACCESS_TOKEN, serviceErrorCode 65600): Invalid access token');
  });

  it('the stand-in answers in the documented shapes', async () => {
    const standIn = await startLinkedinConversionsServer();
    try {
      const body = linkedinUploadBody(writeback(), outcomes(new Date(Date.now() - 2 * 3600_000)), settings)!;
      // The second element happened too long ago: the stand-in refuses it inside the batch.
      body.elements[1]!.conversionHappenedAt = Date.now() - 100 * 24 * 3600_000;
      const call = (token: string) =>
        fetch(`${standIn.url}/rest/conversionEvents`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'linkedin-version': '202603', 'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'BATCH_CREATE' },
          body: JSON.stringify(body),
        });
      const partial = await call('linkedin-token');
      expect(partial.status).toBe(200);
      expect(shapeDiff(await partial.json(), fixture(api, 'conversion-events-batch-partial-response.json'))).toEqual({ extra: [], missing: [], types: [] });
      const refused = await call('wrong');
      expect(refused.status).toBe(401);
      expect(shapeDiff(await refused.json(), fixture(api, 'error-invalid-token.json'))).toEqual({ extra: [], missing: [], types: [] });
    } finally {
      await standIn.close();
    }
  });
});
