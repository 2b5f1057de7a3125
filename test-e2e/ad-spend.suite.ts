// Ad spend pulled by API, end to end: the stack starts with the three ad platforms' base URLs
// pointed at local stand-ins (Google Ads searchStream, Meta insights, LinkedIn adAnalytics); the
// accounts are connected through the admin API and pulled with POST …/pull; crm-sync publishes
// ads.report_imported through its outbox to attribution; and the public API answers spend, ROAS
// and CAC by platform (/v1/metrics) and per campaign (/v1/ads/performance) from the pulled rows.
// A re-pull of the same window changes nothing; a changed cost for an old day is corrected by the
// wide (conversion window) pull. Written once, run on both driver profiles.
import { randomUUID } from 'node:crypto';
import type { RunningProcess } from '@sightline/kit';
import { startGoogleAdsSpendServer, type AdDay, type GoogleAdsSpendServer } from '../services/crm-sync/test/google-ads-spend-server';
import { startLinkedInAnalyticsServer, type LinkedInAnalyticsServer } from '../services/crm-sync/test/linkedin-analytics-server';
import { startMetaInsightsServer, type MetaInsightsServer } from '../services/crm-sync/test/meta-insights-server';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json & { data: Json[]; meta: Json };
}

const MINUTE = 60_000;
const DAY_MS = 86_400_000;
const SERVICES = ['gateway', 'ingest', 'attribution', 'crm-sync'];

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** One campaign with two ads per platform over `days` days; cost differs per day so a restatement shows. */
function delivery(prefix: string, days: number, now: number, base: number): AdDay[] {
  const ads: AdDay[] = [];
  for (let ago = 0; ago < days; ago++) {
    const date = dayOf(now - ago * DAY_MS);
    ads.push(
      { date, campaign: { id: `${prefix}-c1`, name: `${prefix}_launch` }, adSet: { id: `${prefix}-s1`, name: 'Audience A' }, ad: { id: `${prefix}-a1`, name: 'Ad one' }, cost: base + ago, impressions: 1000, clicks: 20, conversions: 1, conversionValue: 50 },
      { date, campaign: { id: `${prefix}-c1`, name: `${prefix}_launch` }, adSet: { id: `${prefix}-s1`, name: 'Audience A' }, ad: { id: `${prefix}-a2`, name: 'Ad two' }, cost: 2.5, impressions: 500, clicks: 5 },
    );
  }
  return ads;
}

const total = (ads: readonly AdDay[]): number => Math.round(ads.reduce((sum, a) => sum + a.cost, 0) * 100) / 100;

export function describeAdSpend(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`ad spend by API (${profileName})`, () => {
    let profile: DriverProfile;
    let stack: Stack;
    let proc: RunningProcess;
    let google: GoogleAdsSpendServer;
    let meta: MetaInsightsServer;
    let linkedin: LinkedInAnalyticsServer;
    let base: string;
    let key: string;
    let website: { id: string; workspace_id: string };
    const now = Date.now();
    const window = `from=${encodeURIComponent(new Date(now - 10 * DAY_MS).toISOString())}&to=${encodeURIComponent(new Date(now + 60 * MINUTE).toISOString())}`;

    const get = async (path: string): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: r.status, body: (await r.json()) as Reply['body'] };
    };
    const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json & { data: Json } }> => {
      const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Json & { data: Json } };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const pull = async (platform: string, pullWindow?: 'cost' | 'conversions'): Promise<Json> => {
      const r = await admin('POST', `/crm/ad-destinations/${website.id}/${platform}/pull`, pullWindow ? { window: pullWindow } : {});
      expect({ platform, status: r.status, outcome: r.body.data['status'] }).toEqual({ platform, status: 200, outcome: 'pulled' });
      return r.body.data;
    };
    /** Waits until crm-sync's outbox has handed every message to the bus. */
    const outboxDrained = async (): Promise<void> => {
      const sql = await proc.stores.sql('crm_sync');
      await waitFor('the crm-sync outbox to drain', async () =>
        Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL')).rows[0]?.n) === 0 ? true : undefined);
    };
    const spendByPlatform = async (): Promise<Record<string, Json>> => {
      const r = await get(`/v1/metrics?group_by=platform&metrics=spend,roas,cac&${window}`);
      expect(r.status).toBe(200);
      return Object.fromEntries(r.body.data.map((row) => [String(row['platform']), row]));
    };
    const campaigns = async (): Promise<Record<string, Json>> => {
      const r = await get(`/v1/ads/performance?level=campaign&breakdown=true&metrics=spend,impressions,clicks&${window}`);
      expect(r.status).toBe(200);
      return Object.fromEntries(r.body.data.map((row) => [`${row['platform']}:${row['id']}`, row]));
    };
    const expected = (): Record<string, number> => ({
      google_ads: total(google.customers['1234567890']!.ads),
      meta_ads: total(meta.accounts['555']!.ads),
      linkedin_ads: total(linkedin.accounts['5080']!.ads),
    });
    const spendMatches = async (want: Record<string, number>): Promise<Record<string, Json> | undefined> => {
      const rows = await spendByPlatform();
      return Object.entries(want).every(([platform, spend]) => rows[platform]?.['spend'] === spend) ? rows : undefined;
    };

    beforeAll(async () => {
      profile = await makeProfile();
      // Five days of delivery per platform, all inside the 30-day conversion window and the 10-day read window.
      google = await startGoogleAdsSpendServer({ customers: { '1234567890': { currency: 'EUR', name: 'Shop Google', ads: delivery('g', 5, now, 10) } } });
      meta = await startMetaInsightsServer({ pageSize: 3, accounts: { '555': { name: 'Shop Meta', currency: 'EUR', ads: delivery('m', 5, now, 6) } } });
      linkedin = await startLinkedInAnalyticsServer({ accounts: { '5080': { name: 'Shop LinkedIn', currency: 'EUR', ads: delivery('l', 5, now, 20) } } });
      stack = await startStack({
        targets: SERVICES,
        env: {
          ...profile.env,
          SIGHTLINE_CREDENTIALS_KEY: 'ad-spend-e2e-credentials-key-0123',
          SIGHTLINE_GOOGLE_ADS_URL: google.url,
          SIGHTLINE_META_ADS_URL: meta.url,
          SIGHTLINE_LINKEDIN_ADS_URL: linkedin.url,
          // Never fires during the test: pulls start through the admin API.
          SIGHTLINE_AD_SPEND_PULL_CRON: '0 0 1 1 *',
        },
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const post = adminOf(proc);
      const ws = await post('/workspaces', { name: 'Ads', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      website = { id: String(site['id']), workspace_id: String(ws['id']) };
      key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);

      // One buyer per platform, each arriving from that platform's ad.
      const visits: [string, string, number][] = [
        ['https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=g_launch&gclid=e2e-g', 'https://www.google.com/', 120],
        ['https://shop.test/?utm_source=facebook&utm_medium=paid_social&utm_campaign=m_launch', 'https://l.facebook.com/', 60],
        ['https://shop.test/?utm_source=linkedin&utm_medium=cpc&utm_campaign=l_launch&li_fat_id=e2e-l', 'https://www.linkedin.com/', 300],
      ];
      const events: Json[] = [];
      for (const [i, [url, referrer, revenue]] of visits.entries()) {
        const aid = randomUUID();
        expect(await sendVisit(base, String(site['public_id']), { aid, at: now - (180 - i) * MINUTE, url, referrer, key })).toBe(202);
        events.push({ event_type: 'purchase', event_name: 'order_completed', anonymous_id: aid, email: `buyer${i}@acme.test`, revenue, currency: 'EUR', occurred_at: new Date(now - (100 - i) * MINUTE).toISOString() });
      }
      const accepted = await fetch(`${base}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
      expect(((await accepted.json()) as Json)['accepted']).toBe(3);
      await waitFor('the purchases to reach attribution', async () => {
        const r = await get(`/v1/metrics?metrics=conversions&${window}`);
        return r.status === 200 && r.body.data[0]?.['conversions'] === 3 ? true : undefined;
      });
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await Promise.all([google?.close(), meta?.close(), linkedin?.close()]);
      await profile?.cleanup();
    }, 60_000);

    it('connects Google Ads, Meta and LinkedIn accounts through the admin API', async () => {
      const accounts: [string, Json, Json][] = [
        ['google_ads', { access_token: 'google-access-token', developer_token: 'google-developer-token' }, { customer_id: '123-456-7890', conversion_action_id: '42' }],
        ['meta_ads', { access_token: 'meta-access-token' }, { pixel_id: '777', ad_account_id: 'act_555' }],
        ['linkedin_ads', { access_token: 'linkedin-access-token' }, { conversion_rule_id: '123', ad_account_id: '5080' }],
      ];
      for (const [platform, credentials, settings] of accounts) {
        const r = await admin('PUT', `/crm/ad-destinations/${website.id}/${platform}`, { workspace_id: website.workspace_id, credentials, settings });
        expect({ platform, status: r.status }).toEqual({ platform, status: 200 });
        expect(JSON.stringify(r.body)).not.toContain('access-token');
      }
    });

    it('pulls each account and answers spend, ROAS and CAC by platform and per campaign from the pulled rows', async () => {
      for (const platform of ['google_ads', 'meta_ads', 'linkedin_ads']) {
        const outcome = await pull(platform);
        // Never pulled wide before: the 30-day conversion window; 5 days × (campaign + ad set + ad rows).
        expect(outcome).toMatchObject({ currency: 'EUR', window: { from: dayOf(now - 29 * DAY_MS), to: dayOf(now) } });
      }
      const want = expected();
      const rows = await waitFor('the pulled spend on /v1/metrics', () => spendMatches(want));
      const revenue = { google_ads: 120, meta_ads: 60, linkedin_ads: 300 } as const;
      for (const platform of ['google_ads', 'meta_ads', 'linkedin_ads'] as const) {
        expect(rows[platform]!['roas']).toBeCloseTo(revenue[platform] / want[platform]!, 2);
        expect(rows[platform]!['cac']).toBeCloseTo(want[platform]! / 1, 2);
      }
      const byCampaign = await campaigns();
      expect(byCampaign['google_ads:g-c1']).toMatchObject({ name: 'g_launch', currency: 'EUR', spend: want['google_ads'], impressions: 7500, clicks: 125 });
      expect(byCampaign['meta_ads:m-c1']).toMatchObject({ name: 'm_launch', spend: want['meta_ads'] });
      expect(byCampaign['linkedin_ads:l-c1']).toMatchObject({ spend: want['linkedin_ads'], clicks: 125 });
      const status = await admin('GET', `/crm/ad-destinations?website_id=${website.id}`);
      expect(status.status).toBe(200);
      expect(JSON.stringify(status.body)).not.toContain('access-token');
    });

    it('a re-pull of the same window changes nothing', async () => {
      const before = { metrics: await spendByPlatform(), campaigns: await campaigns() };
      for (const platform of ['google_ads', 'meta_ads', 'linkedin_ads']) await pull(platform, 'conversions');
      await outboxDrained();
      // The restated copies carry the same figures: give the bus a moment, then nothing has moved.
      await new Promise((r) => setTimeout(r, 1500));
      expect({ metrics: await spendByPlatform(), campaigns: await campaigns() }).toEqual(before);
    });

    it('a changed cost for an old day is corrected by the wide pull, not by the cost window', async () => {
      const before = expected();
      // Four days ago: outside the 3-day cost window, inside the 30-day conversion window.
      const old = dayOf(now - 4 * DAY_MS);
      const changed = google.customers['1234567890']!.ads.find((a) => a.date === old && a.ad.id === 'g-a2')!;
      changed.cost = 7.5;
      const linkedinOld = linkedin.accounts['5080']!.ads.find((a) => a.date === old && a.ad.id === 'l-a1')!;
      linkedinOld.cost = 1;
      expect(await pull('google_ads', 'cost')).toMatchObject({ window: { from: dayOf(now - 2 * DAY_MS) } });
      await outboxDrained();
      await new Promise((r) => setTimeout(r, 1000));
      expect((await spendByPlatform())['google_ads']!['spend']).toBe(before['google_ads']);

      await pull('google_ads', 'conversions');
      await pull('linkedin_ads', 'conversions');
      const after = expected();
      expect(after['google_ads']).toBe(Math.round((before['google_ads']! + 5) * 100) / 100);
      const rows = await waitFor('the corrected spend', () => spendMatches(after));
      expect(rows['meta_ads']!['spend']).toBe(before['meta_ads']);
      const byCampaign = await campaigns();
      expect(byCampaign['google_ads:g-c1']!['spend']).toBe(after['google_ads']);
      expect(byCampaign['linkedin_ads:l-c1']!['spend']).toBe(after['linkedin_ads']);
    });

    it('a revoked token ends in a readable status on the account; the spend already pulled stays', async () => {
      meta.revoke();
      try {
        const r = await admin('POST', `/crm/ad-destinations/${website.id}/meta_ads/pull`, {});
        expect(r.status).toBe(200);
        expect(r.body.data).toMatchObject({ status: 'failed', error: expect.stringContaining('Meta 400 code 190/460') });
        const status = await admin('GET', `/crm/ad-destinations?website_id=${website.id}`);
        const account = (status.body.data as unknown as Json[]).find((d) => d['platform'] === 'meta_ads')!;
        expect(JSON.stringify(account)).toContain('code 190/460');
        expect((await spendByPlatform())['meta_ads']!['spend']).toBe(expected()['meta_ads']);
      } finally {
        meta.revoke(false);
      }
    });
  });
}
