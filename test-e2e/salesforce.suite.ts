// Salesforce, end to end. A stand-in org (services/crm-sync/test/salesforce-server.ts: JWT bearer
// login verified with the app's RS256 public key, SOQL query / queryAll, sObject PATCH,
// Sforce-Limit-Info) is seeded with 5,000+ leads, contacts, accounts and opportunities with their
// stage histories. Three dozen of its contacts browse the site first (visits to /collect from paid
// search, organic search, email, referral, paid social, direct) and convert with their email
// (POST /v1/events); their opportunities move through the stages after that. Salesforce is
// connected through the admin API with a Contact write-back mapping onto two custom fields, and:
//   - a full sync mirrors every opportunity (/v1/deals), account (/v1/companies) and the org's
//     OpportunityStage picklist in order with its buckets (/v1/pipelines);
//   - /v1/metrics?metrics=milestones&stages=proposal_price_quote&group_by=channel equals the
//     attribution oracle's milestone credit (services/attribution/test/oracle/milestones.ts) under
//     last_touch (the default), first_touch and linear, computed from the org's OpportunityHistory
//     and the visits as sent;
//   - 50 edits and 5 deletions in the org, then an incremental sync, read with a fixed handful of
//     query calls (the full sync needed dozens) and show in the API and the mirror;
//   - PATCH /v1/contacts/{id} (status, sales value) lands on the person's Salesforce Contact in the
//     mapped fields with exactly one sObject PATCH.
// Written once, run on both driver profiles; the kill -9 of crm-sync while Salesforce's answer to
// the write-back is held is in salesforce.int.test.ts (helpers exported below; those the CRM suites
// share are in crm-e2e.ts).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { RunningProcess } from '@sightline/kit';
import { stageKey } from '@sightline/proto-schemas';
import {
  buildDataset,
  emailConversionsOf,
  milestoneCredit,
  type OracleEvent,
  type OracleMilestone,
  type RuleModel,
} from '../services/attribution/test/oracle';
import { seedOrg, startSalesforceServer, type SalesforceServer, type SalesforceServerOptions } from '../services/crm-sync/test/salesforce-server';
import {
  DAY,
  HOUR,
  MINUTE,
  browseAndConvert as browseAndConvertPeople,
  connectCrm,
  expectJourneys,
  findConversions,
  holdingProxy,
  patchOutcome,
  rounded,
  sum,
  syncAndWait,
  waitFor,
  writebacksDone,
  type Browsed,
  type CrmAdmin,
  type HoldingProxy,
  startCrmStack,
  type Json,
  type PublicApi,
} from './crm-e2e';
import type { DriverProfile } from './ingest.suite';
import type { Stack } from './stack';

export const SALESFORCE_SERVICES = ['gateway', 'ingest', 'attribution', 'contacts', 'crm-sync'];
export const SF_CLIENT = '3MVG9sightline.e2e.client';
export const SF_USER = 'integration@sightline.test';
/** The Contact write-back mapping onto two custom fields the org declares. */
export const WRITEBACK_SETTINGS = { writeback: { Contact: { status: 'Sightline_Status__c', sales_value: 'Sightline_Sales_Value__c' } } };
/** The stage the milestone metrics are checked on: "Proposal/Price Quote" keyed as stages= expects. */
export const STAGE = 'Proposal/Price Quote';


/** The stand-in with the connected app's public key and the write-back fields declared; `credentials` carry the private key (PKCS#8 PEM). */
export interface SalesforceStandIn {
  sf: SalesforceServer;
  options: SalesforceServerOptions;
  credentials: { client_id: string; username: string; private_key: string };
}

export async function startSalesforceStandIn(): Promise<SalesforceStandIn> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const options: SalesforceServerOptions = {
    clientIds: [SF_CLIENT],
    usernames: [SF_USER],
    jwtPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    dailyAllocation: 1_000_000,
    customFields: [
      { type: 'Contact', name: 'Sightline_Status__c', kind: 'string' },
      { type: 'Contact', name: 'Sightline_Sales_Value__c', kind: 'currency' },
    ],
  };
  const sf = await startSalesforceServer(options);
  return { sf, options, credentials: { client_id: SF_CLIENT, username: SF_USER, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() } };
}

/** 5,000+ records: 500 accounts, 1,800 contacts, 1,700 leads, 1,000 opportunities with stage histories, all up to `end`. */
export function seedLargeOrg(sf: SalesforceServer, end: number): void {
  seedOrg(sf.org, { accounts: 500, contacts: 1800, leads: 1700, opportunities: 1000, seed: 26, end: new Date(end), days: 60 });
}

// ───────────────────────────── browsing people ─────────────────────────────

/** One of the org's contacts who browses, converts, and gets an opportunity afterwards. */
export interface Browser extends Browsed {
  contactId: string;
  accountId: string;
  opportunityId: string;
}

/** The org's contacts on accounts, every `step`-th, `count` of them. */
export function pickContacts(sf: SalesforceServer, count: number, step = 37): { id: string; email: string; accountId: string }[] {
  const onAccounts = sf.org.all('Contact').filter((c) => typeof c['AccountId'] === 'string' && typeof c['Email'] === 'string');
  const out: { id: string; email: string; accountId: string }[] = [];
  for (let i = 0; out.length < count && i < onAccounts.length; i += step) {
    const c = onAccounts[i]!;
    out.push({ id: String(c['Id']), email: String(c['Email']), accountId: String(c['AccountId']) });
  }
  return out;
}

/**
 * Each picked contact visits and converts with its email before `t0` (crm-e2e.ts browseAndConvert:
 * 2 page views per visit, visits 7 hours apart ending 3 days before `t0`, the conversion 2.5 days
 * before `t0`, every fifth email in upper case); the oracle's events are returned alongside.
 */
export async function browseAndConvert(base: string, publicId: string, key: string, contacts: { id: string; email: string; accountId: string }[], t0: number): Promise<{ browsers: Browser[]; events: OracleEvent[] }> {
  const people = contacts.map((c) => ({ contactId: c.id, accountId: c.accountId, email: c.email, opportunityId: '' }));
  return browseAndConvertPeople(base, publicId, key, people, t0, 'sf');
}



/**
 * An opportunity for each browser on its account, with it as the (only) contact role, walking
 * Prospecting (2 days before t0) → Qualification → Proposal/Price Quote, a third of them on to
 * Closed Won: every stage after the person's visits and conversion.
 */
export function opportunitiesAfterConversion(sf: SalesforceServer, browsers: Browser[], t0: number): void {
  for (const [i, b] of browsers.entries()) {
    const created = t0 - 2 * DAY + i * MINUTE;
    const id = sf.org.insert('Opportunity', { Name: `Sightline deal ${i + 1}`, Amount: 10_000 + i * 100, CurrencyIsoCode: 'USD', StageName: 'Prospecting', CloseDate: new Date(t0 + 30 * DAY).toISOString().slice(0, 10), AccountId: b.accountId }, created);
    sf.org.insert('OpportunityContactRole', { OpportunityId: id, ContactId: b.contactId, Role: 'Decision Maker', IsPrimary: true }, created);
    sf.org.update('Opportunity', id, { StageName: 'Qualification' }, created + 6 * HOUR);
    sf.org.update('Opportunity', id, { StageName: STAGE }, created + 16 * HOUR);
    if (i % 3 === 0) sf.org.update('Opportunity', id, { StageName: 'Closed Won' }, created + 30 * HOUR);
    b.opportunityId = id;
  }
}

/**
 * The deal stage milestones the org's history implies (one per opportunity and stage entered, at
 * the first time it entered it, id salesforce:deal:<id>:<stage key>), about the deal's first
 * contact role's email (the mirror's `email` of a deal milestone).
 */
export function stageMilestones(sf: SalesforceServer): OracleMilestone[] {
  const emailOf = new Map(sf.org.all('Contact').map((c) => [String(c['Id']), typeof c['Email'] === 'string' ? String(c['Email']) : null]));
  const roleOf = new Map<string, string>();
  for (const r of sf.org.all('OpportunityContactRole')) if (!roleOf.has(String(r['OpportunityId']))) roleOf.set(String(r['OpportunityId']), String(r['ContactId']));
  const live = new Set(sf.org.all('Opportunity').map((o) => String(o['Id'])));
  const history = sf.org.all('OpportunityHistory').filter((h) => live.has(String(h['OpportunityId'])));
  history.sort((a, b) => String(a['CreatedDate']).localeCompare(String(b['CreatedDate'])) || String(a['Id']).localeCompare(String(b['Id'])));
  const out: OracleMilestone[] = [];
  for (const h of history) {
    const deal = String(h['OpportunityId']);
    const contact = roleOf.get(deal);
    out.push({
      id: `salesforce:deal:${deal}:${stageKey(String(h['StageName']))}`,
      stage: stageKey(String(h['StageName'])),
      occurred_at: new Date(Date.parse(String(h['CreatedDate']).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))).toISOString(),
      email: contact ? (emailOf.get(contact) ?? null) : null,
    });
  }
  return out;
}

/** Connects the org through the admin API; returns the connection id. */
export async function connectSalesforce(admin: CrmAdmin, website: { id: string; workspace_id: string }, credentials: SalesforceStandIn['credentials'], settings: Json): Promise<string> {
  return connectCrm(admin, website, 'salesforce', credentials, settings, 'PRIVATE KEY');
}


export const patchesTo = (sf: SalesforceServer, type: string, id: string) => sf.calls.filter((c) => c.method === 'PATCH' && c.path.endsWith(`/sobjects/${type}/${id}`));

// ───────────────────────────── a proxy that holds Salesforce's answers ─────────────────────────────

/**
 * crm-e2e.ts's holding proxy playing both hosts: the login answer's instance_url is rewritten to
 * the proxy, so every data call goes through it too. While `holding`, a PATCH reaches the org
 * (which applies it) but its answer never comes back. Every PATCH body is recorded.
 */
export type SalesforceProxy = HoldingProxy;

export function salesforceProxy(target: string): Promise<SalesforceProxy> {
  return holdingProxy(target, (path, answer, proxyUrl) => {
    if (!path.startsWith('/services/oauth2/token')) return answer;
    const token = JSON.parse(answer.toString('utf8')) as Json;
    token['instance_url'] = proxyUrl;
    return Buffer.from(JSON.stringify(token));
  });
}


// ───────────────────────────── the suite ─────────────────────────────

const dataCalls = (sf: SalesforceServer, from: number) => sf.calls.slice(from).filter((c) => ['query', 'queryMore', 'queryAll', 'getDeleted', 'bulkCreate', 'bulkResults'].includes(c.endpoint));

export function describeSalesforce(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`Salesforce connector end to end (${profileName})`, () => {
    let profile: DriverProfile;
    let stack: Stack;
    let proc: RunningProcess;
    let standIn: SalesforceStandIn;
    let sf: SalesforceServer;
    let admin: CrmAdmin;
    let base: string;
    let key: string;
    let publicId: string;
    let website: { id: string; workspace_id: string };
    let connectionId = '';
    let browsers: Browser[] = [];
    let oracleEvents: OracleEvent[] = [];
    let fullSyncRecords = 0;
    const t0 = Date.now();
    const window = { fromMs: t0 - 70 * DAY, toMs: t0 + DAY };
    let api: PublicApi;
    const expectedCredit = (stage: string, model: RuleModel): Record<string, number> => {
      const d = buildDataset(oracleEvents);
      const credit = milestoneCredit({ milestones: stageMilestones(sf), sessions: d.sessions, conversions: emailConversionsOf(d), stages: [stage], model, window });
      return Object.fromEntries([...credit].map(([channel, n]) => [channel, Math.round(n * 1e9) / 1e9]));
    };

    beforeAll(async () => {
      profile = await makeProfile();
      standIn = await startSalesforceStandIn();
      sf = standIn.sf;
      seedLargeOrg(sf, t0 - 2 * DAY - HOUR);
      ({ stack, proc, base, admin, publicId, website, key, api } = await startCrmStack(SALESFORCE_SERVICES, { ...profile.env, SIGHTLINE_SALESFORCE_LOGIN_URL: sf.url, SIGHTLINE_CREDENTIALS_KEY: 'salesforce-e2e-credentials-key' }, 'Salesforce', window));
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await sf?.close();
      await profile?.cleanup();
    }, 60_000);

    it('three dozen of the org\'s contacts browse from distinct channels and convert before their opportunities move', async () => {
      const org = { leads: sf.org.all('Lead').length, contacts: sf.org.all('Contact').length, accounts: sf.org.all('Account').length, opportunities: sf.org.all('Opportunity').length };
      expect(org.leads + org.contacts + org.accounts + org.opportunities).toBeGreaterThanOrEqual(5000);
      const picked = pickContacts(sf, 36);
      expect(picked).toHaveLength(36);
      ({ browsers, events: oracleEvents } = await browseAndConvert(base, publicId, key, picked, t0));
      await findConversions(base, key, browsers, t0);
      opportunitiesAfterConversion(sf, browsers, t0);
      // Attribution holds each person's sessions with the channels the oracle is given.
      await expectJourneys(api, browsers);
    }, 120_000);

    it('a full sync mirrors every opportunity, account and the stage picklist in order with its buckets', async () => {
      connectionId = await connectSalesforce(admin, website, standIn.credentials, WRITEBACK_SETTINGS);
      const done = await syncAndWait(admin, connectionId, true);
      fullSyncRecords = Number(done['last_sync_records']);
      expect(done).toMatchObject({ health: 'ok', last_error: null, paused_until: null });
      expect((done['api_usage'] as Json)['used']).toBeGreaterThan(0);

      expect(await api.totalOf('/v1/deals')).toBe(sf.org.all('Opportunity').length);
      expect(await api.totalOf('/v1/companies')).toBe(sf.org.all('Account').length);
      const pipelines = await api.get('/v1/pipelines');
      expect(pipelines.status).toBe(200);
      expect(pipelines.body.data).toHaveLength(1);
      const stages = sf.org.all('OpportunityStage').sort((a, b) => Number(a['SortOrder']) - Number(b['SortOrder']));
      expect((pipelines.body.data[0]!['stages'] as Json[]).map((s) => [s['name'], s['normalized_bucket']])).toEqual(
        stages.map((s) => [s['MasterLabel'], s['IsWon'] ? 'won' : s['IsClosed'] ? 'lost' : 'open']),
      );
      // A browser's deal: its stage, amount and contact (the conversion) as the org has them.
      const deals = await api.all('/v1/deals');
      const mine = deals.find((d) => d['crm_id'] === browsers[1]!.opportunityId);
      expect(mine).toMatchObject({ provider: 'salesforce', name: 'Sightline deal 2', amount: 10_100, stage: { name: STAGE, normalized_bucket: 'open' }, contact_ids: [browsers[1]!.conversionId] });
    }, 150_000);

    it('milestones of an opportunity stage per channel equal the oracle under last_touch (default), first_touch and linear', async () => {
      const stage = stageKey(STAGE);
      const expected = expectedCredit(stage, 'last_touch');
      const total = sum(expected);
      // The oracle's own sanity: the browsers' milestones are all credited to a channel.
      expect(total - (expected['Unattributed'] ?? 0)).toBeGreaterThanOrEqual(browsers.length);
      const last = await waitFor(`all ${total} ${stage} milestones in attribution`, async () => {
        const r = await api.milestonesByChannel(stage, undefined, true);
        return r.status === 200 && sum(r.rows) === total ? r : undefined;
      }, 100_000).catch(async (error: Error) => {
        const r = await api.milestonesByChannel(stage, undefined, true);
        throw new Error(`${error.message}; attribution answers ${r.status} ${JSON.stringify(r.problem ?? r.rows)}, the oracle ${JSON.stringify(expected)}`);
      });
      expect(String(last.meta['definitions'] && (last.meta['definitions'] as Json)['stages'])).toContain(stage);
      expect(String((last.meta['definitions'] as Json)['attribution_model'])).toMatch(/^last_touch/);
      expect(rounded(last.rows)).toEqual(expected);
      for (const model of ['first_touch', 'linear'] as const) {
        const got = await api.milestonesByChannel(stage, model);
        expect({ model, rows: rounded(got.rows) }).toEqual({ model, rows: expectedCredit(stage, model) });
      }
    }, 120_000);

    it('an incremental sync reads 50 edits and 5 deletions with a fixed handful of queries, and the API shows them', async () => {
      const browserDeals = new Set(browsers.map((b) => b.opportunityId));
      const browserContacts = new Set(browsers.map((b) => b.contactId));
      const withRoles = new Set(sf.org.all('OpportunityContactRole').map((r) => String(r['ContactId'])));
      const openDeals = sf.org.all('Opportunity').filter((o) => !o['IsClosed'] && !browserDeals.has(String(o['Id'])));
      const accounts = sf.org.all('Account');
      const quietContacts = sf.org.all('Contact').filter((c) => !browserContacts.has(String(c['Id'])) && !withRoles.has(String(c['Id'])));
      const leads = sf.org.all('Lead').filter((l) => l['IsConverted'] !== true);
      // 20 stage moves, 15 email changes, 15 renames: 50 edits.
      const moved = openDeals.slice(0, 20).map((o) => String(o['Id']));
      for (const id of moved) sf.org.update('Opportunity', id, { StageName: 'Closed Won' });
      const emailed = quietContacts.slice(0, 15).map((c, i) => ({ id: String(c['Id']), email: `moved.${i}.${randomUUID().slice(0, 6)}@example.org` }));
      for (const c of emailed) sf.org.update('Contact', c.id, { Email: c.email });
      const renamed = accounts.slice(0, 15).map((a, i) => ({ id: String(a['Id']), name: `Renamed account ${i}` }));
      for (const a of renamed) sf.org.update('Account', a.id, { Name: a.name });
      // 5 deletions: 2 opportunities, 2 leads, 1 contact on no opportunity.
      const deleted = { deals: openDeals.slice(20, 22).map((o) => String(o['Id'])), leads: leads.slice(0, 2).map((l) => String(l['Id'])), contacts: [String(quietContacts[20]!['Id'])] };
      for (const id of deleted.deals) sf.org.remove('Opportunity', id);
      for (const id of deleted.leads) sf.org.remove('Lead', id);
      for (const id of deleted.contacts) sf.org.remove('Contact', id);

      const before = sf.calls.length;
      const done = await syncAndWait(admin, connectionId);
      expect(done).toMatchObject({ health: 'ok', last_error: null });
      const calls = dataCalls(sf, before);
      // One query per phase (stages, accounts, leads, contacts, opportunities + their roles and
      // history, changed roles) and one queryAll per object for deletions: 12, whatever the org's size.
      const byEndpoint = calls.reduce<Record<string, number>>((acc, c) => ({ ...acc, [c.endpoint]: (acc[c.endpoint] ?? 0) + 1 }), {});
      expect({ total: calls.length <= 12, byEndpoint }).toEqual({ total: true, byEndpoint: { query: expect.any(Number), queryAll: 4 } });
      // And they read only what changed: a few dozen records, where the full sync read the org.
      expect(fullSyncRecords).toBeGreaterThan(4000); // the org less its converted leads
      expect(Number(done['last_sync_records'])).toBeLessThan(fullSyncRecords / 50);
      // Only changed rows were asked for: every query of the incremental sync has a lower bound.
      for (const c of calls.filter((x) => x.endpoint === 'query' && !/FROM (OpportunityStage|OpportunityContactRole WHERE OpportunityId|OpportunityHistory|Opportunity WHERE Id IN)/.test(x.query['q'] ?? ''))) {
        expect(c.query['q']).toMatch(/SystemModstamp >= /);
      }

      const deals = await api.all('/v1/deals');
      expect(deals).toHaveLength(sf.org.all('Opportunity').length);
      const dealBy = new Map(deals.map((d) => [String(d['crm_id']), d]));
      for (const id of moved) expect({ id, stage: dealBy.get(id)?.['stage'] }).toEqual({ id, stage: expect.objectContaining({ name: 'Closed Won', normalized_bucket: 'won' }) });
      for (const id of deleted.deals) expect(dealBy.has(id)).toBe(false);
      const companies = await api.all('/v1/companies');
      expect(companies).toHaveLength(sf.org.all('Account').length);
      const companyBy = new Map(companies.map((c) => [String(c['crm_id']), c]));
      for (const a of renamed) expect({ id: a.id, name: companyBy.get(a.id)?.['name'] }).toEqual({ id: a.id, name: a.name });
      // Contacts are not on the public API with their emails: the mirror is read directly.
      const store = await proc.stores.sql('crm_sync');
      const mirrored = await store.query<{ crm_id: string; email: string | null }>('SELECT crm_id, email FROM crm_contacts WHERE website_id = $1', [website.id]);
      const emailBy = new Map(mirrored.rows.map((r) => [r.crm_id, r.email]));
      for (const c of emailed) expect({ id: c.id, email: emailBy.get(c.id) }).toEqual({ id: c.id, email: c.email });
      for (const id of [...deleted.leads, ...deleted.contacts]) expect({ id, mirrored: emailBy.has(id) }).toEqual({ id, mirrored: false });
      const liveContacts = sf.org.all('Contact').length + sf.org.all('Lead').filter((l) => l['IsConverted'] !== true).length;
      expect(mirrored.rows).toHaveLength(liveContacts);
    }, 150_000);

    it('PATCH /v1/contacts/{id} writes the outcome onto the person\'s Salesforce Contact once, in the mapped fields', async () => {
      const b = browsers[0]!;
      const before = patchesTo(sf, 'Contact', b.contactId).length;
      expect(before).toBe(0);
      await patchOutcome(base, key, b.conversionId, { status: 'won', sales_value: 4200 });
      const rows = await writebacksDone(admin, website.id, b.conversionId);
      expect(rows).toHaveLength(1);
      expect(sf.org.get('Contact', b.contactId)).toMatchObject({ Sightline_Status__c: 'won', Sightline_Sales_Value__c: 4200, Email: b.email });
      // Another sync afterwards (the Contact changed in Salesforce: it comes back) writes nothing more.
      await syncAndWait(admin, connectionId);
      await new Promise((r) => setTimeout(r, 1500));
      expect(patchesTo(sf, 'Contact', b.contactId)).toHaveLength(1);
      expect(sf.calls.filter((c) => c.method === 'PATCH')).toHaveLength(1);
    }, 120_000);
  });
}
