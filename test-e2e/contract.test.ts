// The contract, proven on the whole stack (embedded drivers): the typed client generated from the
// OpenAPI document sends and reads real requests, and a set of requests generated from the served
// document covers every operation, valid and invalid, with each answer held to that document
// (status declared, content type, body schema, headers, problem kind listed for the status).
import { openApiDocument } from '@sightline/proto-schemas';
import { createSightlineClient, items, pages, SightlineApiError, type Schemas, type SightlineClient } from '@sightline/client';
import { adminOf } from './admin-client';
import { generateCases, type CaseFixtures, type ContractCase } from './contract/cases';
import { ContractChecker, type ServedDocument } from './contract/checker';
import { installContractCheck, uncheckedFetch } from './contract/hook';
import { startStack, type Stack } from './stack';

// Generated cases check their answers themselves (and may expect a refusal), so they use the fetch
// from before the hook; the typed client goes through the hook like every e2e suite.
const hook = installContractCheck();
const rawFetch = uncheckedFetch();

const WEBSITE = 'contract.test';

// Deletions run last, so the resources the valid POSTs created are there for every other operation.
const OPERATIONS = new ContractChecker(JSON.parse(JSON.stringify(openApiDocument)) as ServedDocument)
  .operations()
  .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));

describe('the OpenAPI contract (embedded drivers)', () => {
  let stack: Stack;
  let client: SightlineClient;
  let checker: ContractChecker;
  let served: ServedDocument;
  const keys: Record<string, string> = {};
  const fixtures: CaseFixtures = { website: WEBSITE, ids: {} };

  beforeAll(async () => {
    stack = await startStack({ targets: ['all'] });
    const admin = adminOf(stack.proc);
    const ws = await admin('/workspaces', { name: 'Contract', plan: 'internal', timezone: 'Europe/Berlin', currency: 'EUR' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: WEBSITE });
    keys['full'] = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    // Two narrow keys: between them, every scope is missing from one.
    keys['analytics'] = String((await admin('/keys', { workspace_id: ws['id'], scopes: ['analytics:read'] }))['key']);
    keys['events'] = String((await admin('/keys', { workspace_id: ws['id'], scopes: ['events:write'] }))['key']);
    served = (await (await rawFetch(`${stack.base}/v1/openapi.json`)).json()) as ServedDocument;
    checker = new ContractChecker(served);
    client = createSightlineClient({ baseUrl: stack.base, apiKey: keys['full'] ?? '' });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  it('serves the document the repository builds', () => {
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument)));
  });

  describe('through the typed client', () => {
    let contactId: string;
    let scope: { website_id: string; workspace_id: string };

    it('POST /events with typed events, then reads them back as contacts, page by page', async () => {
      const events: Schemas['InboundEvent'][] = ['ada', 'grace', 'edsger'].map((name, i) => ({
        event_type: 'purchase',
        event_name: 'order',
        email: `${name}@example.com`,
        anonymous_id: `contract-${name}`,
        revenue: 100 + i,
        currency: 'EUR',
        occurred_at: new Date(Date.now() - (i + 1) * 60_000).toISOString(),
        properties: { plan: 'pro' },
      }));
      const sent = await client.POST('/v1/events', { params: { header: { 'Idempotency-Key': 'contract-events-1' } }, body: { events } });
      expect(sent.response.status).toBe(200);
      expect(sent.data).toEqual({ accepted: 3, rejected: 0, errors: [] });

      // Paging with limit=1 walks three pages; the helper passes each next_cursor back verbatim.
      const deadline = Date.now() + 20_000;
      let emails: string[] = [];
      while (emails.length < 3 && Date.now() < deadline) {
        emails = [];
        for await (const contact of items(client, '/v1/contacts', { params: { query: { limit: 1 } } })) emails.push(String(contact.email));
        if (emails.length < 3) await new Promise((r) => setTimeout(r, 100));
      }
      expect(emails.sort()).toEqual(['ada@example.com', 'edsger@example.com', 'grace@example.com']);
      let pageCount = 0;
      for await (const page of pages(client, '/v1/contacts', { params: { query: { limit: 1 } } })) {
        pageCount++;
        expect(page.data).toHaveLength(1);
      }
      expect(pageCount).toBe(3);
      const first = await client.GET('/v1/contacts', { params: { query: { email: 'ada@example.com' } } });
      contactId = String(first.data?.data[0]?.id);
      fixtures.ids['/v1/contacts'] = contactId;
      fixtures.ids['/v1/conversions'] = contactId;
    });

    it('GET /me reads the key, its plan and its websites', async () => {
      const { data, response } = await client.GET('/v1/me');
      expect(response.status).toBe(200);
      expect(data?.data.key.scopes).toEqual(expect.arrayContaining(['events:write', 'conversions:write', 'pii:read']));
      expect(data?.data.plan).toEqual({ name: 'internal', requests_per_minute: null, monthly_quota: null, concurrent_analytics_queries: 4 });
      expect(data?.data.websites.map((w) => w.domain)).toEqual([WEBSITE]);
      expect(data?.data.workspace.currency).toBe('EUR');
      scope = { website_id: String(data?.data.websites[0]?.id), workspace_id: String(data?.data.workspace.id) };
    });

    it('PATCH /contacts/{id} sets values, and null clears a nullable field', async () => {
      // The null-clearing needs the gateway to validate bodies without type coercion (issue 16).
      const set = await client.PATCH('/v1/contacts/{id}', { params: { path: { id: contactId } }, body: { notes: 'called back', sales_value: 1200, status: 'won' } });
      expect(set.response.status).toBe(200);
      expect(set.data?.data).toMatchObject({ notes: 'called back', sales_value: 1200, status: 'won' });
      const cleared = await client.PATCH('/v1/contacts/{id}', { params: { path: { id: contactId }, header: { 'Idempotency-Key': 'contract-clear-1' } }, body: { notes: null, sales_value: null } });
      expect(cleared.response.status).toBe(200);
      expect(cleared.data?.data).toMatchObject({ notes: null, sales_value: null, status: 'won' });
      const read = await client.GET('/v1/contacts/{id}', { params: { path: { id: contactId } } });
      expect(read.data?.data).toMatchObject({ notes: null, sales_value: null });
      expect(read.data?.data.value_history.map((h) => [h.field, h.new_value])).toEqual(expect.arrayContaining([['sales_value', 1200], ['sales_value', null]]));
    });

    it('reads CRM mirrors (deals, companies, pipelines) once deals are imported', async () => {
      const imported = async (kind: string, rows: Record<string, unknown>[]) => {
        const response = await rawFetch(`http://127.0.0.1:${stack.proc.adminPort}/admin/crm/imports/${kind}?website=${WEBSITE}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${stack.proc.settings.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...scope, rows }),
        });
        expect(response.status).toBe(200);
      };
      const at = new Date(Date.now() - 3_600_000).toISOString();
      await imported('companies', [{ crm_id: 'acme', name: 'Acme', domain: 'acme.example', updated_at: at }]);
      await imported('contacts', [{ crm_id: 'c-ada', email: 'ada@example.com', lifecycle_stage: 'customer', company_crm_id: 'acme', updated_at: at }]);
      await imported('deals', [{ crm_id: 'd-ada', name: 'Acme platform', amount: 12000, currency: 'EUR', pipeline: 'Sales', stage: 'Won', bucket: 'won', company_crm_id: 'acme', contact_crm_ids: ['c-ada'], created_at: at, closed_at: at, updated_at: at }]);
      const deals = await client.GET('/v1/deals', { params: { query: { stage_bucket: 'won' } } });
      expect(deals.data?.data.map((d) => [d.crm_id, d.stage.normalized_bucket])).toEqual([['d-ada', 'won']]);
      const companies = await client.GET('/v1/companies');
      expect(companies.data?.data.map((c) => c.name)).toEqual(['Acme']);
      const pipelines = await client.GET('/v1/pipelines');
      expect(pipelines.data?.meta.stage_vocabulary).toEqual(expect.arrayContaining(['deal_won']));
      fixtures.ids['/v1/deals'] = String(deals.data?.data[0]?.id);
      fixtures.ids['/v1/companies'] = String(companies.data?.data[0]?.id);
      fixtures.ids['/v1/accounts'] = String(companies.data?.data[0]?.id);
    });

    it('answers a problem as SightlineApiError from the helpers, with its kind and allowed values', async () => {
      const { error, response } = await client.GET('/v1/metrics', { params: { query: { metrics: ['visitors', 'conversions'], group_by: ['channel'], attribution: ['first_touch', 'linear'], filter: ['country:ne:ZZ', 'channel:ne:Nowhere'], limit: 5 } } });
      expect(response.status).toBe(200);
      expect(error).toBeUndefined();
      const refused = pages(client, '/v1/contacts', { params: { query: { cursor: 'edited-cursor' } } });
      await expect(refused.next()).rejects.toMatchObject({ name: 'SightlineApiError', status: 400, kind: 'invalid-request' });
      await expect(refused.next()).resolves.toMatchObject({ done: true });
      expect(new SightlineApiError({ type: 'x/unknown-metric', title: 't', status: 400, detail: 'd', instance: 'i' }, 400).kind).toBe('unknown-metric');
    });

    it('went through the contract hook', () => {
      expect(hook.checked()).toBeGreaterThanOrEqual(8);
    });
  });

  describe('generated from the document', () => {
    it('covers every operation of the document', () => {
      expect(OPERATIONS.length).toBe(Object.values(served.paths).reduce((n, item) => n + Object.keys(item).length, 0));
    });

    it.each(OPERATIONS.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o] as const))('%s keeps the contract, valid and invalid', async (_name, matched) => {
      const cases = generateCases(served, [matched], fixtures);
      const failures: string[] = [];
      for (const c of cases) failures.push(...(await run(c)));
      expect(failures).toEqual([]);
    });
  });

  async function run(c: ContractCase): Promise<string[]> {
    const key = c.key === 'none' ? null : c.key === 'lacking-scope' ? (c.scope === 'analytics:read' ? keys['events'] : keys['analytics']) : keys['full'];
    const response = await rawFetch(`${stack.base}${c.url}`, {
      method: c.method.toUpperCase(),
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...c.headers },
      ...(c.body !== undefined ? { body: c.body } : {}),
    });
    const text = await response.text();
    if (process.env['CONTRACT_DEBUG']) process.stdout.write(`${response.status} ${c.name} ${c.url}\n`);
    const failures = checker.check({ method: c.method, url: c.url, status: response.status, headers: response.headers, text });
    if (c.expect.valid && c.method === 'post' && response.status === 200) {
      // A created resource (POST /funnels, POST /automations) is what later operations on `{id}` read.
      const id = (safeJson(text)?.['data'] as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') fixtures.ids[c.url.split('?')[0] ?? ''] = id;
    }
    if (c.expect.valid) {
      // A valid request may still be refused for what it names (an id that does not exist, no CRM
      // connected, a service not in this build), never by a failure of the server.
      if (response.status >= 500 && response.status !== 501) failures.push(`answered ${response.status}: ${text.slice(0, 300)}`);
    } else {
      const body = safeJson(text);
      if (response.status !== c.expect.status) failures.push(`expected ${c.expect.status}, answered ${response.status}: ${text.slice(0, 300)}`);
      const kind = String(body?.['type'] ?? '').split('/').pop();
      if (c.expect.kind && kind !== c.expect.kind) failures.push(`expected kind ${c.expect.kind}, got ${kind}`);
      if (c.expect.allowed && !Array.isArray(body?.['allowed'])) failures.push('expected `allowed` in the problem');
    }
    return failures.map((f) => `${c.name} (${c.method.toUpperCase()} ${c.url}): ${f}`);
  }
});

function safeJson(text: string): Record<string, unknown> | null {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
