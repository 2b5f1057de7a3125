// GET /deals (crm-sync.listDeals) over the mirror on PGlite, with a stand-in attribution service.
import { randomUUID } from 'node:crypto';
import { RpcRemoteError } from '@sightline/kit';
import type { DealTouchesRequest, DealTouchesResponse } from '@sightline/proto-schemas';
import { companyId, dealId } from '../mirror';
import type { CrmDeal, CrmRecords } from '../records';
import { ATTRIBUTION_UNAVAILABLE_NOTE } from './deal-attribution';
import { newWebsite, noTouches, openReads, schemaErrors, scopeOf, type ReadsFixture, type TestWebsite } from '../../test/reads.fixtures';

type Row = Record<string, unknown> & { id: string };
interface DealsBody {
  data: Row[];
  meta: Record<string, unknown>;
  next_cursor?: string;
}

const at = (minute: number): string => new Date(Date.UTC(2025, 2, 1, 9, minute)).toISOString();

function deal(crmId: string, o: Partial<CrmDeal> = {}): CrmDeal {
  return {
    crm_id: crmId, name: `Deal ${crmId}`, amount: 1000, currency: 'EUR', pipeline_id: 'sales', stage_id: 'appointment',
    company_crm_id: null, contact_crm_ids: [], created_at: at(0), closed_at: null, updated_at: at(1), ...o,
  };
}

const RECORDS: CrmRecords = {
  pipelines: [{
    id: 'sales', name: 'Sales',
    stages: [
      { id: 'closedwon', name: 'Closed won', position: 2, bucket: 'won' },
      { id: 'appointment', name: 'Appointment scheduled', position: 0, bucket: 'open' },
      { id: 'contract', name: 'Contract sent', position: 1, bucket: 'open' },
      { id: 'closedlost', name: 'Closed lost', position: 3, bucket: 'lost' },
    ],
  }],
  companies: [{ crm_id: 'acme', name: 'Acme', domain: 'acme.test', lifecycle_stage: 'customer', created_at: at(0), updated_at: at(0) }],
  contacts: [
    { crm_id: 'c-alice', email: 'Alice@Acme.test', lifecycle_stage: 'Marketing Qualified Lead', company_crm_id: 'acme', updated_at: at(0) },
    { crm_id: 'c-bob', email: 'bob@acme.test', lifecycle_stage: 'customer', company_crm_id: 'acme', updated_at: at(0) },
    { crm_id: 'c-nomail', email: null, lifecycle_stage: null, company_crm_id: 'acme', updated_at: at(0) },
  ],
  deals: [
    deal('d-open', { contact_crm_ids: ['c-alice', 'c-bob', 'c-nomail'], company_crm_id: 'acme', updated_at: at(50) }),
    deal('d-won', { stage_id: 'closedwon', amount: 5000, closed_at: at(30), updated_at: at(40), contact_crm_ids: ['c-bob'] }),
    deal('d-lost', { stage_id: 'closedlost', amount: null, currency: null, updated_at: at(30) }),
    deal('d-contract', { stage_id: 'contract', updated_at: at(20) }),
    deal('d-nostage', { pipeline_id: null, stage_id: null, updated_at: at(10) }),
  ],
};

const TOUCH = { occurred_at: at(-60), channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', referrer_domain: 'google.com', landing_page: '/' };

describe('GET /deals (crm-sync.listDeals)', () => {
  let fx: ReadsFixture;
  let website: TestWebsite;
  const contactId = randomUUID();

  const list = (query: Record<string, unknown> = {}, site: TestWebsite = website) => fx.read<DealsBody>('listDeals', site, query);

  beforeAll(async () => {
    fx = await openReads({ rpcTimeoutMs: 600 });
    website = newWebsite();
    await fx.apply(scopeOf(website), RECORDS);
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
  });
  beforeEach(() => {
    fx.attribution.calls.length = 0;
    // Alice's deals have a journey; the others whatever attribution answers when it knows nothing.
    fx.attribution.answer = async (request: DealTouchesRequest) => {
      const unknown = await noTouches(request);
      return {
        deals: request.deals.map((d, i) => (d.emails.includes('alice@acme.test')
          ? { deal_id: d.deal_id, first_touch: TOUCH, last_touch: { ...TOUCH, channel: 'Email', source: 'newsletter', medium: 'email', campaign: null }, contact_ids: [contactId], basis: 'sessions' as const }
          : unknown.deals[i] as DealTouchesResponse['deals'][number])),
      };
    };
  });

  it('is 409 crm-not-connected for a website with no CRM connected and nothing imported', async () => {
    const error = await list({}, newWebsite()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcRemoteError);
    expect((error as RpcRemoteError).problem).toMatchObject({ kind: 'crm-not-connected', status: 409, remediation: expect.stringContaining('sightline import deals') });
  });

  it('counts a connection without records, and an import, as connected', async () => {
    const connected = newWebsite();
    await fx.sql.query(
      "INSERT INTO connections (id, workspace_id, website_id, provider, credentials) VALUES ($1, $2, $3, 'hubspot', '\\x00'::bytea)",
      [randomUUID(), connected.workspace_id, connected.id],
    );
    const empty = await list({ total_count: true }, connected);
    expect(empty.body.data).toEqual([]);
    expect(empty.body.meta).toMatchObject({ row_count: 0, has_more: false, total_count: 0, attribution_available: true });
    expect(empty.body.next_cursor).toBeUndefined();

    const imported = newWebsite();
    await fx.apply(scopeOf(imported, 'import'), { deals: [deal('i-1')] });
    const rows = (await list({}, imported)).body.data;
    expect(rows.map((r) => [r['provider'], r['crm_id'], r['id']])).toEqual([['import', 'i-1', dealId(scopeOf(imported, 'import'), 'i-1')]]);
  });

  it('lists deals most recently updated first, each with its stage bucket, pipeline, company and attribution', async () => {
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(schemaErrors('DealsResponse', reply.body)).toEqual([]);
    expect(reply.body.data.map((r) => r['crm_id'])).toEqual(['d-open', 'd-won', 'd-lost', 'd-contract', 'd-nostage']);
    const [open, won, lost, , nostage] = reply.body.data;
    expect(open).toEqual({
      id: dealId(scopeOf(website), 'd-open'), crm_id: 'd-open', provider: 'hubspot', name: 'Deal d-open', amount: 1000, currency: 'EUR',
      stage: { id: 'appointment', name: 'Appointment scheduled', normalized_bucket: 'open' }, pipeline: 'sales', pipeline_name: 'Sales',
      company_id: companyId(scopeOf(website), 'acme'), crm_contact_ids: ['c-alice', 'c-bob', 'c-nomail'], contact_ids: [contactId],
      first_touch: TOUCH, last_touch: expect.objectContaining({ channel: 'Email' }), attribution_basis: 'sessions',
      created_at: at(0), closed_at: null, updated_at: at(50),
    });
    expect(won).toMatchObject({ stage: { normalized_bucket: 'won', name: 'Closed won' }, amount: 5000, closed_at: at(30), attribution_basis: 'no_matching_contact', contact_ids: [] });
    expect(lost).toMatchObject({ stage: { normalized_bucket: 'lost' }, amount: null, currency: null, attribution_basis: 'no_contacts' });
    expect(nostage).toMatchObject({ stage: { name: '(no stage)', normalized_bucket: 'other' }, pipeline: null, pipeline_name: null });
    expect(reply.body.meta).toMatchObject({ website_id: website.id, website: website.domain, row_count: 5, has_more: false, truncated: false, total_count: null, attribution_available: true });
  });

  it('asks attribution once per page, with each deal\'s contact emails and creation time', async () => {
    await list();
    expect(fx.attribution.calls).toHaveLength(1);
    const request = fx.attribution.calls[0] as DealTouchesRequest;
    expect(request).toMatchObject({ workspace_id: website.workspace_id, website_id: website.id });
    expect(request.deals[0]).toEqual({ deal_id: dealId(scopeOf(website), 'd-open'), emails: ['alice@acme.test', 'bob@acme.test'], created_at: at(0) });
    expect(request.deals.map((d) => d.emails.length)).toEqual([2, 1, 0, 0, 0]);
  });

  it('never shows the deal contacts\' emails, whatever the key', async () => {
    const text = JSON.stringify((await list()).body);
    expect(text).not.toMatch(/alice@|bob@/i);
  });

  it('filters by stage bucket and updated_since, and counts what the filters select', async () => {
    const won = await list({ stage_bucket: 'won', total_count: true });
    expect(won.body.data.map((r) => r['crm_id'])).toEqual(['d-won']);
    expect(won.body.meta['total_count']).toBe(1);
    const open = await list({ stage_bucket: 'open', total_count: true });
    expect(open.body.data.map((r) => r['crm_id'])).toEqual(['d-open', 'd-contract']);
    const recent = await list({ updated_since: at(30), total_count: true });
    expect(recent.body.data.map((r) => r['crm_id'])).toEqual(['d-open', 'd-won', 'd-lost']);
    expect(recent.body.meta['total_count']).toBe(3);
    await expect(list({ stage_bucket: 'maybe' })).rejects.toMatchObject({ problem: { kind: 'invalid-request', allowed: ['open', 'won', 'lost', 'other'] } });
  });

  it('pages with a signed cursor: every deal once, in order, attribution once per page', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await list({ limit: 2, total_count: true, ...(cursor ? { cursor } : {}) });
      pages += 1;
      seen.push(...reply.body.data.map((r) => String(r['crm_id'])));
      expect(reply.body.meta).toMatchObject({ total_count: 5, has_more: reply.body.next_cursor !== undefined, row_count: reply.body.data.length });
      cursor = reply.body.next_cursor;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['d-open', 'd-won', 'd-lost', 'd-contract', 'd-nostage']);
    expect(fx.attribution.calls).toHaveLength(3);
  });

  it('refuses an edited cursor and one from another query with invalid-request: restart paging', async () => {
    const first = await list({ limit: 1 });
    const cursor = String(first.body.next_cursor);
    const edited = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const query of [{ cursor: edited }, { cursor: 'not-a-cursor' }, { cursor, stage_bucket: 'open' }]) {
      await expect(list(query)).rejects.toMatchObject({ problem: { kind: 'invalid-request', status: 400, remediation: expect.stringMatching(/restart paging/i) } });
    }
    const other = newWebsite();
    await fx.apply(scopeOf(other), { deals: [deal('x')] });
    await expect(list({ cursor }, other)).rejects.toMatchObject({ problem: { kind: 'invalid-request' } });
  });

  it('answers without attribution when attribution fails or is too slow, and says so', async () => {
    for (const answer of [
      async () => { throw new Error('attribution is down'); },
      () => new Promise<never>(() => undefined),
    ]) {
      fx.attribution.answer = answer;
      const reply = await list({ limit: 2 });
      expect(reply.status).toBe(200);
      expect(schemaErrors('DealsResponse', reply.body)).toEqual([]);
      expect(reply.body.data).toHaveLength(2);
      for (const row of reply.body.data) {
        expect(row).toMatchObject({ first_touch: null, last_touch: null, contact_ids: null, attribution_basis: null, stage: { normalized_bucket: expect.any(String) } });
      }
      expect(reply.body.meta).toMatchObject({ attribution_available: false, note: ATTRIBUTION_UNAVAILABLE_NOTE });
    }
  });

  it('masks CRM contact ids that are personal data for a key without pii:read, and shows them with it (finding 6)', async () => {
    const imported = newWebsite();
    const ids = ['ada@example.com', '+441234567858', 'Ada Lovelace', '51'];
    await fx.apply(scopeOf(imported, 'import'), { deals: [deal('i-pii', { contact_crm_ids: ids })] });
    const masked = await list({}, imported);
    expect(masked.body.data[0]?.['crm_contact_ids']).toEqual(expect.arrayContaining(['a***@example.com', '+44********58', 'A. L.', '51']));
    expect(JSON.stringify(masked.body)).not.toContain('ada@example.com');
    expect(masked.body.meta).toMatchObject({ pii_included: false, pii_note: expect.stringContaining('pii:read') });
    const full = await fx.read<DealsBody>('listDeals', imported, {}, ['deals:read', 'pii:read']);
    expect(full.body.data[0]?.['crm_contact_ids']).toEqual(expect.arrayContaining(ids));
    expect(full.body.meta).toMatchObject({ pii_included: true });
    expect(full.body.meta['pii_note']).toBeUndefined();
  });
});
