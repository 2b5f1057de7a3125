// The analytics reads through the public paths: browsing sent to /collect and conversions sent to
// POST /v1/events reach attribution via ingest; ad reports, store orders, milestones and CRM
// memberships arrive as crm-sync would publish them. Every analytics endpoint is then read through
// the gateway, errors included. Written once, run on both driver profiles.
import { randomUUID } from 'node:crypto';
import { defineStandIn, type Envelope, type PublishInputOf, type RunningProcess, type ServiceBus } from '@sightline/kit';
import type { MessagePayloads, PublishedBy } from '@sightline/proto-schemas';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
type Row = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json & { data: Row[]; meta: Json; totals?: Row };
}

const HOUR = 3_600_000;

export function describeAnalytics(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`analytics reads (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let key: string;
    let publicId: string;
    let website: { id: string; workspace_id: string };
    let bus: ServiceBus<'crm-sync'>;
    const now = Date.now();
    const window = `from=${encodeURIComponent(new Date(now - 24 * HOUR).toISOString())}&to=${encodeURIComponent(new Date(now + HOUR).toISOString())}`;
    const companyId = randomUUID();
    const dealId = randomUUID();
    const conversions: MessagePayloads['conversion.created'][] = [];

    // Stands in for crm-sync: publishes what its connectors would.
    const crmSync = defineStandIn({
      name: 'crm-sync',
      needs: {},
      async create(ctx) {
        bus = ctx.bus;
        return {};
      },
    });
    // Stands in for the change feed, to learn contact ids as a client would.
    const feed = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        return { consumers: { 'conversion.created': async (e: Envelope) => void conversions.push(e.payload as MessagePayloads['conversion.created']) } };
      },
    });
    const publish = async <T extends PublishedBy<'crm-sync'>>(type: T, payload: MessagePayloads[T]): Promise<void> => {
      await bus.publish({ type, workspace_id: website.workspace_id, website_id: website.id, source: 'crm-sync', payload } as PublishInputOf<T>);
    };

    const get = async (path: string): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: r.status, body: (await r.json()) as Reply['body'] };
    };
    const waitFor = async (what: string, probe: () => Promise<boolean>): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (!(await probe())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const visit = async (aid: string, minutesAgo: number, url: string, referrer: string | null): Promise<void> => {
      expect(await sendVisit(base, publicId, { aid, at: now - minutesAgo * 60_000, url, referrer, key })).toBe(202);
    };

    beforeAll(async () => {
      profile = await makeProfile();
      stack = await startStack({
        targets: ['gateway', 'ingest', 'attribution'],
        standIns: [crmSync, feed],
        env: { ...profile.env },
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'Analytics', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      publicId = String(site['public_id']);
      website = { id: String(site['id']), workspace_id: String(ws['id']) };
      key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);

      // Two visitors: one from a Google ad who buys, one from a referral who does not.
      const buyer = randomUUID();
      await visit(buyer, 180, 'https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=e2e1', 'https://www.google.com/');
      await visit(randomUUID(), 120, 'https://shop.test/blog', 'https://news.example/post');
      const events = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          events: [
            { event_type: 'purchase', event_name: 'order_completed', anonymous_id: buyer, email: 'buyer@acme.test', revenue: 120, currency: 'EUR', occurred_at: new Date(now - 60 * 60_000).toISOString() },
            { event_type: 'purchase', event_name: 'order_completed', revenue: 30, currency: 'EUR', occurred_at: new Date(now - 30 * 60_000).toISOString() },
          ],
        }),
      });
      expect(((await events.json()) as Json)['accepted']).toBe(2);
      const today = new Date(now).toISOString().slice(0, 10);
      await publish('ads.report_imported', {
        website_id: website.id, workspace_id: website.workspace_id, platform: 'google_ads', account_id: 'acct-1', account_name: 'Shop Ads', currency: 'EUR',
        rows: [{ date: today, level: 'ad', item_id: 'ad-1', item_name: 'Spring A', campaign_id: 'c-1', campaign_name: 'spring', ad_set_id: 'as-1', ad_set_name: 'Shoes', ad_id: 'ad-1', ad_name: 'Spring A', spend: 60, impressions: 2000, clicks: 40, platform_conversions: 3, platform_revenue: 300 }],
      });
      await publish('store.orders_imported', {
        website_id: website.id, workspace_id: website.workspace_id, platform: 'shopify',
        orders: [{ order_id: 'o-1', ordered_at: new Date(now - 60 * 60_000).toISOString(), customer_email: 'buyer@acme.test', currency: 'EUR', lines: [{ product_id: 'sku-1', name: 'Trail shoe', quantity: 2, unit_price: 60, unit_cost: 20 }], refunds: [] }],
      });
      await waitFor('the conversions to reach attribution', async () => {
        const r = await get(`/v1/metrics?metrics=conversions&${window}`);
        return r.status === 200 && r.body.data[0]?.['conversions'] === 2;
      });
      const journeyOf = await get(`/v1/paths?${window}`);
      expect(journeyOf.status).toBe(200);
      await publish('milestone.reached', {
        milestone_id: `deal:${dealId}:won`, website_id: website.id, workspace_id: website.workspace_id, stage: 'deal_won', occurred_at: new Date(now - 10 * 60_000).toISOString(),
        identity_id: null, conversion_id: null, email: 'buyer@acme.test', deal_id: dealId, company_id: companyId, amount: 5000, currency: 'EUR',
      });
      for (const subject of ['company', 'deal'] as const) {
        await publish('crm.members_synced', {
          website_id: website.id, workspace_id: website.workspace_id, subject, id: subject === 'company' ? companyId : dealId, name: 'Acme',
          members: [{ email: 'buyer@acme.test', conversion_id: null, identity_id: null }], synced_at: new Date(now).toISOString(),
        });
      }
      await waitFor('the milestone, orders and ad report', async () => {
        const [milestones, products, ads] = await Promise.all([
          get(`/v1/metrics?metrics=milestones&stages=deal_won&group_by=channel&${window}`),
          get(`/v1/products?${window}`),
          get(`/v1/ads/performance?level=campaign&${window}`),
        ]);
        return milestones.body.data.length > 0 && products.body.data.length > 0 && ads.body.data.length > 0 && ads.body.data[0]?.['spend'] === 60;
      });
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('GET /v1/metrics: the dashboard by channel with window totals', async () => {
      const r = await get(`/v1/metrics?metrics=visitors,sessions,conversions,revenue&group_by=channel&${window}`);
      expect(r.status).toBe(200);
      const byChannel = Object.fromEntries(r.body.data.map((row) => [row['channel'], row]));
      expect(byChannel['Paid Search']).toMatchObject({ visitors: 1, sessions: 1, conversions: 1, revenue: 120 });
      expect(byChannel['Unattributed']).toMatchObject({ conversions: 1, revenue: 30 });
      expect(byChannel['Referral']).toMatchObject({ visitors: 1, sessions: 1, conversions: 0 });
      expect(r.body.totals).toEqual({ visitors: 2, sessions: 2, conversions: 2, revenue: 150 });
      expect(r.body.meta).toMatchObject({ website: 'shop.test', timezone: 'UTC', currency: 'EUR', truncated: false });
      expect(Object.keys(r.body.meta['definitions'] as Json)).toEqual(expect.arrayContaining(['visitors', 'sessions', 'conversions', 'revenue', 'attribution_model']));
    });

    it('GET /v1/metrics: five models side by side, a daily series, spend by platform and milestones', async () => {
      const models = await get(`/v1/metrics?metrics=conversions,revenue&group_by=channel&attribution=first_touch,last_touch,linear,u_shaped,time_decay&${window}`);
      const paid = models.body.data.find((row) => row['channel'] === 'Paid Search');
      for (const model of ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay']) expect(paid?.[model]).toEqual({ conversions: 1, revenue: 120 });
      const daily = await get(`/v1/metrics?metrics=visitors&granularity=day&${window}`);
      expect(daily.status).toBe(200);
      expect(daily.body.data.every((row) => typeof row['date'] === 'string')).toBe(true);
      const spend = await get(`/v1/metrics?metrics=spend,clicks,revenue,roas&group_by=platform&${window}`);
      expect(spend.body.data.find((row) => row['platform'] === 'google_ads')).toMatchObject({ spend: 60, clicks: 40, revenue: 120, roas: 2 });
      const milestones = await get(`/v1/metrics?metrics=milestones&stages=deal_won&group_by=channel&${window}`);
      expect(milestones.body.data).toEqual([{ channel: 'Paid Search', milestones: 1 }]);
      expect(String((milestones.body.meta['definitions'] as Json)['attribution_model'])).toMatch(/^last_touch/);
    });

    it('GET /v1/metrics: bad input is a problem document with the right kind, remediation and allowed', async () => {
      const cases: [string, string, boolean][] = [
        ['metrics=visitors,happiness', 'unknown-metric', true],
        ['metrics=visitors&group_by=colour', 'unknown-dimension', true],
        ['metrics=visitors&filter=channel:like:x', 'unknown-filter-operator', true],
        ['metrics=visitors&granularity=week', 'invalid-request', true],
        ['metrics=visitors&period=whenever', 'invalid-window', false],
        ['metrics=visitors&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'window-too-large', false],
        ['metrics=conversions&attribution=linear', 'unsupported-combination', false],
        ['metrics=spend&group_by=platform,channel', 'unsupported-combination', false],
      ];
      for (const [query, kind, allowed] of cases) {
        const r = await get(`/v1/metrics?${query}`);
        expect({ query, status: r.status, type: String(r.body['type']).split('/').pop() }).toEqual({ query, status: 400, type: kind });
        expect(r.body['remediation']).toEqual(expect.any(String));
        if (allowed) expect(r.body['allowed']).toEqual(expect.any(Array));
      }
    });

    it('GET /v1/paths and GET /v1/attribution/coverage', async () => {
      const paths = await get(`/v1/paths?${window}`);
      expect(paths.body.data.map((row) => row['path'])).toEqual(expect.arrayContaining([['Paid Search'], ['Unattributed']]));
      const coverage = await get(`/v1/attribution/coverage?${window}`);
      const amount = Object.fromEntries(coverage.body.data.map((row) => [row['bucket'], row['amount']]));
      expect(amount['attributed']).toBe(120);
      expect(amount['no_visitor']).toBe(30);
      expect(coverage.body.meta['worth_investigating_amount']).toBe(30);
    });

    it('GET /v1/products and GET /v1/ads/performance', async () => {
      const products = await get(`/v1/products?${window}`);
      expect(products.body.data[0]).toMatchObject({ product_id: 'sku-1', revenue: 120, units: 2, orders: 1 });
      const ads = await get(`/v1/ads/performance?level=campaign&breakdown=true&metrics=spend,clicks,cpc&${window}`);
      expect(ads.body.data[0]).toMatchObject({ platform: 'google_ads', spend: 60, clicks: 40, cpc: 1.5 });
      expect(ads.body.meta['currency_source']).toEqual(expect.any(String));
      const missing = await get(`/v1/ads/performance?${window}`);
      expect(missing.status).toBe(400);
    });

    it('journeys of the contact, its company and its deal', async () => {
      const bought = conversions.find((c) => c.email === 'buyer@acme.test');
      expect(bought).toBeDefined();
      const contact = await get(`/v1/contacts/${bought?.conversion_id}/journey`);
      expect(contact.status).toBe(200);
      expect(contact.body.data.map((session) => session['channel'])).toEqual(['Paid Search']);
      const company = await get(`/v1/companies/${companyId}/journey`);
      expect(company.status).toBe(200);
      expect(company.body['people_count']).toBe(1);
      expect(company.body.data.map((session) => session['channel'])).toEqual(['Paid Search']);
      const deal = await get(`/v1/deals/${dealId}/journey`);
      expect(deal.status).toBe(200);
      expect(deal.body.data).toHaveLength(1);
      expect((await get(`/v1/deals/${randomUUID()}/journey`)).status).toBe(404);
      expect((await get(`/v1/accounts/${companyId}/journey`)).status).toBe(200);
    });
  });
}
