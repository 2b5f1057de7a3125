// CRM reads through the public paths, end to end. Browsing goes to /collect and conversions to
// POST /v1/events (ingest → attribution); CRM records enter crm-sync the way `sightline import`
// sends them, through its admin import route (provider `import`), so the real mirror publishes
// deal.created, deal.stage_changed, milestones and memberships through its outbox to attribution
// and the change feed. Then /deals (with attribution from attribution.getDealTouches),
// /pipelines, /companies and /accounts, the deal and company journeys, and the deal changes are
// read through the gateway. Written once, run on both driver profiles.
import { randomUUID } from 'node:crypto';
import type { RunningProcess } from '@sightline/kit';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
type Row = Json;
interface Reply {
  status: number;
  body: Json & { data: Row[]; meta: Json; next_cursor?: string; changes?: Row[] };
}

const MINUTE = 60_000;
const SERVICES = ['gateway', 'ingest', 'attribution', 'crm-sync', 'changefeed'];

export function describeCrm(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`CRM reads (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let key: string;
    let narrowKey: string;
    let publicId: string;
    let website: { id: string; workspace_id: string };
    const now = Date.now();
    const ago = (minutes: number): string => new Date(now - minutes * MINUTE).toISOString();
    const conversionOf: Record<string, string> = {};

    const get = async (path: string, withKey = key): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${withKey}` } });
      return { status: r.status, body: (await r.json()) as Reply['body'] };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const importRows = async (kind: string, rows: Json[]): Promise<void> => {
      const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin/crm/imports/${kind}?website=shop.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ website_id: website.id, workspace_id: website.workspace_id, rows }),
      });
      const result = (await response.json()) as Json;
      expect({ kind, status: response.status, accepted: result['accepted'] }).toEqual({ kind, status: 200, accepted: rows.length });
    };
    const visit = async (aid: string, minutesAgo: number, url: string, referrer: string | null): Promise<void> => {
      expect(await sendVisit(base, publicId, { aid, at: now - minutesAgo * MINUTE, url, referrer, key })).toBe(202);
    };
    const dealsByCrmId = async (query = '', withKey = key): Promise<Record<string, Row>> => {
      const r = await get(`/v1/deals?limit=200${query}`, withKey);
      expect(r.status).toBe(200);
      return Object.fromEntries(r.body.data.map((row) => [String(row['crm_id']), row]));
    };

    beforeAll(async () => {
      profile = await makeProfile();
      stack = await startStack({
        targets: ['gateway', 'ingest', 'attribution', 'crm-sync', 'changefeed'],
        env: { ...profile.env },
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'CRM', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      publicId = String(site['public_id']);
      website = { id: String(site['id']), workspace_id: String(ws['id']) };
      key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
      narrowKey = String((await admin('/keys', { workspace_id: ws['id'], scopes: ['deals:read', 'conversions:read'] }))['key']);
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('answers 409 crm-not-connected before any CRM data, on every CRM read', async () => {
      for (const path of ['/v1/deals', '/v1/pipelines', '/v1/companies', '/v1/accounts']) {
        const r = await get(path);
        expect({ path, status: r.status, type: String(r.body['type']).split('/').pop() }).toEqual({ path, status: 409, type: 'crm-not-connected' });
        expect(String(r.body['remediation'])).toMatch(/sightline import deals/);
      }
    });

    it('browsing and conversions reach attribution; imported CRM records reach the mirror', async () => {
      // Alice arrives from a Google ad, Bob from a partner's link; both convert with their email.
      const alice = randomUUID();
      const bob = randomUUID();
      await visit(alice, 180, 'https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=crm1', 'https://www.google.com/');
      await visit(bob, 150, 'https://shop.test/partners', 'https://partner.example/deals');
      const events = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          events: [
            { event_type: 'conversion', event_name: 'demo_request', anonymous_id: alice, email: 'alice@acme.test', occurred_at: ago(120) },
            { event_type: 'conversion', event_name: 'trial_signup', anonymous_id: bob, email: 'Bob@Acme.test', occurred_at: ago(110) },
          ],
        }),
      });
      expect(((await events.json()) as Json)['accepted']).toBe(2);
      const window = `from=${encodeURIComponent(ago(24 * 60))}&to=${encodeURIComponent(ago(-60))}`;
      await waitFor('the visits and conversions to reach attribution', async () => {
        const r = await get(`/v1/metrics?metrics=visitors,conversions&${window}`);
        return r.status === 200 && r.body.data[0]?.['visitors'] === 2 && r.body.data[0]?.['conversions'] === 2 ? true : undefined;
      });
      // The change feed names each conversion (without its email): the contact ids /deals should list.
      const feed = await waitFor('both conversions in the change feed', async () => {
        const r = await get('/v1/changes?types=conversion.created');
        return r.body.changes?.length === 2 ? r.body.changes : undefined;
      });
      for (const change of feed) conversionOf[String((change['data'] as Json)['event_name'])] = String(change['object_id']);

      await importRows('companies', [{ crm_id: 'acme', name: 'Acme', domain: 'www.acme.test', lifecycle_stage: 'customer', updated_at: ago(30) }]);
      await importRows('contacts', [
        { crm_id: 'c-alice', email: 'alice@acme.test', lifecycle_stage: 'Marketing Qualified Lead', company_crm_id: 'acme', updated_at: ago(60) },
        { crm_id: 'c-bob', email: 'bob@acme.test', lifecycle_stage: 'customer', company_crm_id: 'acme', updated_at: ago(60) },
      ]);
      await importRows('deals', [
        { crm_id: 'd-alice', name: 'Acme platform', amount: 12000, currency: 'EUR', pipeline: 'Sales', stage: 'Demo', bucket: 'open', company_crm_id: 'acme', contact_crm_ids: ['c-alice'], created_at: ago(60), updated_at: ago(5) },
        { crm_id: 'd-bob', name: 'Acme pilot', amount: 3000, currency: 'EUR', pipeline: 'Sales', stage: 'Won', bucket: 'won', company_crm_id: 'acme', contact_crm_ids: ['c-bob'], created_at: ago(100), closed_at: ago(10), updated_at: ago(10) },
        { crm_id: 'd-none', name: 'Inbound lead', amount: 500, currency: 'EUR', pipeline: 'Sales', stage: 'Lost', bucket: 'lost', created_at: ago(90), updated_at: ago(20) },
      ]);
      expect(Object.keys(conversionOf).sort()).toEqual(['demo_request', 'trial_signup']);
    });

    it('GET /v1/deals: each row with its stage bucket and its attribution', async () => {
      const deals = await dealsByCrmId();
      expect(Object.keys(deals)).toEqual(['d-alice', 'd-bob', 'd-none']);
      expect(deals['d-alice']).toMatchObject({
        provider: 'import', name: 'Acme platform', amount: 12000, currency: 'EUR', stage: { name: 'Demo', normalized_bucket: 'open' },
        crm_contact_ids: ['c-alice'], contact_ids: [conversionOf['demo_request']], attribution_basis: 'sessions',
        first_touch: { channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring' },
        last_touch: { channel: 'Paid Search' },
      });
      expect(deals['d-bob']).toMatchObject({ stage: { normalized_bucket: 'won' }, contact_ids: [conversionOf['trial_signup']], first_touch: { channel: 'Referral' } });
      expect(deals['d-none']).toMatchObject({ stage: { normalized_bucket: 'lost' }, contact_ids: [], first_touch: null, attribution_basis: 'no_contacts' });
      const companies = await get('/v1/companies');
      expect(deals['d-alice']?.['company_id']).toBe(companies.body.data[0]?.['id']);
      const r = await get('/v1/deals');
      expect(r.body.meta).toMatchObject({ website: 'shop.test', row_count: 3, has_more: false, total_count: null, attribution_available: true });
    });

    it('GET /v1/deals: filters, total_count, paging with a cursor, and an invalid cursor', async () => {
      expect(Object.keys(await dealsByCrmId('&stage_bucket=won'))).toEqual(['d-bob']);
      expect(Object.keys(await dealsByCrmId(`&updated_since=${encodeURIComponent(ago(15))}`))).toEqual(['d-alice', 'd-bob']);
      const counted = await get('/v1/deals?stage_bucket=open&total_count=true');
      expect(counted.body.meta['total_count']).toBe(1);
      const bad = await get('/v1/deals?stage_bucket=maybe');
      expect(bad.status).toBe(400);

      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await get(`/v1/deals?limit=1&total_count=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.meta).toMatchObject({ total_count: 3, row_count: 1, has_more: page.body.next_cursor !== undefined });
        seen.push(...page.body.data.map((row) => String(row['crm_id'])));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(['d-alice', 'd-bob', 'd-none']);

      const first = await get('/v1/deals?limit=1');
      const edited = `${String(first.body.next_cursor).slice(0, -3)}xyz`;
      for (const query of [`cursor=${encodeURIComponent(edited)}`, `cursor=${encodeURIComponent(String(first.body.next_cursor))}&stage_bucket=open`]) {
        const refused = await get(`/v1/deals?limit=1&${query}`);
        expect({ status: refused.status, type: String(refused.body['type']).split('/').pop() }).toEqual({ status: 400, type: 'invalid-request' });
        expect(String(refused.body['remediation'])).toMatch(/restart paging/i);
      }
    });

    it('GET /v1/deals carries no personal data, whatever the key', async () => {
      const full = await get('/v1/deals');
      const narrow = await get('/v1/deals', narrowKey);
      expect(narrow.status).toBe(200);
      expect(narrow.body.data).toEqual(full.body.data);
      expect(JSON.stringify(full.body)).not.toMatch(/alice@|bob@/i);
    });

    it('GET /v1/pipelines: stages in order with their buckets, and the stage vocabulary', async () => {
      const r = await get('/v1/pipelines');
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      const stages = (r.body.data[0]?.['stages'] as Row[]).map((s) => [s['name'], s['normalized_bucket']]);
      expect(stages).toEqual(expect.arrayContaining([['Demo', 'open'], ['Won', 'won'], ['Lost', 'lost']]));
      expect(r.body.meta['stage_vocabulary']).toEqual(['customer', 'deal_created', 'deal_lost', 'deal_won', 'marketing_qualified_lead']);
    });

    it('GET /v1/companies and GET /v1/accounts answer identically, with people_count and the domain filter', async () => {
      const companies = await get('/v1/companies?total_count=true');
      const accounts = await get('/v1/accounts?total_count=true');
      expect(companies.status).toBe(200);
      expect(accounts.body).toEqual(companies.body);
      expect(companies.body.data).toEqual([expect.objectContaining({ crm_id: 'acme', name: 'Acme', domain: 'www.acme.test', people_count: 2, provider: 'import' })]);
      expect(companies.body.meta).toMatchObject({ total_count: 1, has_more: false });
      expect((await get('/v1/accounts?domain=ACME.test')).body.data).toHaveLength(1);
      expect((await get('/v1/companies?domain=other.test')).body.data).toHaveLength(0);
    });

    it('the deal and company journeys show how the people on them arrived', async () => {
      const deals = await dealsByCrmId();
      const dealId = String(deals['d-alice']?.['id']);
      const companyId = String(deals['d-alice']?.['company_id']);
      const deal = await waitFor('the deal members to reach attribution', async () => {
        const r = await get(`/v1/deals/${dealId}/journey`);
        return r.status === 200 && r.body.data.length > 0 ? r : undefined;
      });
      expect(deal.body.data.map((s) => s['channel'])).toEqual(['Paid Search']);
      const company = await waitFor('the company members to reach attribution', async () => {
        const r = await get(`/v1/companies/${companyId}/journey`);
        return r.status === 200 && r.body['people_count'] === 2 ? r : undefined;
      });
      expect(company.body.data.map((s) => s['channel'])).toEqual(['Paid Search', 'Referral']);
      expect((await get(`/v1/accounts/${companyId}/journey`)).body['people_count']).toBe(2);
      const milestones = await waitFor('the deal milestones', async () => {
        const r = await get(`/v1/metrics?metrics=milestones&stages=deal_created&group_by=channel&from=${encodeURIComponent(ago(24 * 60))}&to=${encodeURIComponent(ago(-60))}`);
        return r.status === 200 && r.body.data.length === 3 ? r : undefined;
      });
      expect(Object.fromEntries(milestones.body.data.map((row) => [row['channel'], row['milestones']]))).toEqual({ 'Paid Search': 1, Referral: 1, Unattributed: 1 });
    });

    it('deal changes reach the change feed with their source, and a stage change shows in /deals', async () => {
      const created = await waitFor('three deal.created changes', async () => {
        const r = await get('/v1/changes?types=deal.created');
        return r.body.changes?.length === 3 ? r.body.changes : undefined;
      });
      const deals = await dealsByCrmId();
      expect(created.map((c) => [c['source'], c['object_type']])).toEqual([['import', 'deal'], ['import', 'deal'], ['import', 'deal']]);
      expect(created.map((c) => c['object_id']).sort()).toEqual(Object.values(deals).map((d) => d['id']).sort());

      await importRows('deals', [
        { crm_id: 'd-alice', name: 'Acme platform', amount: 15000, currency: 'EUR', pipeline: 'Sales', stage: 'Won', bucket: 'won', company_crm_id: 'acme', contact_crm_ids: ['c-alice'], created_at: ago(60), closed_at: ago(1), updated_at: ago(1) },
      ]);
      const changed = await waitFor('the deal.stage_changed change', async () => {
        const r = await get('/v1/changes?types=deal.stage_changed');
        return r.body.changes?.length === 1 ? r.body.changes[0] : undefined;
      });
      expect(changed).toMatchObject({
        type: 'deal.stage_changed', source: 'import', object_type: 'deal', object_id: deals['d-alice']?.['id'],
        data: { stage: { name: 'Won', normalized_bucket: 'won' }, old_stage: { normalized_bucket: 'open' }, amount: 15000 },
      });
      const after = await dealsByCrmId('&stage_bucket=won');
      expect(Object.keys(after)).toEqual(['d-alice', 'd-bob']);
      expect(after['d-alice']).toMatchObject({ amount: 15000, first_touch: { channel: 'Paid Search' } });
    });
  });
}
