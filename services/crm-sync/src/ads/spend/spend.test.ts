// Spend pulls as the runner starts crm-sync: embedded PGlite, the in-process bus, a stand-in module
// capturing the ads.report_imported messages crm-sync publishes, the admin API, and local
// stand-ins for Google Ads searchStream, Meta insights and LinkedIn adAnalytics. Accounts are
// connected with PUT /admin/crm/ad-destinations and pulled with POST …/pull; the schedule is set
// never to fire (the scheduled round is called directly where a test needs it).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { defineStandIn, loadConfig, startModules, type Envelope, type RunningProcess, type RunnableModule, type SqlStore } from '@sightline/kit';
import type { AdReportRowV1, AdsReportImportedV1 } from '@sightline/proto-schemas';
import { createCrmSyncModule } from '../../index';
import { startGoogleAdsSpendServer, type AdDay, type GoogleAdsSpendServer } from '../../../test/google-ads-spend-server';
import { startLinkedInAnalyticsServer, type LinkedInAnalyticsServer } from '../../../test/linkedin-analytics-server';
import { startMetaInsightsServer, type MetaInsightsServer } from '../../../test/meta-insights-server';
import { credentialsBox } from '../../connections/credentials';
import { linkedinAnalyticsConnector } from './linkedin-analytics';
import { spendConnectorFor } from './spend.parts';
import { SpendRunner } from './spend-runner';
import { addDays } from './spend.types';

function captureModule(into: Envelope<AdsReportImportedV1>[]): RunnableModule {
  return defineStandIn({
    name: 'capture',
    needs: {},
    async create() {
      return { consumers: { 'ads.report_imported': async (envelope: Envelope) => void into.push(envelope as Envelope<AdsReportImportedV1>) } };
    },
  });
}

const TODAY = new Date().toISOString().slice(0, 10);
const day = (ago: number): string => addDays(TODAY, -ago);

/** Two campaigns, three ads, over the last `days` days; figures vary by day so restatements show. */
function delivery(days: number, prefix: string): AdDay[] {
  const ads: AdDay[] = [];
  for (let ago = 0; ago < days; ago++) {
    const date = day(ago);
    ads.push(
      { date, campaign: { id: `${prefix}c1`, name: 'spring_sale' }, adSet: { id: `${prefix}s1`, name: 'Shoes' }, ad: { id: `${prefix}a1`, name: 'Shoes A' }, cost: 10.5 + ago, impressions: 1000, clicks: 50, conversions: 2, conversionValue: 80 },
      { date, campaign: { id: `${prefix}c1`, name: 'spring_sale' }, adSet: { id: `${prefix}s1`, name: 'Shoes' }, ad: { id: `${prefix}a2`, name: 'Shoes B' }, cost: 4.25, impressions: 400, clicks: 10 },
      { date, campaign: { id: `${prefix}c2`, name: 'brand' }, adSet: { id: `${prefix}s2`, name: 'Brand terms' }, ad: { id: `${prefix}a3`, name: 'Brand A' }, cost: 3, impressions: 300, clicks: 30, conversions: 1, conversionValue: 20 },
    );
  }
  return ads;
}

const waitFor = async <T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

type Json = Record<string, unknown>;

describe('ad spend pulls (embedded crm-sync, local ad platforms)', () => {
  const workspaceId = randomUUID();
  const credentialsKey = 'spend-test-credentials-key-0123456789';
  const messages: Envelope<AdsReportImportedV1>[] = [];
  const logLines: string[] = [];
  let dataDir: string;
  let google: GoogleAdsSpendServer;
  let meta: MetaInsightsServer;
  let linkedin: LinkedInAnalyticsServer;
  let proc: RunningProcess;

  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json & { data: Json } }> => {
    const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json & { data: Json } };
  };
  const sql = (): Promise<SqlStore> => proc.stores.sql('crm_sync');

  const connect = async (websiteId: string, platform: string, credentials: Record<string, string>, settings: Json): Promise<void> => {
    const r = await admin('PUT', `/crm/ad-destinations/${websiteId}/${platform}`, { workspace_id: workspaceId, credentials, settings });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: expect.anything() });
  };
  const googleAccount = (websiteId: string, customerId = '1234567890', token = 'google-access-token') =>
    connect(websiteId, 'google_ads', { access_token: token, developer_token: 'google-developer-token' }, { customer_id: customerId, conversion_action_id: '42', login_customer_id: '999-000-1111' });
  const metaAccount = (websiteId: string, accountId = '555', token = 'meta-access-token') =>
    connect(websiteId, 'meta_ads', { access_token: token }, { pixel_id: '777', ad_account_id: `act_${accountId}` });
  const linkedinAccount = (websiteId: string, accountId = '5080', token = 'linkedin-access-token') =>
    connect(websiteId, 'linkedin_ads', { access_token: token }, { conversion_rule_id: '123', ad_account_id: accountId });

  const pull = (websiteId: string, platform: string, window?: 'cost' | 'conversions') =>
    admin('POST', `/crm/ad-destinations/${websiteId}/${platform}/pull`, window ? { window } : {});

  /** Rows published for the website so far, the newest copy of each (level, item, day). */
  const published = (websiteId: string): Map<string, AdReportRowV1 & { currency: string; account_id: string }> => {
    const rows = new Map<string, AdReportRowV1 & { currency: string; account_id: string }>();
    for (const m of messages.filter((e) => e.website_id === websiteId)) {
      for (const row of m.payload.rows) rows.set(`${m.payload.platform}|${row.level}|${row.item_id}|${row.date}`, { ...row, currency: m.payload.currency, account_id: m.payload.account_id });
    }
    return rows;
  };
  const rowCount = (websiteId: string): number => messages.filter((e) => e.website_id === websiteId).reduce((n, m) => n + m.payload.rows.length, 0);

  const destination = async (websiteId: string, platform: string) =>
    (await (await sql()).query<{ last_pull_at: Date | null; last_pull_rows: number | null; last_pull_error: string | null; next_pull_at: Date | null }>(
      'SELECT last_pull_at, last_pull_rows, last_pull_error, next_pull_at FROM ad_destinations WHERE website_id = $1 AND platform = $2',
      [websiteId, platform],
    )).rows[0]!;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-spend-'));
    google = await startGoogleAdsSpendServer({ batchSize: 4, oauth: { clientId: 'client-1', clientSecret: 'client-secret-1', refreshToken: '1//refresh-1' } });
    meta = await startMetaInsightsServer({ pageSize: 4 });
    linkedin = await startLinkedInAnalyticsServer();
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `spend${Date.now()}`, SIGHTLINE_DEMO: 'off' });
    const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
    const crmSync = createCrmSyncModule({
      credentialsKey,
      adPlatformUrls: { google_ads: google.url, meta_ads: meta.url, linkedin_ads: linkedin.url, google_oauth: google.url },
      syncCron: '0 0 1 1 *',
      adSpendPullCron: '0 0 1 1 *',
    });
    proc = await startModules({ config, modules: [crmSync, captureModule(messages)], logger });
  }, 60_000);

  afterAll(async () => {
    await proc?.stop();
    await Promise.all([google?.close(), meta?.close(), linkedin?.close()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('Google Ads: GAQL searchStream per level → campaign, ad set and ad rows in the account currency', async () => {
    const website = randomUUID();
    google.customers['1234567890'] = { currency: 'EUR', name: 'Shop DE', ads: delivery(40, 'g') };
    await googleAccount(website);
    const r = await pull(website, 'google_ads');
    expect(r.status).toBe(200);
    // First pull: the conversion window (30 days), 3 levels; campaign 2 + ad set 2 + ad 3 rows a day.
    expect(r.body.data).toMatchObject({ status: 'pulled', platform: 'google_ads', account_id: '1234567890', currency: 'EUR', window: { from: day(29), to: TODAY }, rows: 30 * 7 });
    await waitFor('the rows on the bus', () => rowCount(website) === 30 * 7);
    const rows = published(website);
    expect(rows.get(`google_ads|campaign|gc1|${day(2)}`)).toEqual({
      date: day(2), level: 'campaign', item_id: 'gc1', item_name: 'spring_sale', campaign_id: 'gc1', campaign_name: 'spring_sale', campaign_type: 'search',
      spend: 12.5 + 4.25, impressions: 1400, clicks: 60, platform_conversions: 2, platform_revenue: 80, currency: 'EUR', account_id: '1234567890',
    });
    expect(rows.get(`google_ads|ad|ga1|${day(0)}`)).toMatchObject({ level: 'ad', ad_id: 'ga1', ad_name: 'Shoes A', ad_set_id: 'gs1', ad_set_name: 'Shoes', campaign_id: 'gc1', spend: 10.5 });
    expect(rows.get(`google_ads|ad_set|gs2|${day(29)}`)).toMatchObject({ level: 'ad_set', item_name: 'Brand terms', spend: 3 });
    expect(rows.has(`google_ads|ad|ga1|${day(30)}`)).toBe(false);
    const call = google.requests.find((q) => q.status === 200)!;
    expect(call.url).toBe('/v26/customers/1234567890/googleAds:searchStream');
    expect(call.headers).toMatchObject({ authorization: 'Bearer google-access-token', 'developer-token': 'google-developer-token', 'login-customer-id': '9990001111' });
    const status = await destination(website, 'google_ads');
    // next_pull_at: the schedule's next run (set here never to fire within the year).
    expect(status).toMatchObject({ last_pull_rows: 210, last_pull_error: null, next_pull_at: new Date(`${new Date().getFullYear() + 1}-01-01T00:00:00`) });

    // The next pull within a day re-reads the cost window only; a changed past day is restated.
    google.customers['1234567890']!.ads.find((a) => a.date === day(1) && a.ad.id === 'ga2')!.cost = 9.75;
    const again = await pull(website, 'google_ads');
    expect(again.body.data).toMatchObject({ status: 'pulled', window: { from: day(2), to: TODAY }, rows: 3 * 7 });
    await waitFor('the restated rows', () => rowCount(website) === 33 * 7);
    expect(published(website).get(`google_ads|campaign|gc1|${day(1)}`)?.spend).toBe(11.5 + 9.75);
    expect(published(website).get(`google_ads|ad|ga2|${day(1)}`)?.spend).toBe(9.75);
  });

  it('Google Ads: an access token minted from the refresh token, reused until it expires; a revoked grant is a readable status', async () => {
    const website = randomUUID();
    google.customers['5555555555'] = { currency: 'CHF', name: 'Refreshing', ads: delivery(1, 'o') };
    await connect(website, 'google_ads', { refresh_token: '1//refresh-1', client_id: 'client-1', client_secret: 'client-secret-1', developer_token: 'google-developer-token', access_token: 'stale' }, { customer_id: '5555555555', conversion_action_id: '42' });
    const firstPull = await pull(website, 'google_ads');
    expect(firstPull.body.data).toMatchObject({ status: 'pulled', currency: 'CHF', rows: 7 });
    expect((await pull(website, 'google_ads')).body.data).toMatchObject({ status: 'pulled' });
    expect(google.minted).toHaveLength(1);
    const searches = google.requests.filter((q) => q.url.includes('/customers/5555555555/'));
    expect(searches.every((q) => q.headers['authorization'] === `Bearer ${google.minted[0]}`)).toBe(true);
    google.revoke();
    try {
      const refused = await pull(website, 'google_ads');
      expect(refused.body.data).toMatchObject({ status: 'failed', retryable: false, error: 'Google OAuth 400 invalid_grant: Token has been expired or revoked.' });
      expect((await destination(website, 'google_ads')).last_pull_error).toBe('Google OAuth 400 invalid_grant: Token has been expired or revoked.');
    } finally {
      google.revoke(false);
    }
  });

  it('Meta: insights per level with time_increment=1, following paging.next; purchases as conversions', async () => {
    const website = randomUUID();
    meta.accounts['555'] = { name: 'Shop Meta', currency: 'USD', ads: delivery(5, 'm') };
    await metaAccount(website);
    const r = await pull(website, 'meta_ads', 'cost');
    expect(r.body.data).toMatchObject({ status: 'pulled', account_id: '555', currency: 'USD', window: { from: day(2), to: TODAY }, rows: 3 * 7 });
    // 3 levels × 3 days, pages of at most 4 rows: 6, 6 and 9 rows → 2 + 2 + 3 pages.
    expect(r.body.data['requests']).toBe(7);
    await waitFor('the rows on the bus', () => rowCount(website) === 21);
    const rows = published(website);
    expect(rows.get(`meta_ads|ad_set|ms1|${day(1)}`)).toEqual({
      date: day(1), level: 'ad_set', item_id: 'ms1', item_name: 'Shoes', campaign_id: 'mc1', campaign_name: 'spring_sale', campaign_type: 'outcome_sales',
      ad_set_id: 'ms1', ad_set_name: 'Shoes', spend: 11.5 + 4.25, impressions: 1400, clicks: 60, platform_conversions: 2, platform_revenue: 80, currency: 'USD', account_id: '555',
    });
    expect(rows.get(`meta_ads|ad|ma3|${day(0)}`)).toMatchObject({ ad_id: 'ma3', ad_name: 'Brand A', platform_conversions: 1, platform_revenue: 20 });
    const first = meta.requests.find((q) => q.status === 200)!;
    expect(first.url).toMatch(/^\/v25\.0\/act_555\/insights\?level=campaign&time_increment=1&time_range=/);
    expect(first.headers['authorization']).toBe('Bearer meta-access-token');
  });

  it('LinkedIn: adAnalytics per pivot with the mandatory headers; the account currency from adAccounts', async () => {
    const website = randomUUID();
    linkedin.accounts['5080'] = { name: 'Shop B2B', currency: 'GBP', ads: delivery(6, 'l') };
    await linkedinAccount(website);
    const r = await pull(website, 'linkedin_ads', 'conversions');
    // 30-day window, 6 days of data: campaigns 12 elements and creatives 18.
    expect(r.body.data).toMatchObject({ status: 'pulled', account_id: '5080', currency: 'GBP', rows: 12 + 18 });
    await waitFor('the rows on the bus', () => rowCount(website) === 30);
    const rows = published(website);
    expect(rows.get(`linkedin_ads|campaign|lc1|${day(3)}`)).toEqual({
      date: day(3), level: 'campaign', item_id: 'lc1', campaign_id: 'lc1', spend: 13.5 + 4.25, impressions: 1400, clicks: 60, platform_conversions: 2, platform_revenue: 80, currency: 'GBP', account_id: '5080',
    });
    expect(rows.get(`linkedin_ads|ad|la2|${day(5)}`)).toMatchObject({ level: 'ad', ad_id: 'la2', spend: 4.25 });
    const analytics = linkedin.requests.filter((q) => q.url.startsWith('/rest/adAnalytics'));
    expect(analytics.every((q) => q.headers['linkedin-version'] === '202603' && q.headers['x-restli-protocol-version'] === '2.0.0')).toBe(true);
    expect(analytics[0]!.url).toContain('accounts=List(urn%3Ali%3AsponsoredAccount%3A5080)');
    expect(analytics.length).toBe(2);
  });

  it('LinkedIn: an answer at the element cap of the finder is asked again in halves of the window', async () => {
    const stand = await startLinkedInAnalyticsServer({ elementCap: 10, accounts: { '7070': { name: 'Capped', currency: 'EUR', ads: delivery(6, 'k') } } });
    try {
      const report = await linkedinAnalyticsConnector(10).pull({
        credentials: { access_token: 'linkedin-access-token' }, settings: { ad_account_id: 'urn:li:sponsoredAccount:7070' }, baseUrl: stand.url,
        window: { from: day(29), to: TODAY }, signal: AbortSignal.timeout(10_000), maxWaitMs: 1000,
      });
      expect(report.rows.filter((r) => r.level === 'campaign')).toHaveLength(12);
      expect(report.rows.filter((r) => r.level === 'ad')).toHaveLength(18);
      expect(new Set(report.rows.map((r) => `${r.level}|${r.item_id}|${r.date}`)).size).toBe(30);
      expect(stand.requests.filter((q) => q.url.startsWith('/rest/adAnalytics')).length).toBeGreaterThan(2);
    } finally {
      await stand.close();
    }
  });

  it('a wrong credential, a revoked token and an account without access end in a readable status, not a crash', async () => {
    const website = randomUUID();
    google.customers['2222222222'] = { currency: 'EUR', name: 'Other', ads: delivery(2, 'x') };
    await googleAccount(website, '2222222222', 'wrong-token');
    const wrong = await pull(website, 'google_ads');
    expect(wrong.body.data).toMatchObject({ status: 'failed', retryable: false, error: expect.stringContaining('OAUTH_TOKEN_INVALID') });
    const status = await destination(website, 'google_ads');
    expect(status.last_pull_error).toMatch(/Google Ads 401 UNAUTHENTICATED OAUTH_TOKEN_INVALID/);
    expect(status.next_pull_at!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);

    await metaAccount(website, '999');
    const noAccess = await pull(website, 'meta_ads');
    expect(noAccess.body.data).toMatchObject({ status: 'failed', retryable: false, error: expect.stringMatching(/Meta 400 code 100\/33: Unsupported get request/) });

    const revokedSite = randomUUID();
    linkedin.accounts['6060'] = { name: 'Other', currency: 'EUR', ads: delivery(1, 'r') };
    await linkedinAccount(revokedSite, '6060');
    linkedin.revoke();
    try {
      const revoked = await pull(revokedSite, 'linkedin_ads');
      expect(revoked.body.data).toMatchObject({ status: 'failed', error: 'LinkedIn 401 REVOKED_ACCESS_TOKEN 65601: The token used in the request has been revoked by the user' });
    } finally {
      linkedin.revoke(false);
    }
    // Expected refusals are warnings, never errors.
    expect(logLines.some((l) => l.includes('"level":50') && l.includes('ad spend'))).toBe(false);
  });

  it('a 5xx storm and a rate limit end in a retry hint; the schedule leaves the account until then', async () => {
    const website = randomUUID();
    google.customers['3333333333'] = { currency: 'EUR', name: 'Storm', ads: delivery(2, 's') };
    await googleAccount(website, '3333333333');
    const unavailable = { status: 503, body: { error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } } };
    google.failNext(unavailable, unavailable, unavailable, unavailable);
    const storm = await pull(website, 'google_ads');
    expect(storm.body.data).toMatchObject({ status: 'failed', retryable: true, error: 'Google Ads 503 UNAVAILABLE: The service is currently unavailable.' });
    const failed = await destination(website, 'google_ads');
    expect(failed.next_pull_at!.getTime()).toBeGreaterThan(Date.now() + 60_000);

    // A rate limit with Google's retry delay: waited out when short, the pull then completes.
    google.failNext({ status: 429, body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED', details: [{ errors: [{ errorCode: { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, message: 'Too many requests.', details: { quotaErrorDetails: { retryDelay: '1s' } } }] }] } } });
    const recovered = await pull(website, 'google_ads');
    expect(recovered.body.data).toMatchObject({ status: 'pulled', rows: 2 * 7, requests: 4 });
    expect(await destination(website, 'google_ads')).toMatchObject({ last_pull_error: null, next_pull_at: new Date(`${new Date().getFullYear() + 1}-01-01T00:00:00`) });

    // Meta's insights throttle (80004) with estimated_time_to_regain_access: the wait becomes next_pull_at.
    const throttledSite = randomUUID();
    meta.accounts['888'] = { name: 'Throttled', currency: 'USD', ads: delivery(1, 't') };
    await metaAccount(throttledSite, '888');
    meta.failNext({
      status: 400,
      body: { error: { message: 'There have been too many calls to this ad-account. Wait a bit and try again.', type: 'OAuthException', code: 80004, error_subcode: 2446079, fbtrace_id: 'AbC' } },
      headers: { 'x-business-use-case-usage': JSON.stringify({ '8880': [{ type: 'ads_insights', call_count: 100, total_cputime: 20, total_time: 20, estimated_time_to_regain_access: 7 }] }) },
    });
    const limited = await pull(throttledSite, 'meta_ads');
    expect(limited.body.data).toMatchObject({ status: 'failed', retryable: true, error: expect.stringContaining('code 80004/2446079') });
    const throttled = await destination(throttledSite, 'meta_ads');
    expect(throttled.next_pull_at!.getTime()).toBeGreaterThanOrEqual(Date.now() + 6.5 * 60_000);
    // The scheduled round leaves both accounts alone until their next_pull_at.
    const due = (await (await sql()).query<{ website_id: string }>(
      `SELECT website_id FROM ad_destinations WHERE status = 'active' AND (next_pull_at IS NULL OR next_pull_at <= now())`,
    )).rows.map((r) => r.website_id);
    expect(due).not.toContain(throttledSite);
  });

  it('one pull per account at a time: a second pull while one runs is refused with 409', async () => {
    const website = randomUUID();
    google.customers['4444444444'] = { currency: 'EUR', name: 'Busy', ads: delivery(1, 'b') };
    await googleAccount(website, '4444444444');
    // Hold the first pull on a slow answer: a 429 with a 2 s retry delay is waited out.
    google.failNext({ status: 429, body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests.' } }, headers: { 'retry-after': '2' } });
    const first = pull(website, 'google_ads');
    await waitFor('the first pull to take its lease', async () => (await (await sql()).query('SELECT 1 FROM ad_spend_pulls WHERE website_id = $1 AND lease_owner IS NOT NULL', [website])).rows.length > 0);
    const second = await pull(website, 'google_ads');
    expect(second.status).toBe(409);
    expect((await first).body.data).toMatchObject({ status: 'pulled' });
    expect((await pull(website, 'google_ads')).status).toBe(200);
  });

  it('the scheduled round takes due accounts only: not those waiting out a failure, nor those with spend_pull off', async () => {
    const store = await sql();
    const runner = new SpendRunner({
      sql: store, outbox: undefined as never, box: credentialsBox(credentialsKey), logger: pino({ level: 'silent' }), connectorFor: spendConnectorFor,
      baseUrlFor: () => '', urls: {}, windows: { costDays: 3, conversionDays: 30 }, now: () => new Date(), leaseMs: 60_000, maxWaitMs: 0,
      backoff: { baseMs: 1, maxMs: 1 }, nextScheduled: () => null,
    });
    const due = new Set((await runner.due()).map((d) => `${d.website_id}:${d.platform}`));
    const waiting = (await store.query<{ website_id: string; platform: string }>('SELECT website_id, platform FROM ad_destinations WHERE last_pull_error IS NOT NULL AND next_pull_at > now() + interval \'2 minutes\'')).rows;
    expect(waiting.length).toBeGreaterThan(0);
    for (const w of waiting) expect(due.has(`${w.website_id}:${w.platform}`)).toBe(false);
    const off = randomUUID();
    await connect(off, 'meta_ads', { access_token: 'meta-access-token' }, { pixel_id: '777', ad_account_id: '555', spend_pull: false });
    const on = randomUUID();
    await metaAccount(on);
    const now = new Set((await runner.due()).map((d) => `${d.website_id}:${d.platform}`));
    expect(now.has(`${on}:meta_ads`)).toBe(true);
    expect(now.has(`${off}:meta_ads`)).toBe(false);
    // An account pulled well keeps its place in every round, whatever next_pull_at says.
    const good = (await store.query<{ website_id: string; platform: string }>('SELECT website_id, platform FROM ad_destinations WHERE last_pull_error IS NULL AND last_pull_at IS NOT NULL')).rows;
    expect(good.length).toBeGreaterThan(0);
    for (const g of good) expect(now.has(`${g.website_id}:${g.platform}`)).toBe(true);
  });

  it('answers 404 for an account that is not connected and 400 for an unknown window', async () => {
    expect((await pull(randomUUID(), 'google_ads')).status).toBe(404);
    expect((await pull(randomUUID(), 'tiktok_ads')).status).toBe(404);
    expect((await admin('POST', `/crm/ad-destinations/${randomUUID()}/google_ads/pull`, { window: 'year' })).status).toBe(400);
  });

  it('no credential reaches a log line or an answer', () => {
    const all = logLines.join('\n');
    for (const secret of ['google-access-token', 'google-developer-token', 'meta-access-token', 'linkedin-access-token', '1//refresh-1', 'client-secret-1', ...google.minted]) expect(all).not.toContain(secret);
  });
});
