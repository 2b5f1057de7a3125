// The HubSpot connector against the local HubSpot (test/hubspot-server.ts): what a pull
// yields and in which order, resuming from a cursor, incremental pulls through search (and past
// its result cap), staying within the stated rate limits, errors, and write-back.
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { FakeHubspot, seedExampleCrm, type ExampleCrm, type FakeHubspotOptions } from '../../../test/hubspot-server';
import { ProviderError, type Connector, type PullPage } from '../connector';
import { createHubspotConnector, type HubspotConnectorOptions } from './hubspot.connector';
import { stageBucket } from './mapping';

const signal = new AbortController().signal;

async function collect(pages: AsyncIterable<PullPage>, stopAfter = Infinity): Promise<PullPage[]> {
  const out: PullPage[] = [];
  for await (const page of pages) {
    out.push(page);
    if (out.length >= stopAfter) break;
  }
  return out;
}

async function setup(server: FakeHubspotOptions = {}, connector: HubspotConnectorOptions = {}): Promise<{ fake: FakeHubspot; crm: ExampleCrm; hubspot: Connector; credentials: { access_token: string } }> {
  const fake = new FakeHubspot(server);
  await fake.start();
  const crm = seedExampleCrm(fake);
  const hubspot = createHubspotConnector({ baseUrl: fake.url, ...connector });
  return { fake, crm, hubspot, credentials: { access_token: fake.token } };
}

describe('HubSpot connector', () => {
  const servers: FakeHubspot[] = [];
  const started = async (...args: Parameters<typeof setup>) => {
    const s = await setup(...args);
    servers.push(s.fake);
    return s;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('maps stage metadata to buckets', () => {
    const stage = (isClosed: string | boolean | undefined, probability: string | number | undefined) => stageBucket({ id: 's', label: 'S', displayOrder: 0, metadata: { isClosed, probability } });
    expect(stage('true', '1.0')).toBe('won');
    expect(stage(true, 1)).toBe('won');
    expect(stage('true', '0.0')).toBe('lost');
    expect(stage('false', '0.9')).toBe('open');
    expect(stage('true', '0.5')).toBe('other');
    expect(stage(undefined, undefined)).toBe('other');
  });

  it('pulls pipelines, companies, contacts and deals in that order, a page per call', async () => {
    const { fake, crm, hubspot, credentials } = await started({ maxPageSize: 2 });
    const pages = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since: null, signal }));

    const kinds = pages.map((p) => (['pipelines', 'companies', 'contacts', 'deals'] as const).filter((k) => (p.records[k]?.length ?? 0) > 0)[0]);
    expect(kinds).toEqual(['pipelines', 'companies', 'companies', 'contacts', 'contacts', 'contacts', 'deals', 'deals']);
    expect(pages.at(-1)?.cursor).toBeNull();
    expect(pages.slice(0, -1).every((p) => typeof p.cursor === 'string')).toBe(true);

    const pipelines = pages.flatMap((p) => p.records.pipelines ?? []);
    expect(pipelines.find((p) => p.id === 'default')?.stages.map((s) => [s.id, s.bucket])).toEqual([
      ['appointmentscheduled', 'open'], ['qualifiedtobuy', 'open'], ['contractsent', 'open'], ['closedwon', 'won'], ['closedlost', 'lost'],
    ]);
    expect(pipelines.find((p) => p.id === 'renewals')?.stages.map((s) => s.bucket)).toEqual(['open', 'won', 'other']);

    const contacts = pages.flatMap((p) => p.records.contacts ?? []);
    expect(contacts.find((c) => c.crm_id === crm.contacts.ada)).toMatchObject({ email: 'ada@acme.com', lifecycle_stage: 'lead', company_crm_id: crm.companies.acme });
    expect(contacts.find((c) => c.crm_id === crm.contacts.eve)?.company_crm_id).toBeNull();

    const deals = pages.flatMap((p) => p.records.deals ?? []);
    expect(deals).toHaveLength(4);
    expect(deals.find((d) => d.crm_id === crm.deals.expansion)).toMatchObject({
      name: 'Acme expansion', amount: 12000, currency: 'EUR', pipeline_id: 'default', stage_id: 'qualifiedtobuy',
      company_crm_id: crm.companies.acme, closed_at: null,
    });
    expect(deals.find((d) => d.crm_id === crm.deals.expansion)?.contact_crm_ids.sort()).toEqual([crm.contacts.ada, crm.contacts.bob].sort());
    expect(deals.find((d) => d.crm_id === crm.deals.pilot)).toMatchObject({ closed_at: '2026-03-01T10:00:00.000Z', contact_crm_ids: [crm.contacts.cy] });
    expect(deals.find((d) => d.crm_id === crm.deals.renewal)).toMatchObject({ amount: null, currency: null });

    const dealCalls = fake.requests.filter((r) => r.path === '/crm/v3/objects/deals');
    expect(dealCalls[0]?.query).toMatchObject({ limit: '100', associations: 'companies,contacts', archived: 'false' });
    expect(dealCalls[0]?.query['properties']?.split(',')).toEqual(expect.arrayContaining(['dealname', 'dealstage', 'pipeline', 'hs_is_closed']));
    expect(dealCalls[1]?.query['after']).toBeDefined();
  });

  it('resumes from a cursor at exactly the next page', async () => {
    const { fake, hubspot, credentials } = await started({ maxPageSize: 2 });
    const first = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since: null, signal }), 4);
    const requestsBefore = fake.requests.length;
    const rest = await collect(hubspot.pull({ credentials, settings: {}, cursor: first[3]!.cursor, since: null, signal }));
    const resumed = fake.requests.slice(requestsBefore);
    // Page 4 was the first contacts page; the resume asks for the second one.
    expect(resumed[0]).toMatchObject({ path: '/crm/v3/objects/contacts' });
    expect(resumed[0]?.query['after']).toBeDefined();
    const ids = [...first, ...rest].flatMap((p) => [...(p.records.companies ?? []), ...(p.records.contacts ?? []), ...(p.records.deals ?? [])].map((r) => r.crm_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(3 + 5 + 4);
  });

  it('pulls incrementally through search: only what changed since, with deal associations', async () => {
    const { fake, crm, hubspot, credentials } = await started();
    await new Promise((r) => setTimeout(r, 5));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    fake.upsert('contacts', { lifecyclestage: 'customer' }, crm.contacts.ada);
    fake.upsert('deals', { dealstage: 'closedwon', closedate: '2026-06-01T00:00:00.000Z' }, crm.deals.expansion);
    const before = fake.requests.length;

    const pages = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since, signal }));
    const records = pages.map((p) => p.records);
    expect(records.flatMap((r) => r.companies ?? [])).toEqual([]);
    expect(records.flatMap((r) => r.contacts ?? []).map((c) => [c.crm_id, c.lifecycle_stage])).toEqual([[crm.contacts.ada, 'customer']]);
    const deals = records.flatMap((r) => r.deals ?? []);
    expect(deals).toHaveLength(1);
    expect(deals[0]).toMatchObject({ crm_id: crm.deals.expansion, stage_id: 'closedwon', company_crm_id: crm.companies.acme, closed_at: '2026-06-01T00:00:00.000Z' });
    expect(deals[0]?.contact_crm_ids.sort()).toEqual([crm.contacts.ada, crm.contacts.bob].sort());

    const calls = fake.requests.slice(before);
    const contactSearch = calls.find((r) => r.path === '/crm/v3/objects/contacts/search');
    expect(contactSearch?.body).toMatchObject({
      filterGroups: [{ filters: [{ propertyName: 'lastmodifieddate', operator: 'GTE', value: String(Date.parse(since)) }] }],
      sorts: [{ propertyName: 'lastmodifieddate', direction: 'ASCENDING' }],
    });
    expect(calls.find((r) => r.path === '/crm/v3/objects/deals/search')?.body).toMatchObject({ filterGroups: [{ filters: [{ propertyName: 'hs_lastmodifieddate' }] }] });
    expect(calls.map((r) => r.path)).toEqual(expect.arrayContaining(['/crm/v4/associations/deals/companies/batch/read', '/crm/v4/associations/deals/contacts/batch/read']));
    expect(calls.some((r) => r.path === '/crm/v3/objects/contacts')).toBe(false);
  });

  it('searches again from the last modification time before the search result cap, and reads ties by id', async () => {
    const { fake, hubspot, credentials } = await started({ maxPageSize: 2, searchResultCap: 4, searchPerSecond: 1000 }, { pageSize: 2, searchResultCap: 4, searchSpacingMs: 0 });
    const since = new Date(0).toISOString();
    for (let i = 0; i < 7; i++) {
      fake.upsert('companies', { name: `Extra ${i}`, domain: `extra${i}.com` });
      await new Promise((r) => setTimeout(r, 2));
    }

    const pages = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since, signal }));
    const companies = new Set(pages.flatMap((p) => p.records.companies ?? []).map((c) => c.crm_id));
    expect(companies.size).toBe(3 + 7);
    expect(fake.requests.filter((r) => r.status === 400)).toEqual([]);
    const floors = new Set(fake.requests.filter((r) => r.path === '/crm/v3/objects/companies/search')
      .map((r) => (r.body as { filterGroups: { filters: { value: string }[] }[] }).filterGroups[0]?.filters[0]?.value));
    expect(floors.size).toBeGreaterThan(1);
    // The five seeded contacts share one millisecond, more than the cap of 4: read by id instead.
    const contacts = new Set(pages.flatMap((p) => p.records.contacts ?? []).map((c) => c.crm_id));
    expect(contacts.size).toBe(5);
    const tieSearches = fake.requests.filter((r) => r.path === '/crm/v3/objects/contacts/search'
      && (r.body as { filterGroups: { filters: { operator: string }[] }[] }).filterGroups[0]?.filters[0]?.operator === 'EQ');
    expect(tieSearches.length).toBeGreaterThan(0);
  });

  it('keeps within the rate limit the headers state', async () => {
    const { fake, hubspot, credentials } = await started({ maxPageSize: 1, rateLimit: { max: 3, intervalMs: 300 } });
    const pages = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since: null, signal }));
    expect(pages.length).toBeGreaterThan(10);
    expect(fake.requests.filter((r) => r.status === 429)).toEqual([]);
    expect(fake.maxInWindow(300)).toBeLessThanOrEqual(3);
  });

  it('reports 429 and 5xx as retryable with the asked delay, 401 as final, and never shows the token', async () => {
    const { fake, hubspot, credentials } = await started();
    fake.rateLimitStorm(1, 2);
    const limited = await collect(hubspot.pull({ credentials, settings: {}, cursor: null, since: null, signal })).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000 });

    const fresh = createHubspotConnector({ baseUrl: fake.url });
    fake.serverErrors(1, 503);
    await expect(collect(fresh.pull({ credentials, settings: {}, cursor: null, since: null, signal }))).rejects.toMatchObject({ status: 503, retryable: true });

    const wrong = await collect(fresh.pull({ credentials: { access_token: 'pat-na1-wrong-token' }, settings: {}, cursor: null, since: null, signal })).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401, retryable: false });
    expect((wrong as Error).message).toContain('INVALID_AUTHENTICATION');
    expect((wrong as Error).message).not.toContain('pat-na1-wrong-token');
  });

  it('validates credentials', () => {
    const hubspot = createHubspotConnector();
    expect(hubspot.validateCredentials?.({ access_token: 'pat-na1-x' })).toBeNull();
    expect(hubspot.validateCredentials?.({})).toMatch(/access_token/);
    expect(hubspot.validateCredentials?.({ access_token: 'x', password: 'y' })).toMatch(/only access_token/);
  });

  describe('push', () => {
    const request = (over: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 => ({ ...MESSAGE_EXAMPLES['outcome.writeback_requested'], ...over });
    const custom = { customContactProperties: ['sightline_sales_value', 'sightline_quote_value', 'sightline_currency'] };

    it('finds the contact by email and writes the changed fields', async () => {
      const { fake, crm, hubspot, credentials } = await started(custom);
      const result = await hubspot.push(credentials, request({
        email: 'Bob@Acme.com',
        changes: [
          { field: 'sales_value', old_value: null, new_value: 12000 },
          { field: 'status', old_value: 'open', new_value: 'in progress' },
          { field: 'lifecycle_stage_raw', old_value: 'lead', new_value: 'customer' },
        ],
        current: { status: 'in progress', sales_value: 12000, quote_value: 15000, currency: 'EUR', lead_status_raw: null, lifecycle_stage_raw: 'customer', is_spam: false },
      }), signal);
      expect(result).toEqual({ crm_id: crm.contacts.bob, fields: { sightline_sales_value: 12000, hs_lead_status: 'IN_PROGRESS', lifecyclestage: 'customer' } });
      expect(fake.get('contacts', crm.contacts.bob)?.properties).toMatchObject({ sightline_sales_value: '12000', hs_lead_status: 'IN_PROGRESS', lifecyclestage: 'customer' });
      expect(fake.get('contacts', crm.contacts.ada)?.properties['sightline_sales_value']).toBeUndefined();
      const patch = fake.requests.find((r) => r.method === 'PATCH');
      expect(patch?.path).toBe(`/crm/v3/objects/contacts/${crm.contacts.bob}`);
      expect(patch?.body).toEqual({ properties: { sightline_sales_value: 12000, hs_lead_status: 'IN_PROGRESS', lifecyclestage: 'customer' } });
    });

    it('writes the named record without searching, and lets the raw lead status win', async () => {
      const { fake, crm, hubspot, credentials } = await started(custom);
      await hubspot.push(credentials, request({
        email: null,
        changes: [{ field: 'status', old_value: null, new_value: 'won' }, { field: 'lead_status_raw', old_value: null, new_value: 'OPEN_DEAL' }],
        current: { ...request().current, status: 'won', lead_status_raw: 'OPEN_DEAL' },
      }), signal, { crm_id: crm.contacts.cy });
      expect(fake.requests.some((r) => r.path.endsWith('/search'))).toBe(false);
      expect(fake.get('contacts', crm.contacts.cy)?.properties['hs_lead_status']).toBe('OPEN_DEAL');
    });

    it('fails for good when no contact matches or HubSpot refuses a value', async () => {
      const { hubspot, credentials } = await started(custom);
      await expect(hubspot.push(credentials, request({ email: 'nobody@example.com' }), signal)).rejects.toMatchObject({ status: 404, retryable: false });
      await expect(hubspot.push(credentials, request({ email: null }), signal)).rejects.toMatchObject({ retryable: false });
      const refused = await hubspot.push(credentials, request({
        email: 'ada@acme.com',
        changes: [{ field: 'lead_status_raw', old_value: null, new_value: 'NOT_A_STATUS' }],
        current: { ...request().current, lead_status_raw: 'NOT_A_STATUS' },
      }), signal).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 400, retryable: false });
      expect((refused as Error).message).toContain('VALIDATION_ERROR');
    });
  });
});
