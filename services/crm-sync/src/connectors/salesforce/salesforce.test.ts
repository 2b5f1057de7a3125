// The Salesforce connector against the local stand-in (test/salesforce-server.ts), which answers
// as Salesforce documents: OAuth token endpoint (JWT bearer verified for real, refresh tokens),
// SOQL query with batches, sObject PATCH, Sforce-Limit-Info on every answer and the daily
// allocation. The connector only knows the login URL.
import { generateKeyPairSync } from 'node:crypto';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { CrmDeal, CrmRecords } from '../../records';
import { seedOrg, startSalesforceServer, type SalesforceServer } from '../../../test/salesforce-server';
import { providerError } from '../../../test/provider-error';
import type { Connector, ConnectionSettings, Credentials, PullPage } from '../connector';
import { createSalesforceConnector } from './salesforce.connector';
import { stageHistory, type SfRecord } from './mapping';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const CLIENT = '3MVG9sightline.test.client';
const USER = 'integration@sightline.test';

async function collect(pages: AsyncIterable<PullPage>, limit = Number.POSITIVE_INFINITY): Promise<PullPage[]> {
  const out: PullPage[] = [];
  for await (const page of pages) {
    out.push(page);
    if (out.length >= limit) break;
  }
  return out;
}

function merged(pages: PullPage[]): Required<Pick<CrmRecords, 'contacts' | 'companies' | 'deals' | 'pipelines'>> {
  const byId = <T extends { crm_id: string }>(list: T[]): T[] => [...new Map(list.map((r) => [r.crm_id, r])).values()];
  return {
    pipelines: pages.flatMap((p) => p.records.pipelines ?? []),
    companies: byId(pages.flatMap((p) => p.records.companies ?? [])),
    contacts: byId(pages.flatMap((p) => p.records.contacts ?? [])),
    deals: byId(pages.flatMap((p) => p.records.deals ?? [])),
  };
}

describe('Salesforce connector (stand-in org)', () => {
  let sf: SalesforceServer;
  let connector: Connector;
  let jwt: Credentials;
  let clockMs = Date.parse('2026-11-20T12:00:00.000Z');
  const now = (): Date => new Date(clockMs);
  const signal = new AbortController().signal;
  const settings: ConnectionSettings = { page_size: 100 };
  const pull = (over: { credentials?: Credentials; settings?: ConnectionSettings; cursor?: string | null; since?: string | null } = {}) =>
    connector.pull({ credentials: over.credentials ?? jwt, settings: over.settings ?? settings, cursor: over.cursor ?? null, since: over.since ?? null, signal });

  beforeAll(async () => {
    sf = await startSalesforceServer({
      now, clientIds: [CLIENT], usernames: [USER], jwtPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      dailyAllocation: 100_000,
    });
    seedOrg(sf.org, { accounts: 60, contacts: 150, leads: 120, opportunities: 180, seed: 7, end: now(), days: 60 });
    connector = createSalesforceConnector({ loginUrl: sf.url, now });
    jwt = { client_id: CLIENT, username: USER, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  });

  afterAll(async () => {
    await sf?.close();
  });

  it('pulls the whole org through the JWT bearer flow: stages, accounts, leads, contacts and opportunities with roles and history', async () => {
    const pages = await collect(pull());
    const got = merged(pages);
    expect(pages.at(-1)!.cursor).toBeNull();
    expect(pages.slice(0, -1).every((p) => p.cursor !== null)).toBe(true);
    // Stages from OpportunityStage, in order, bucketed by IsWon / IsClosed.
    const pipeline = got.pipelines[0]!;
    expect(pipeline.id).toBe('opportunities');
    expect(pipeline.stages.map((s) => [s.id, s.bucket])).toEqual(
      sf.org.all('OpportunityStage').sort((a, b) => Number(a['SortOrder']) - Number(b['SortOrder'])).map((s) => [s['ApiName'], s['IsWon'] ? 'won' : s['IsClosed'] ? 'lost' : 'open']),
    );
    expect(got.companies.map((c) => c.crm_id).sort()).toEqual(sf.org.all('Account').map((a) => String(a['Id'])).sort());
    const people = [...sf.org.all('Contact'), ...sf.org.all('Lead').filter((l) => l['IsConverted'] !== true)];
    expect(got.contacts.map((c) => c.crm_id).sort()).toEqual(people.map((p) => String(p['Id'])).sort());
    const contact = sf.org.all('Contact').find((c) => c['Email'] && c['AccountId'])!;
    expect(got.contacts.find((c) => c.crm_id === contact['Id'])).toMatchObject({ email: String(contact['Email']).toLowerCase(), company_crm_id: contact['AccountId'] });

    const opportunities = sf.org.all('Opportunity');
    expect(got.deals).toHaveLength(opportunities.length);
    const roles = sf.org.all('OpportunityContactRole');
    const history = sf.org.all('OpportunityHistory');
    for (const o of opportunities) {
      const deal = got.deals.find((d) => d.crm_id === o['Id']) as CrmDeal;
      expect(deal).toMatchObject({ name: o['Name'], stage_id: o['StageName'], pipeline_id: 'opportunities', company_crm_id: o['AccountId'] ?? null, amount: o['Amount'] ?? null });
      expect([...deal.contact_crm_ids].sort()).toEqual([...new Set(roles.filter((r) => r['OpportunityId'] === o['Id']).map((r) => String(r['ContactId'])))].sort());
      const own = history.filter((h) => h['OpportunityId'] === o['Id']) as unknown as SfRecord[];
      expect(deal.stage_history ?? []).toEqual(stageHistory(own));
    }
    // Some deals really moved through stages, and closed ones carry the time they closed.
    expect(got.deals.some((d) => (d.stage_history?.length ?? 0) >= 3)).toBe(true);
    const closed = got.deals.find((d) => d.closed_at !== null)!;
    expect(closed.closed_at).toBe(closed.stage_history!.at(-1)!.at);
    expect(pages.at(-1)!.usage).toMatchObject({ limit: 100_000 });
  });

  it('maps the org\'s lifecycle values onto stage keys as the connection says, and leaves the rest as they are', async () => {
    const pages = await collect(pull({ settings: { ...settings, lifecycle_stages: { 'Working - Contacted': 'mql' } } }));
    const leads = sf.org.all('Lead').filter((l) => l['IsConverted'] !== true);
    const contacts = merged(pages).contacts;
    const working = leads.find((l) => l['Status'] === 'Working - Contacted')!;
    const other = leads.find((l) => l['Status'] && l['Status'] !== 'Working - Contacted')!;
    expect(contacts.find((c) => c.crm_id === working['Id'])!.lifecycle_stage).toBe('mql');
    expect(contacts.find((c) => c.crm_id === other['Id'])!.lifecycle_stage).toBe(other['Status']);
  });

  it('resumes from any page\'s cursor and ends with the same records', async () => {
    const all = merged(await collect(pull()));
    const first = await collect(pull(), 4);
    const rest = await collect(pull({ cursor: first.at(-1)!.cursor }));
    const resumed = merged([...first, ...rest]);
    expect(resumed.deals.map((d) => d.crm_id).sort()).toEqual(all.deals.map((d) => d.crm_id).sort());
    expect(resumed.contacts.length).toBe(all.contacts.length);
  });

  it('reads only what changed since, including opportunities whose contact roles changed', async () => {
    const since = now().toISOString();
    clockMs += 60_000;
    const opportunity = sf.org.all('Opportunity').find((o) => o['IsClosed'] === false)!;
    sf.org.update('Opportunity', String(opportunity['Id']), { StageName: 'Negotiation/Review' });
    const contact = sf.org.all('Contact')[3]!;
    sf.org.update('Contact', String(contact['Id']), { Email: 'moved@acme.test' });
    const other = sf.org.all('Opportunity').find((o) => o['Id'] !== opportunity['Id'])!;
    sf.org.insert('OpportunityContactRole', { OpportunityId: String(other['Id']), ContactId: String(contact['Id']), Role: 'Decision Maker', IsPrimary: false });
    const before = sf.calls.length;
    const got = merged(await collect(pull({ since })));
    expect(got.deals.map((d) => d.crm_id).sort()).toEqual([String(opportunity['Id']), String(other['Id'])].sort());
    expect(got.contacts.map((c) => c.crm_id)).toEqual([String(contact['Id'])]);
    expect(got.companies).toEqual([]);
    const moved = got.deals.find((d) => d.crm_id === opportunity['Id'])!;
    expect(moved.stage_history!.at(-1)).toEqual({ stage_id: 'Negotiation/Review', pipeline_id: 'opportunities', at: now().toISOString() });
    expect(got.deals.find((d) => d.crm_id === other['Id'])!.contact_crm_ids).toContain(String(contact['Id']));
    // A fixed handful of calls, not a re-read of the org: one query per phase (stages, 4 objects,
    // roles, 4 deletion checks), plus the roles and history of the changed opportunities (2 + 2)
    // and the one opportunity read for its changed role.
    expect(sf.calls.length - before).toBeLessThanOrEqual(15);
  });

  it('reports what was deleted since, object by object, and nothing of it on a full pull', async () => {
    const since = now().toISOString();
    clockMs += 60_000;
    const lead = sf.org.all('Lead').find((l) => l['IsConverted'] !== true)!;
    const account = sf.org.all('Account').at(-1)!;
    const opportunity = sf.org.all('Opportunity').find((o) => o['AccountId'] !== account['Id'])!;
    sf.org.remove('Lead', String(lead['Id']));
    sf.org.remove('Opportunity', String(opportunity['Id']));
    sf.org.remove('Account', String(account['Id']));
    const pages = await collect(pull({ since }));
    const deleted = {
      companies: pages.flatMap((p) => p.records.deleted?.companies ?? []),
      contacts: pages.flatMap((p) => p.records.deleted?.contacts ?? []).sort(),
      deals: pages.flatMap((p) => p.records.deleted?.deals ?? []).sort(),
    };
    // Deleting an account takes its contacts and opportunities with it, as Salesforce does.
    const cascaded = (type: 'Contact' | 'Opportunity') => sf.org.all(type, { includeDeleted: true }).filter((r) => r['AccountId'] === account['Id']).map((r) => String(r['Id']));
    expect(deleted.companies).toEqual([String(account['Id'])]);
    expect(deleted.contacts).toEqual([String(lead['Id']), ...cascaded('Contact')].sort());
    expect(deleted.deals).toEqual([String(opportunity['Id']), ...cascaded('Opportunity')].sort());
    const full = await collect(pull());
    expect(full.some((p) => p.records.deleted !== undefined)).toBe(false);
    expect(merged(full).contacts.some((c) => c.crm_id === lead['Id'])).toBe(false);
  });

  it('pauses at the configured share of the daily allocation and resumes where it stopped', async () => {
    const full = merged(await collect(pull()));
    sf.resetAllocation(40);
    // A full pull of this org takes 12 calls; a fifth of 40 (8) is reached midway.
    const paused = await collect(pull({ settings: { ...settings, max_api_share: 0.2, pause_minutes: 30 } }));
    const last = paused.at(-1)!;
    expect(last.pause).toEqual({ until: new Date(clockMs + 30 * 60_000).toISOString(), reason: expect.stringContaining('max_api_share 0.2)') });
    expect(last.cursor).not.toBeNull();
    expect(sf.usage().used).toBeGreaterThanOrEqual(8);
    expect(sf.usage().used).toBeLessThan(12);
    // Every page before the pause was below the share.
    expect(paused.slice(0, -1).every((p) => p.usage!.used / p.usage!.limit < 0.2 && !p.pause)).toBe(true);
    sf.resetAllocation(100_000);
    const rest = await collect(pull({ cursor: last.cursor }));
    expect(rest.at(-1)!.cursor).toBeNull();
    const resumed = merged([...paused, ...rest]);
    expect(resumed.deals.length).toBe(full.deals.length);
    expect(resumed.contacts.length).toBe(full.contacts.length);
  });

  it('treats REQUEST_LIMIT_EXCEEDED as a pause at the same cursor, never a failure', async () => {
    const first = await collect(pull(), 2);
    sf.resetAllocation(0);
    const refused = await collect(pull({ cursor: first.at(-1)!.cursor }));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ records: {}, cursor: first.at(-1)!.cursor, pause: { reason: expect.stringContaining('REQUEST_LIMIT_EXCEEDED') } });
    sf.resetAllocation(100_000);
  });

  it('logs in again once when the session is revoked, and reports bad credentials readably without retrying', async () => {
    await collect(pull(), 1);
    const token = sf.calls.filter((c) => c.endpoint === 'token').length;
    for (const session of sf.issuedTokens?.() ?? []) sf.revokeToken(session);
    await collect(pull(), 2);
    expect(sf.calls.filter((c) => c.endpoint === 'token').length).toBeGreaterThanOrEqual(token);

    const stranger = await providerError(collect(pull({ credentials: { ...jwt, username: 'nobody@elsewhere.test' } })));
    expect(stranger).toMatchObject({ retryable: false });
    expect(stranger.message).toMatch(/^Salesforce login \(JWT bearer flow\) refused: invalid_grant/);
    const refresh = await providerError(collect(pull({ credentials: { client_id: CLIENT, client_secret: 'x', refresh_token: 'never-issued' } })));
    expect(refresh.message).toMatch(/refresh token\) refused: invalid_grant/);
  });

  it('answers a 5xx as retryable with Salesforce\'s error code', async () => {
    sf.failNext({ status: 503, body: [{ errorCode: 'SERVER_UNAVAILABLE', message: 'Server temporarily unavailable' }] });
    const error = await providerError(collect(pull({ since: now().toISOString() })));
    expect(error).toMatchObject({ retryable: true, status: 503 });
    expect(error.message).toContain('SERVER_UNAVAILABLE');
  });

  describe('write-back', () => {
    const request = (over: Partial<OutcomeWritebackRequestedV1>): OutcomeWritebackRequestedV1 => ({
      ...MESSAGE_EXAMPLES['outcome.writeback_requested'], requested_by: 'api:key1', ...over,
    });

    it('writes the mapped fields onto the Contact found by email, and a Lead\'s Status by default', async () => {
      sf.org.declareField('Contact', 'Sightline_Sales_Value__c', 'currency');
      const contact = sf.org.all('Contact').find((c) => c['Email'])!;
      const won = request({
        email: String(contact['Email']).toUpperCase(),
        changes: [{ field: 'sales_value', old_value: null, new_value: 4200 }, { field: 'notes', old_value: null, new_value: 'x' }],
        current: { ...MESSAGE_EXAMPLES['outcome.writeback_requested'].current, sales_value: 4200 },
      });
      const mapped = { writeback: { Contact: { sales_value: 'Sightline_Sales_Value__c' } } };
      const result = await connector.push(jwt, won, signal, undefined, mapped);
      expect(result).toEqual({ crm_id: contact['Id'], fields: { Sightline_Sales_Value__c: 4200 } });
      expect(sf.org.get('Contact', String(contact['Id']))!['Sightline_Sales_Value__c']).toBe(4200);

      const lead = sf.org.all('Lead').find((l) => l['IsConverted'] !== true)!;
      const status = request({ changes: [{ field: 'status', old_value: null, new_value: 'Working - Contacted' }], current: { ...won.current, status: 'Working - Contacted' } });
      expect(await connector.push(jwt, status, signal, { crm_id: String(lead['Id']) }, {})).toEqual({ crm_id: lead['Id'], fields: { Status: 'Working - Contacted' } });
      expect(sf.org.get('Lead', String(lead['Id']))!['Status']).toBe('Working - Contacted');
      // Nothing mapped for a Contact by default: nothing written, no call made.
      const calls = sf.calls.length;
      expect(await connector.push(jwt, status, signal, { crm_id: String(contact['Id']) }, {})).toEqual({ crm_id: contact['Id'], fields: {} });
      expect(sf.calls.length).toBe(calls);
    });

    it('reports a validation rule\'s refusal as permanent, naming the field, and an unknown email as not found', async () => {
      const lead = sf.org.all('Lead').find((l) => l['IsConverted'] !== true && l['Id'] !== undefined)!;
      sf.org.rejectWrite('Lead', String(lead['Id']), 'Status', 'Status cannot go back to Open');
      const status = request({ changes: [{ field: 'status', old_value: null, new_value: 'Open - Not Contacted' }], current: { ...MESSAGE_EXAMPLES['outcome.writeback_requested'].current, status: 'Open - Not Contacted' } });
      const refused = await providerError(connector.push(jwt, status, signal, { crm_id: String(lead['Id']) }, {}));
      expect(refused).toMatchObject({ retryable: false, status: 400 });
      expect(refused.message).toMatch(/FIELD_CUSTOM_VALIDATION_EXCEPTION: Status cannot go back to Open \(fields: Status\)/);
      sf.org.clearRules();
      const missing = await providerError(connector.push(jwt, request({ email: 'nobody@nowhere.test', changes: status.changes, current: status.current }), signal, undefined, {}));
      expect(missing).toMatchObject({ retryable: false, status: 404 });
    });

    it('checks settings and credentials before they are stored', () => {
      expect(connector.validateSettings!({})).toBeNull();
      expect(connector.validateSettings!({ max_api_share: 0 })).toMatch(/max_api_share/);
      expect(connector.validateSettings!({ max_api_share: 1 })).toBeNull();
      expect(connector.validateSettings!({ page_size: 2001 })).toMatch(/page_size/);
      expect(connector.validateSettings!({ writeback: { Opportunity: { status: 'StageName' } } })).toMatch(/Lead or Contact/);
      expect(connector.validateSettings!({ writeback: { Lead: { notes: 'Description' } } })).toMatch(/outcome fields are/);
      expect(connector.validateSettings!({ lead_stage_fields: 'Status' })).toMatch(/unknown Salesforce setting "lead_stage_fields"/);
      expect(connector.validateSettings!({ lifecycle_stages: { 'Working - Contacted': 'mql' } })).toBeNull();
      expect(connector.validateSettings!({ lifecycle_stages: { 'Working - Contacted': 'MQL!' } })).toMatch(/stage key/);
      expect(connector.validateCredentials!(jwt)).toBeNull();
      expect(connector.validateCredentials!({ client_id: CLIENT, private_key: jwt['private_key']! })).toMatch(/username/);
      expect(connector.validateCredentials!({ client_id: CLIENT, refresh_token: 'r' })).toMatch(/client_secret/);
      expect(connector.validateCredentials!({ access_token: 'x' })).toMatch(/instance_url/);
      expect(connector.validateCredentials!({ access_token: 'x', instance_url: 'https://acme.my.salesforce.com', password: 'p' })).toMatch(/do not take password/);
      expect(connector.validateCredentials!({ token: 'x' })).toMatch(/JWT bearer flow/);
    });
  });
});
