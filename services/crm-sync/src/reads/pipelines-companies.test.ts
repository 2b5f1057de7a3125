// GET /pipelines and GET /companies (= /accounts) over the mirror on PGlite.
import { RpcRemoteError } from '@sightline/kit';
import { companyId } from '../mirror';
import type { CrmRecords } from '../records';
import { companyDomain as normaliseDomain } from '@sightline/kit';
import { stageVocabulary } from './reads.present';
import { newWebsite, openReads, schemaErrors, scopeOf, type ReadsFixture, type TestWebsite } from '../../test/reads.fixtures';

type Row = Record<string, unknown>;
interface ListBody {
  data: Row[];
  meta: Record<string, unknown>;
  next_cursor?: string;
}

const at = (minute: number): string => new Date(Date.UTC(2025, 2, 1, 9, minute)).toISOString();

const RECORDS: CrmRecords = {
  pipelines: [
    { id: 'renewals', name: 'Renewals', stages: [{ id: 'r-won', name: 'Renewed', position: 1, bucket: 'won' }, { id: 'r-open', name: 'Up for renewal', position: 0, bucket: 'open' }] },
    { id: 'sales', name: 'Sales', stages: [{ id: 'lead', name: 'Lead', position: 0, bucket: 'open' }, { id: 'lost', name: 'Lost', position: 1, bucket: 'lost' }] },
  ],
  companies: [
    { crm_id: 'acme', name: 'Acme', domain: 'acme.test', lifecycle_stage: 'customer', created_at: at(0), updated_at: at(10) },
    { crm_id: 'globex', name: 'Globex', domain: 'www.Globex.test', lifecycle_stage: null, created_at: at(0), updated_at: at(30) },
    { crm_id: 'initech', name: 'Initech', domain: null, lifecycle_stage: 'lead', created_at: at(0), updated_at: at(20) },
  ],
  contacts: [
    { crm_id: 'c1', email: 'a@acme.test', lifecycle_stage: 'Marketing Qualified Lead', company_crm_id: 'acme', updated_at: at(0) },
    { crm_id: 'c2', email: 'b@acme.test', lifecycle_stage: 'customer', company_crm_id: 'acme', updated_at: at(0) },
    { crm_id: 'c3', email: null, lifecycle_stage: '  ', company_crm_id: 'globex', updated_at: at(0) },
    { crm_id: 'c4', email: 'x@elsewhere.test', lifecycle_stage: 'Sales Qualified Lead', company_crm_id: null, updated_at: at(0) },
  ],
};

describe('GET /pipelines and GET /companies', () => {
  let fx: ReadsFixture;
  let website: TestWebsite;
  const companies = (query: Record<string, unknown> = {}) => fx.read<ListBody>('listCompanies', website, query);

  beforeAll(async () => {
    fx = await openReads();
    website = newWebsite();
    await fx.apply(scopeOf(website), RECORDS);
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
  });

  it('are 409 crm-not-connected without any CRM data', async () => {
    for (const operation of ['listPipelines', 'listCompanies'] as const) {
      const error = await fx.read(operation, newWebsite()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcRemoteError);
      expect((error as RpcRemoteError).problem).toMatchObject({ kind: 'crm-not-connected', status: 409 });
    }
  });

  it('lists each pipeline with its stages in order, and the stage vocabulary for stages=', async () => {
    const reply = await fx.read<ListBody>('listPipelines', website);
    expect(schemaErrors('PipelinesResponse', reply.body)).toEqual([]);
    expect(reply.body.data).toEqual([
      { id: 'renewals', name: 'Renewals', provider: 'hubspot', stages: [
        { id: 'r-open', name: 'Up for renewal', position: 0, normalized_bucket: 'open' },
        { id: 'r-won', name: 'Renewed', position: 1, normalized_bucket: 'won' },
      ] },
      { id: 'sales', name: 'Sales', provider: 'hubspot', stages: [
        { id: 'lead', name: 'Lead', position: 0, normalized_bucket: 'open' },
        { id: 'lost', name: 'Lost', position: 1, normalized_bucket: 'lost' },
      ] },
    ]);
    expect(reply.body.meta['stage_vocabulary']).toEqual(['customer', 'deal_created', 'deal_lost', 'deal_won', 'marketing_qualified_lead', 'sales_qualified_lead']);
    expect(stageVocabulary([])).toEqual(['deal_created', 'deal_lost', 'deal_won']);
  });

  it('lists companies most recently updated first with their people count', async () => {
    const reply = await companies({ total_count: true });
    for (const row of reply.body.data) expect(schemaErrors('Company', row)).toEqual([]);
    expect(reply.body.data.map((r) => [r['crm_id'], r['people_count']])).toEqual([['globex', 1], ['initech', 0], ['acme', 2]]);
    expect(reply.body.data[2]).toEqual({
      id: companyId(scopeOf(website), 'acme'), crm_id: 'acme', provider: 'hubspot', name: 'Acme', domain: 'acme.test', lifecycle_stage: 'customer',
      people_count: 2, created_at: at(0), updated_at: at(10),
    });
    expect(reply.body.meta).toMatchObject({ row_count: 3, total_count: 3, has_more: false });
    expect(reply.body.next_cursor).toBeUndefined();
  });

  it('filters by domain, ignoring case, scheme, path and www.', async () => {
    for (const domain of ['globex.test', 'https://WWW.globex.test/about']) {
      const reply = await companies({ domain, total_count: true });
      expect(reply.body.data.map((r) => r['crm_id'])).toEqual(['globex']);
      expect(reply.body.meta['total_count']).toBe(1);
    }
    expect((await companies({ domain: 'nobody.test' })).body.data).toEqual([]);
    expect(normaliseDomain(' HTTP://www.Acme.test?x=1 ')).toBe('acme.test');
  });

  it('pages with a cursor bound to its filters', async () => {
    const first = await companies({ limit: 2 });
    expect(first.body.data.map((r) => r['crm_id'])).toEqual(['globex', 'initech']);
    expect(first.body.meta).toMatchObject({ has_more: true, truncated: true, row_count: 2 });
    const second = await companies({ limit: 2, cursor: first.body.next_cursor });
    expect(second.body.data.map((r) => r['crm_id'])).toEqual(['acme']);
    expect(second.body.next_cursor).toBeUndefined();
    await expect(companies({ cursor: first.body.next_cursor, domain: 'acme.test' })).rejects.toMatchObject({ problem: { kind: 'invalid-request' } });
    await expect(fx.read('listDeals', website, { cursor: first.body.next_cursor })).rejects.toMatchObject({ problem: { kind: 'invalid-request' } });
  });
});
