// The Pipedrive connector against the local Pipedrive (test/pipedrive-server.ts): what a pull
// yields and in which order, resuming from a cursor, incremental pulls, stage history from the
// changelog, write-back through mapped custom fields, rate limits, and errors.
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { FakePipedrive, seedExampleCompany, seedGeneratedCompany, type ExampleCompany, type FakePipedriveOptions } from '../../../test/pipedrive-server';
import { ProviderError, type Connector, type PullPage } from '../connector';
import { decodeCursor } from './cursor';
import { stageHistory, toPipeline } from './mapping';
import { createPipedriveConnector, type PipedriveConnectorOptions } from './pipedrive.connector';

const signal = new AbortController().signal;

async function collect(pages: AsyncIterable<PullPage>, stopAfter = Infinity): Promise<PullPage[]> {
  const out: PullPage[] = [];
  for await (const page of pages) {
    out.push(page);
    if (out.length >= stopAfter) break;
  }
  return out;
}

const kindsOf = (pages: PullPage[]) => pages.map((p) => Object.entries(p.records).filter(([, v]) => (v?.length ?? 0) > 0).map(([k]) => k)[0] ?? 'empty');
const changelogCalls = (fake: FakePipedrive) => fake.requests.filter((r) => r.path.endsWith('/changelog'));

describe('Pipedrive connector', () => {
  const fakes: FakePipedrive[] = [];
  async function setup(server: FakePipedriveOptions = {}, connector: PipedriveConnectorOptions = {}): Promise<{ fake: FakePipedrive; co: ExampleCompany; pipedrive: Connector; credentials: { api_token: string } }> {
    const fake = new FakePipedrive(server);
    fakes.push(fake);
    await fake.start();
    const co = seedExampleCompany(fake);
    return { fake, co, pipedrive: createPipedriveConnector({ baseUrl: fake.url, ...connector }), credentials: { api_token: fake.apiToken } };
  }
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  describe('mapping', () => {
    it('puts open stages in order, then a won and a lost stage per pipeline', () => {
      const p = toPipeline({ id: 4, name: 'Sales', order_nr: 1 }, [
        { id: 9, name: 'Later', order_nr: 2, pipeline_id: 4 },
        { id: 8, name: 'First', order_nr: 1, pipeline_id: 4 },
        { id: 7, name: 'Gone', order_nr: 3, pipeline_id: 4, is_deleted: true },
        { id: 6, name: 'Other pipeline', order_nr: 1, pipeline_id: 5 },
      ]);
      expect(p.stages.map((s) => [s.id, s.bucket, s.position])).toEqual([['8', 'open', 0], ['9', 'open', 1], ['4:won', 'won', 2], ['4:lost', 'lost', 3]]);
    });

    it('follows moves, a pipeline change, a win and a reopen through the changelog', () => {
      const deal = { id: 1, title: 'D', value: 1, currency: 'EUR', pipeline_id: 2, stage_id: 21, status: 'open' as const, add_time: '2026-01-01T00:00:00Z', update_time: '2026-01-05T00:00:00Z', stage_change_time: '2026-01-04T00:00:00Z' };
      const stages = new Map([['11', '1'], ['12', '1'], ['21', '2']]);
      // Newest first, as the changelog lists them.
      const history = stageHistory(deal, [
        { field_key: 'stage_id', old_value: '12', new_value: '21', time: '2026-01-04 00:00:00' },
        { field_key: 'pipeline_id', old_value: '1', new_value: '2', time: '2026-01-04 00:00:00' },
        { field_key: 'status', old_value: 'won', new_value: 'open', time: '2026-01-03 00:00:00' },
        { field_key: 'status', old_value: 'open', new_value: 'won', time: '2026-01-02 12:00:00' },
        { field_key: 'value', old_value: '0', new_value: '1', time: '2026-01-02 06:00:00' },
        { field_key: 'stage_id', old_value: '11', new_value: '12', time: '2026-01-02 00:00:00' },
      ], stages);
      expect(history).toEqual([
        { stage_id: '11', pipeline_id: '1', at: '2026-01-01T00:00:00.000Z' },
        { stage_id: '12', pipeline_id: '1', at: '2026-01-02T00:00:00.000Z' },
        { stage_id: '1:won', pipeline_id: '1', at: '2026-01-02T12:00:00.000Z' },
        { stage_id: '12', pipeline_id: '1', at: '2026-01-03T00:00:00.000Z' },
        { stage_id: '21', pipeline_id: '2', at: '2026-01-04T00:00:00.000Z' },
      ]);
    });
  });

  it('pulls pipelines, organizations, persons and deals in that order, a page per call, with stage history', async () => {
    const { fake, co, pipedrive, credentials } = await setup({}, { pageSize: 2 });
    const pages = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }));

    expect(kindsOf(pages)).toEqual(['pipelines', 'companies', 'companies', 'contacts', 'contacts', 'contacts', 'deals', 'deals']);
    expect(pages.at(-1)?.cursor).toBeNull();
    expect(pages.slice(0, -1).every((p) => typeof p.cursor === 'string')).toBe(true);

    const pipelines = pages.flatMap((p) => p.records.pipelines ?? []);
    const sales = String(co.pipelines.sales);
    expect(pipelines.find((p) => p.id === sales)?.stages.map((s) => [s.name, s.bucket])).toEqual([
      ['Qualified', 'open'], ['Demo', 'open'], ['Proposal', 'open'], ['Negotiation', 'open'], ['Won', 'won'], ['Lost', 'lost'],
    ]);
    expect(pipelines.find((p) => p.id === String(co.pipelines.renewals))?.stages).toHaveLength(4);

    const companies = pages.flatMap((p) => p.records.companies ?? []);
    expect(companies.find((c) => c.crm_id === String(co.orgs.acme))).toEqual({ crm_id: String(co.orgs.acme), name: 'Acme GmbH', domain: null, lifecycle_stage: null, created_at: '2026-03-01T09:00:00.000Z', updated_at: '2026-03-01T09:00:00.000Z' });

    const contacts = pages.flatMap((p) => p.records.contacts ?? []);
    expect(contacts.find((c) => c.crm_id === String(co.persons.ada))).toMatchObject({ email: 'ada@acme.example', company_crm_id: String(co.orgs.acme) });
    expect(contacts.find((c) => c.crm_id === String(co.persons.eve))).toMatchObject({ email: null, company_crm_id: null });

    const deals = new Map(pages.flatMap((p) => p.records.deals ?? []).map((d) => [d.crm_id, d]));
    expect(deals.size).toBe(4);
    const s = co.stages;
    expect(deals.get(String(co.deals.pilot))).toEqual({
      crm_id: String(co.deals.pilot), name: 'Globex pilot', amount: 5000, currency: 'USD', pipeline_id: sales, stage_id: `${sales}:won`,
      company_crm_id: String(co.orgs.globex), contact_crm_ids: [String(co.persons.cy)],
      created_at: '2026-03-01T10:00:00.000Z', closed_at: '2026-03-01T13:00:00.000Z', updated_at: '2026-03-01T13:00:00.000Z',
      stage_history: [
        { stage_id: String(s.qualified), pipeline_id: sales, at: '2026-03-01T10:00:00.000Z' },
        { stage_id: String(s.proposal), pipeline_id: sales, at: '2026-03-01T11:00:00.000Z' },
        { stage_id: `${sales}:won`, pipeline_id: sales, at: '2026-03-01T13:00:00.000Z' },
      ],
    });
    expect(deals.get(String(co.deals.expansion))?.stage_history?.map((h) => h.stage_id)).toEqual([String(s.qualified), String(s.demo), String(s.proposal)]);
    expect(deals.get(String(co.deals.expansion))).toMatchObject({ stage_id: String(s.proposal), closed_at: null });
    expect(deals.get(String(co.deals.lostDeal))).toMatchObject({ stage_id: `${sales}:lost`, closed_at: '2026-03-01T12:00:00.000Z' });
    expect(deals.get(String(co.deals.lostDeal))?.stage_history?.map((h) => [h.stage_id, h.at])).toEqual([[String(s.demo), '2026-03-01T10:00:00.000Z'], [`${sales}:lost`, '2026-03-01T12:00:00.000Z']]);
    expect(deals.get(String(co.deals.renewal))?.stage_history).toEqual([{ stage_id: String(s.renewalDue), pipeline_id: String(co.pipelines.renewals), at: '2026-03-01T10:00:00.000Z' }]);

    // Only deals that moved or closed cost a changelog call; every call carried the API token header.
    expect(changelogCalls(fake).map((r) => r.path).sort()).toEqual([co.deals.expansion, co.deals.pilot, co.deals.lostDeal].map((id) => `/api/v1/deals/${id}/changelog`).sort());
    expect(fake.requests.every((r) => r.auth === 'api_token' && r.status === 200)).toBe(true);
    const dealCalls = fake.requests.filter((r) => r.path === '/api/v2/deals');
    expect(dealCalls[0]?.query).toEqual({ limit: '2', sort_by: 'id', sort_direction: 'asc' });
    expect(dealCalls[1]?.query['cursor']).toEqual(expect.any(String));
  });

  it('resumes from a cursor at exactly the next page', async () => {
    const { fake, pipedrive, credentials } = await setup({}, { pageSize: 2 });
    const first = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }), 4);
    expect(decodeCursor(first[3]!.cursor!)).toMatchObject({ mode: 'full', phase: 'persons', next: expect.any(String) });
    const before = fake.requests.length;
    const rest = await collect(pipedrive.pull({ credentials, settings: {}, cursor: first[3]!.cursor, since: null, signal }));
    const resumed = fake.requests.slice(before);
    expect(resumed[0]).toMatchObject({ path: '/api/v2/persons', query: { cursor: expect.any(String) } });
    expect(resumed.some((r) => r.path === '/api/v2/pipelines' || r.path === '/api/v2/organizations')).toBe(false);
    const ids = [...first, ...rest].flatMap((p) => [...(p.records.companies ?? []), ...(p.records.contacts ?? []), ...(p.records.deals ?? [])].map((r) => r.crm_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(3 + 5 + 4);
    // The resumed pull read the stages it needs for stage history by itself.
    expect(rest.flatMap((p) => p.records.deals ?? []).every((d) => (d.stage_history?.length ?? 0) > 0 && d.stage_history!.every((h) => h.pipeline_id !== null))).toBe(true);
  });

  it('pulls incrementally: only what changed since, by updated_since, in few calls', async () => {
    const { fake, co, pipedrive, credentials } = await setup();
    const since = new Date(fake.now()).toISOString();
    fake.advance(3_600_000);
    fake.updatePerson(co.persons.bob, { name: 'Bob Builder-Smith' });
    fake.updateDeal(co.deals.expansion, { status: 'won' });
    const before = fake.requests.length;

    const pages = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since, signal }));
    const calls = fake.requests.slice(before);
    expect(pages.flatMap((p) => p.records.companies ?? [])).toEqual([]);
    expect(pages.flatMap((p) => p.records.contacts ?? []).map((c) => c.crm_id)).toEqual([String(co.persons.bob)]);
    const deals = pages.flatMap((p) => p.records.deals ?? []);
    const sales = String(co.pipelines.sales);
    expect(deals.map((d) => [d.crm_id, d.stage_id, d.closed_at])).toEqual([[String(co.deals.expansion), `${sales}:won`, '2026-03-01T15:00:00.000Z']]);
    expect(deals[0]?.stage_history?.at(-1)).toEqual({ stage_id: `${sales}:won`, pipeline_id: sales, at: '2026-03-01T15:00:00.000Z' });
    // Pipelines + stages, one list per object type, one changelog: six calls for the whole sync.
    // (pipelines and stages are read together, in either order)
    expect(calls.map((r) => r.path).slice(0, 2).sort()).toEqual(['/api/v2/pipelines', '/api/v2/stages']);
    expect(calls.map((r) => r.path).slice(2)).toEqual(['/api/v2/organizations', '/api/v2/persons', '/api/v2/deals', `/api/v1/deals/${co.deals.expansion}/changelog`]);
    for (const path of ['/api/v2/organizations', '/api/v2/persons', '/api/v2/deals']) {
      expect(calls.find((r) => r.path === path)?.query).toMatchObject({ updated_since: '2026-03-01T14:00:00Z', sort_by: 'update_time', sort_direction: 'asc' });
    }
  });

  it('pulls a generated company of 1,000 deals whole, with every stage history', async () => {
    const fake = new FakePipedrive({ burst: { limit: 100_000, windowMs: 2000 } });
    fakes.push(fake);
    await fake.start();
    const generated = seedGeneratedCompany(fake, { deals: 1000, seed: 11 });
    const pipedrive = createPipedriveConnector({ baseUrl: fake.url });
    const pages = await collect(pipedrive.pull({ credentials: { api_token: fake.apiToken }, settings: {}, cursor: null, since: null, signal }));
    const deals = pages.flatMap((p) => p.records.deals ?? []);
    expect(deals).toHaveLength(1000);
    expect(fake.requests.filter((r) => r.path === '/api/v2/deals')).toHaveLength(2);
    const moved = generated.dealIds.filter((id) => fake.changelogOf(id).length > 0);
    expect(changelogCalls(fake)).toHaveLength(moved.length);
    for (const d of deals) {
      const stored = fake.deals.get(Number(d.crm_id))!;
      const stageChanges = fake.changelogOf(stored.id).filter((c) => c.field_key === 'stage_id' || c.field_key === 'status');
      expect(d.stage_history).toHaveLength(1 + stageChanges.length);
      expect(d.stage_history?.at(-1)?.stage_id).toBe(d.stage_id);
    }
  });

  it('can skip stage history to save the changelog calls', async () => {
    const { fake, pipedrive, credentials } = await setup();
    const pages = await collect(pipedrive.pull({ credentials, settings: { stage_history: false }, cursor: null, since: null, signal }));
    expect(changelogCalls(fake)).toEqual([]);
    expect(pages.flatMap((p) => p.records.deals ?? []).every((d) => d.stage_history === undefined)).toBe(true);
  });

  it('uses an OAuth access token as a bearer against the account api_domain', async () => {
    const { fake } = await setup();
    const pipedrive = createPipedriveConnector();
    const pages = await collect(pipedrive.pull({ credentials: { access_token: fake.accessToken, api_domain: fake.url }, settings: {}, cursor: null, since: null, signal }));
    expect(pages.flatMap((p) => p.records.deals ?? [])).toHaveLength(4);
    expect(fake.requests.every((r) => r.auth === 'oauth')).toBe(true);
  });

  it('keeps within the burst limit the headers state', async () => {
    const { fake, pipedrive, credentials } = await setup({ burst: { limit: 6, windowMs: 1000 } }, { pageSize: 1 });
    const pages = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }));
    expect(pages.length).toBe(1 + 3 + 5 + 4);
    expect(fake.requests.length).toBeGreaterThan(6);
    expect(fake.requests.filter((r) => r.status === 429)).toEqual([]);
  });

  it('sits out a short 429 and carries on', async () => {
    const { fake, pipedrive, credentials } = await setup();
    fake.failNext(1, 429, 1);
    const pages = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }));
    expect(fake.requests.map((r) => r.status).slice(0, 2)).toEqual([429, 200]);
    expect(pages.flatMap((p) => p.records.deals ?? [])).toHaveLength(4);
  });

  it('pauses the pull when the daily token budget is spent, and resumes where it stopped', async () => {
    const { fake, pipedrive, credentials } = await setup({}, { pageSize: 2 });
    const first = await collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }), 3);
    fake.setBudgetLeft(0);
    const paused = await collect(pipedrive.pull({ credentials, settings: {}, cursor: first[2]!.cursor, since: null, signal }));
    expect(paused).toHaveLength(1);
    expect(paused[0]?.records).toEqual({});
    expect(paused[0]?.cursor).toBe(first[2]!.cursor);
    // The stand-in's clock is at 14:00 UTC: the budget comes back in ten hours.
    const wait = Date.parse(paused[0]!.pause!.until) - Date.now();
    expect(wait).toBeGreaterThan(9.9 * 3_600_000);
    expect(wait).toBeLessThanOrEqual(10 * 3_600_000);
    expect(paused[0]?.pause?.reason).toContain('Daily API token budget exceeded');
    // Until then this process sends that token nothing more: it pauses again at once.
    const requests = fake.requests.length;
    const again = await collect(pipedrive.pull({ credentials, settings: {}, cursor: paused[0]!.cursor, since: null, signal }));
    expect(again[0]?.pause).toBeDefined();
    expect(fake.requests.length).toBe(requests);
    fake.setBudgetLeft(1_000_000);
    const later = createPipedriveConnector({ baseUrl: fake.url, pageSize: 2 });
    const rest = await collect(later.pull({ credentials, settings: {}, cursor: paused[0]!.cursor, since: null, signal }));
    expect(kindsOf(rest)).toEqual(['contacts', 'contacts', 'contacts', 'deals', 'deals']);
  });

  it('reports 5xx as retryable and a wrong or revoked token as final, readably and without the token', async () => {
    const { fake, pipedrive, credentials } = await setup();
    fake.failNext(1, 503);
    await expect(collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }))).rejects.toMatchObject({ name: 'ProviderError', status: 503, retryable: true });

    const wrong = await collect(pipedrive.pull({ credentials: { api_token: 'pd-wrong-token-123' }, settings: {}, cursor: null, since: null, signal })).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ProviderError);
    expect(wrong).toMatchObject({ status: 401, retryable: false, retryAfterMs: null });
    expect((wrong as Error).message).toContain('unauthorized access');
    expect((wrong as Error).message).toContain('check the API token');
    expect((wrong as Error).message).not.toContain('pd-wrong-token-123');

    fake.revoke(fake.apiToken);
    await expect(collect(pipedrive.pull({ credentials, settings: {}, cursor: null, since: null, signal }))).rejects.toMatchObject({ status: 401, retryable: false });
  });

  it('validates credentials and settings', () => {
    const pipedrive = createPipedriveConnector();
    expect(pipedrive.validateCredentials?.({ api_token: 'abc' })).toBeNull();
    expect(pipedrive.validateCredentials?.({ access_token: 'abc', api_domain: 'https://acme.pipedrive.com' })).toBeNull();
    expect(pipedrive.validateCredentials?.({ access_token: 'abc' })).toMatch(/api_domain/);
    expect(pipedrive.validateCredentials?.({ api_token: 'a', access_token: 'b', api_domain: 'https://x.pipedrive.com' })).toMatch(/api_token.*or.*access_token/);
    expect(pipedrive.validateCredentials?.({})).toMatch(/api_token/);
    expect(pipedrive.validateCredentials?.({ api_token: 'a', password: 'b' })).toMatch(/not password/);
    expect(pipedrive.validateCredentials?.({ access_token: 'a', api_domain: 'acme' })).toMatch(/URL/);

    const key = 'a'.repeat(40);
    expect(pipedrive.validateSettings?.({})).toBeNull();
    expect(pipedrive.validateSettings?.({ writeback: { person: { sales_value: key, status: key }, deal: { sales_value: key } }, stage_history: false })).toBeNull();
    expect(pipedrive.validateSettings?.({ writeback: { lead: {} } })).toMatch(/not lead/);
    expect(pipedrive.validateSettings?.({ writeback: { person: { notes: key } } })).toMatch(/notes is not a field/);
    expect(pipedrive.validateSettings?.({ writeback: { person: { sales_value: 'Sales value' } } })).toMatch(/40-character/);
    expect(pipedrive.validateSettings?.({ writeback: [] })).toMatch(/writeback is/);
    expect(pipedrive.validateSettings?.({ stage_history: 'no' })).toMatch(/true or false/);
    expect(pipedrive.validateSettings?.({ mapping: {} })).toMatch(/not mapping/);
  });

  describe('push', () => {
    const request = (over: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 => ({ ...MESSAGE_EXAMPLES['outcome.writeback_requested'], ...over });
    const changes: OutcomeWritebackRequestedV1['changes'] = [
      { field: 'sales_value', old_value: null, new_value: 12000 },
      { field: 'status', old_value: 'open', new_value: 'won' },
      { field: 'currency', old_value: null, new_value: 'EUR' },
    ];

    it('finds the person by email and writes the mapped, changed fields onto the person and their latest deal', async () => {
      const { fake, co, pipedrive, credentials } = await setup();
      const settings = { writeback: { person: { sales_value: co.fields.personSalesValue, status: co.fields.personStatus }, deal: { sales_value: co.fields.dealSalesValue } } };
      const result = await pipedrive.push(credentials, request({ email: ' ADA@acme.example ', changes }), signal, undefined, settings);
      expect(result).toEqual({
        crm_id: String(co.persons.ada),
        fields: { 'person.status': 'won', 'person.sales_value': 12000, 'deal.id': String(co.deals.expansion), 'deal.sales_value': 12000 },
      });
      expect(fake.persons.get(co.persons.ada)?.custom_fields).toEqual({ [co.fields.personSalesValue]: 12000, [co.fields.personStatus]: 'won' });
      expect(fake.persons.get(co.persons.bob)?.custom_fields[co.fields.personSalesValue]).toBeNull();
      expect(fake.deals.get(co.deals.expansion)?.custom_fields[co.fields.dealSalesValue]).toBe(12000);
      const search = fake.requests.find((r) => r.path === '/api/v2/persons/search');
      expect(search?.query).toMatchObject({ term: 'ada@acme.example', fields: 'email', exact_match: 'true' });
      const patches = fake.requests.filter((r) => r.method === 'PATCH');
      expect(patches.map((r) => [r.path, r.body])).toEqual([
        [`/api/v2/persons/${co.persons.ada}`, { custom_fields: { [co.fields.personStatus]: 'won', [co.fields.personSalesValue]: 12000 } }],
        [`/api/v2/deals/${co.deals.expansion}`, { custom_fields: { [co.fields.dealSalesValue]: 12000 } }],
      ]);
    });

    it('writes the named person and milestone deal without searching, and nothing that is not mapped', async () => {
      const { fake, co, pipedrive, credentials } = await setup();
      const settings = { writeback: { deal: { sales_value: co.fields.dealSalesValue } } };
      const milestone = { milestone_id: 'm1', stage: 'deal_won', deal_id: String(co.deals.pilot), amount: 5000, currency: 'USD' };
      const result = await pipedrive.push(credentials, request({ email: null, changes, milestone }), signal, { crm_id: String(co.persons.cy) }, settings);
      expect(result).toEqual({ crm_id: String(co.persons.cy), fields: { 'deal.id': String(co.deals.pilot), 'deal.sales_value': 12000 } });
      expect(fake.requests.some((r) => r.path.includes('search') || r.path === `/api/v2/persons/${co.persons.cy}`)).toBe(false);

      const before = fake.requests.length;
      const none = await pipedrive.push(credentials, request({ email: null, changes }), signal, { crm_id: String(co.persons.cy) }, {});
      expect(none).toEqual({ crm_id: String(co.persons.cy), fields: {} });
      expect(fake.requests.length).toBe(before);
    });

    it('fails for good when no person matches or Pipedrive refuses the field, and waits on a spent budget', async () => {
      const { fake, co, pipedrive, credentials } = await setup();
      const settings = { writeback: { person: { sales_value: co.fields.personSalesValue } } };
      await expect(pipedrive.push(credentials, request({ email: 'nobody@example.com', changes }), signal, undefined, settings)).rejects.toMatchObject({ status: 404, retryable: false });
      await expect(pipedrive.push(credentials, request({ email: null, changes }), signal, undefined, settings)).rejects.toMatchObject({ retryable: false });
      const refused = await pipedrive.push(credentials, request({ email: 'bob@acme.example', changes }), signal, undefined, { writeback: { person: { sales_value: 'b'.repeat(40) } } }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 400, retryable: false });
      expect((refused as Error).message).toContain('Unknown custom field key');
      await expect(pipedrive.push(credentials, request({ email: null, changes }), signal, { crm_id: '999999' }, settings)).rejects.toMatchObject({ status: 404, retryable: false });

      fake.setBudgetLeft(0);
      const spent = await pipedrive.push(credentials, request({ email: null, changes }), signal, { crm_id: String(co.persons.bob) }, settings).catch((e: unknown) => e);
      expect(spent).toMatchObject({ status: 429, retryable: true, retryAfterMs: 10 * 3_600_000 });
      expect((spent as Error).message).toContain('Daily API token budget exceeded');
      // The next push fails at once, without a request, still naming the wait.
      const requests = fake.requests.length;
      const next = await pipedrive.push(credentials, request({ email: null, changes }), signal, { crm_id: String(co.persons.bob) }, settings).catch((e: unknown) => e);
      expect(next).toMatchObject({ status: 429, retryable: true });
      expect((next as ProviderError).retryAfterMs).toBeGreaterThan(9.9 * 3_600_000);
      expect(fake.requests.length).toBe(requests);
    });
  });
});
