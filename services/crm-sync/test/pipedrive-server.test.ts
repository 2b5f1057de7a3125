// The local Pipedrive answers as Pipedrive documents: the same keys as the fixtures, header auth,
// cursor pagination, updated_since, the changelog newest first, rate-limit headers and 429s,
// the daily token budget, and its test hooks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakePipedrive, seedExampleCompany, seedGeneratedCompany, seededRandom, type ExampleCompany } from './pipedrive-server';

const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'pipedrive', name), 'utf8')) as Record<string, unknown>;
const keysOf = (value: unknown): string[] => Object.keys(value as object).sort();
const firstItem = (body: Record<string, unknown>): unknown => (body['data'] as unknown[])[0];

describe('FakePipedrive', () => {
  let fake: FakePipedrive;
  let company: ExampleCompany;
  const call = async (path: string, init: { token?: string; bearer?: string; method?: string; body?: unknown } = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> => {
    const headers: Record<string, string> = {};
    if (init.bearer !== undefined) headers['authorization'] = `Bearer ${init.bearer}`;
    else headers['x-api-token'] = init.token ?? fake.apiToken;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${fake.url}${path}`, { method: init.method ?? 'GET', headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  beforeEach(async () => {
    fake = new FakePipedrive();
    await fake.start();
    company = seedExampleCompany(fake);
  });
  afterEach(() => fake.close());

  it('answers with the documented keys of every fixture', async () => {
    const pairs: [string, string][] = [
      ['/api/v2/deals', 'deals-list.v2.json'],
      ['/api/v2/persons', 'persons-list.v2.json'],
      ['/api/v2/organizations', 'organizations-list.v2.json'],
      ['/api/v2/pipelines', 'pipelines-list.v2.json'],
      ['/api/v2/stages', 'stages-list.v2.json'],
      [`/api/v1/deals/${company.deals.pilot}/changelog`, 'deal-changelog.v1.json'],
    ];
    for (const [path, file] of pairs) {
      const { status, body } = await call(path);
      expect(status).toBe(200);
      const expected = fixture(file);
      expect(keysOf(body)).toEqual(keysOf(expected));
      expect(keysOf(firstItem(body))).toEqual(keysOf(firstItem(expected)));
      expect(keysOf(body['additional_data'])).toEqual(['next_cursor']);
    }
    const search = await call('/api/v2/persons/search?term=cy%40globex.example&fields=email&exact_match=true');
    const searchFixture = fixture('persons-search.v2.json');
    const item = (b: Record<string, unknown>) => (b['data'] as { items: { item: unknown }[] }).items[0]!;
    expect(keysOf(item(search.body))).toEqual(keysOf(item(searchFixture)));
    expect(keysOf(item(search.body).item)).toEqual(keysOf(item(searchFixture).item));
    const patched = await call(`/api/v2/persons/${company.persons.ada}`, { method: 'PATCH', body: { custom_fields: { [company.fields.personSalesValue]: 10 } } });
    expect(keysOf(patched.body['data'])).toEqual(keysOf(fixture('person-patch.v2.json')['data']));
    const missing = await call('/api/v2/persons/999999', { method: 'PATCH', body: { custom_fields: {} } });
    expect(missing.status).toBe(404);
    expect(keysOf(missing.body)).toEqual(keysOf(fixture('error-404.v2.json')));
    const unauthorized = await call('/api/v2/deals', { token: 'wrong' });
    expect(unauthorized.status).toBe(401);
    expect(keysOf(unauthorized.body)).toEqual(keysOf(fixture('error-401.json')));
  });

  it('takes the API token in x-api-token and the OAuth token as a bearer, nothing else', async () => {
    expect((await call('/api/v2/pipelines')).status).toBe(200);
    expect((await call('/api/v2/pipelines', { bearer: fake.accessToken })).status).toBe(200);
    expect((await call('/api/v2/pipelines', { bearer: fake.apiToken })).status).toBe(401);
    const inQuery = await fetch(`${fake.url}/api/v2/pipelines?api_token=${fake.apiToken}`);
    expect(inQuery.status).toBe(401);
    fake.revoke(fake.apiToken);
    expect((await call('/api/v2/pipelines')).status).toBe(401);
    expect(fake.requests.map((r) => r.auth)).toEqual(['api_token', 'oauth', null, null, null]);
  });

  it('pages with an opaque cursor, at most 500 a page, and filters by updated_since', async () => {
    const first = await call('/api/v2/persons?limit=2');
    const ids1 = (first.body['data'] as { id: number }[]).map((p) => p.id);
    const next = (first.body['additional_data'] as { next_cursor: string }).next_cursor;
    expect(ids1).toEqual([company.persons.ada, company.persons.bob]);
    const second = await call(`/api/v2/persons?limit=2&cursor=${next}`);
    expect((second.body['data'] as { id: number }[]).map((p) => p.id)).toEqual([company.persons.cy, company.persons.dee]);
    const third = await call(`/api/v2/persons?limit=2&cursor=${(second.body['additional_data'] as { next_cursor: string }).next_cursor}`);
    expect((third.body['data'] as unknown[]).length).toBe(1);
    expect((third.body['additional_data'] as { next_cursor: unknown }).next_cursor).toBeNull();
    expect((await call('/api/v2/persons?cursor=not-a-cursor')).status).toBe(400);

    fake.advance(60_000);
    fake.updatePerson(company.persons.cy, { name: 'Cy Younger' });
    const since = new Date(fake.now() - 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const changed = await call(`/api/v2/persons?updated_since=${since}&sort_by=update_time`);
    expect((changed.body['data'] as { id: number }[]).map((p) => p.id)).toEqual([company.persons.cy]);
    expect((await call('/api/v2/persons?updated_since=yesterday')).status).toBe(400);

    const big = new FakePipedrive();
    await big.start();
    try {
      seedGeneratedCompany(big, { deals: 1000, seed: 7 });
      const res = await fetch(`${big.url}/api/v2/deals?limit=1000`, { headers: { 'x-api-token': big.apiToken } });
      const page = (await res.json()) as { data: unknown[]; additional_data: { next_cursor: string | null } };
      expect(page.data).toHaveLength(500);
      expect(page.additional_data.next_cursor).toEqual(expect.any(String));
    } finally {
      await big.close();
    }
  });

  it('records stage and status changes and lists them newest first', async () => {
    const log = await call(`/api/v1/deals/${company.deals.pilot}/changelog`);
    expect((log.body['data'] as { field_key: string; new_value: string; time: string }[]).map((c) => [c.field_key, c.new_value, c.time])).toEqual([
      ['status', 'won', '2026-03-01 13:00:00'],
      ['stage_id', String(company.stages.proposal), '2026-03-01 11:00:00'],
    ]);
    const deal = (await call(`/api/v2/deals/${company.deals.pilot}`)).body['data'] as Record<string, unknown>;
    expect(deal).toMatchObject({ status: 'won', won_time: '2026-03-01T13:00:00Z', stage_change_time: '2026-03-01T11:00:00Z', add_time: '2026-03-01T10:00:00Z' });
    const untouched = (await call(`/api/v2/deals/${company.deals.renewal}`)).body['data'] as Record<string, unknown>;
    expect(untouched['stage_change_time']).toBeNull();
  });

  it('sends the rate-limit headers, answers 429 past the burst limit, and x-daily-requests-left on writes', async () => {
    const tight = new FakePipedrive({ burst: { limit: 2, windowMs: 60_000 } });
    await tight.start();
    try {
      const get = () => fetch(`${tight.url}/api/v2/pipelines`, { headers: { 'x-api-token': tight.apiToken } });
      const a = await get();
      expect([a.headers.get('x-ratelimit-limit'), a.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
      expect(Number(a.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      await get();
      const over = await get();
      expect(over.status).toBe(429);
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(await over.json()).toMatchObject({ success: false, error: 'Request over limit' });
    } finally {
      await tight.close();
    }
    const write = await call(`/api/v2/persons/${company.persons.bob}`, { method: 'PATCH', body: { custom_fields: { [company.fields.personStatus]: 'won' } } });
    expect(write.headers.get('x-daily-requests-left')).toBe('9999');
    expect((await call('/api/v2/pipelines')).headers.get('x-daily-requests-left')).toBeNull();
  });

  it('spends the documented token costs and answers 429 until midnight UTC once the budget is gone', async () => {
    const before = fake.budgetLeft();
    await call('/api/v2/deals');
    await call(`/api/v1/deals/${company.deals.pilot}/changelog`);
    expect(before - fake.budgetLeft()).toBe(10 + 20);
    fake.setBudgetLeft(5);
    fake.setNow('2026-03-01T23:59:00Z');
    const spent = await call('/api/v2/deals');
    expect(spent.status).toBe(429);
    expect(spent.headers.get('retry-after')).toBe('60');
    fake.setNow('2026-03-02T00:00:01Z');
    expect((await call('/api/v2/deals')).status).toBe(200);
  });

  it('fails on demand, refuses unknown custom fields, and seeds deterministically', async () => {
    fake.failNext(2, 502);
    expect((await call('/api/v2/deals')).status).toBe(502);
    expect((await call('/api/v2/deals')).status).toBe(502);
    expect((await call('/api/v2/deals')).status).toBe(200);
    const refused = await call(`/api/v2/persons/${company.persons.ada}`, { method: 'PATCH', body: { custom_fields: { ['f'.repeat(40)]: 1 } } });
    expect(refused.status).toBe(400);
    expect(refused.body['error']).toContain('Unknown custom field');

    expect(Array.from({ length: 3 }, seededRandom(1))).toEqual(Array.from({ length: 3 }, seededRandom(1)));
    const a = new FakePipedrive();
    const b = new FakePipedrive();
    seedGeneratedCompany(a, { deals: 200, seed: 3 });
    seedGeneratedCompany(b, { deals: 200, seed: 3 });
    const summary = (f: FakePipedrive) => [...f.deals.values()].map((d) => [d.stage_id, d.status, d.value, f.changelogOf(d.id).length]);
    expect(summary(a)).toEqual(summary(b));
    expect([...a.deals.values()].some((d) => d.status === 'won')).toBe(true);
    expect([...a.deals.values()].some((d) => d.status === 'lost')).toBe(true);
  });
});
