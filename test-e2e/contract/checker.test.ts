// The checker must catch each way an answer can break the contract, or the contract test proves
// nothing: one well-formed answer passes, and each single defect is named.
import { openApiDocument } from '@sightline/proto-schemas';
import { ContractChecker, type Answer, type ServedDocument } from './checker';

const checker = new ContractChecker(JSON.parse(JSON.stringify(openApiDocument)) as ServedDocument);

const RATE = { 'RateLimit-Limit': '600', 'RateLimit-Remaining': '599', 'RateLimit-Reset': '60', 'Sightline-Request-Id': 'req-12345678' };

function answer(overrides: Partial<Omit<Answer, 'headers'>> & { headers?: Record<string, string | null>; body?: unknown }): Answer {
  const headers = new Headers();
  for (const [name, value] of Object.entries({ 'content-type': 'application/json; charset=utf-8', ...RATE, ...overrides.headers })) {
    if (value !== null) headers.set(name, value);
  }
  const body = overrides.body === undefined ? me : overrides.body;
  return { method: overrides.method ?? 'GET', url: overrides.url ?? 'http://127.0.0.1:1/v1/me', status: overrides.status ?? 200, headers, text: overrides.text ?? JSON.stringify(body) };
}

const me = {
  data: {
    key: { id: 'k1', name: 'ci', scopes: ['analytics:read'], created_at: '2026-01-01T00:00:00.000Z' },
    workspace: { id: 'w1', name: 'Acme', timezone: 'UTC', currency: 'EUR' },
    plan: { name: 'pro', requests_per_minute: 120, monthly_quota: 1000000, concurrent_analytics_queries: 4 },
    websites: [{ id: 's1', domain: 'acme.test', timezone: 'UTC', currency: 'EUR' }],
  },
};

const problem = (kind: string, status: number) => ({
  type: `http://localhost/problems/${kind}`, title: 't', status, detail: 'd', remediation: 'r', instance: 'req-12345678',
});

describe('ContractChecker', () => {
  it('passes an answer that keeps the contract, on the /v1 path and the unprefixed one', () => {
    expect(checker.check(answer({}))).toEqual([]);
    expect(checker.check(answer({ url: '/me' }))).toEqual([]);
  });

  it('names a status the operation does not declare', () => {
    expect(checker.check(answer({ status: 202 }))).toEqual([expect.stringContaining('status 202 is not declared for getMe')]);
  });

  it('names a content type that is not declared', () => {
    expect(checker.check(answer({ headers: { 'content-type': 'text/html' } }))).toEqual([expect.stringContaining('content type "text/html" is not declared')]);
  });

  it('names a body that does not match the schema, at its path', () => {
    const flat = { key_id: 'k1', scopes: [], plan: 'pro' };
    expect(checker.check(answer({ body: flat })).join('\n')).toContain("must have required property 'data'");
    const wrongPlan = { data: { ...me.data, plan: { ...me.data.plan, name: 'gold' } } };
    expect(checker.check(answer({ body: wrongPlan })).join('\n')).toContain('body/data/plan/name must be equal to one of the allowed values');
    expect(checker.check(answer({ text: '<html>' }))).toEqual([expect.stringContaining('not JSON')]);
  });

  it('names a declared header that is missing or not an integer', () => {
    expect(checker.check(answer({ headers: { 'RateLimit-Remaining': null } }))).toEqual([expect.stringContaining('RateLimit-Remaining is missing')]);
    expect(checker.check(answer({ headers: { 'RateLimit-Reset': 'soon' } }))).toEqual([expect.stringContaining('RateLimit-Reset is not an integer')]);
  });

  it('names a problem kind not listed for its status, a wrong status or instance', () => {
    const headers = { 'content-type': 'application/problem+json' };
    const metrics = 'http://127.0.0.1:1/v1/metrics?metrics=x';
    expect(checker.check(answer({ url: metrics, status: 400, headers, body: problem('unknown-metric', 400) }))).toEqual([]);
    expect(checker.check(answer({ url: metrics, status: 400, headers, body: problem('crm-not-connected', 400) }))).toEqual([expect.stringContaining('problem kind "crm-not-connected" is not listed')]);
    expect(checker.check(answer({ url: '/v1/me', status: 404, headers, body: problem('not-found', 404) }))).toEqual([expect.stringContaining('status 404 is not declared for getMe')]);
    expect(checker.check(answer({ url: metrics, status: 400, headers, body: problem('unknown-metric', 422) }))).toEqual([expect.stringContaining('problem status 422 differs')]);
    expect(checker.check(answer({ url: metrics, status: 400, headers, body: { ...problem('unknown-metric', 400), instance: 'other' } }))).toEqual([expect.stringContaining('differs from Sightline-Request-Id')]);
  });

  it('holds answers outside any operation to the problem document', () => {
    const headers = { 'content-type': 'application/problem+json' };
    expect(checker.check(answer({ url: '/v1/nowhere', status: 404, headers, body: problem('not-found', 404) }))).toEqual([]);
    expect(checker.check(answer({ url: '/v1/nowhere', status: 404, headers: { 'content-type': 'text/html' }, text: 'Cannot GET' }))).toEqual([expect.stringContaining('not application/problem+json')]);
    expect(checker.check(answer({ method: 'DELETE', url: '/v1/me', status: 200 }))).toEqual([expect.stringContaining('a method the path does not have')]);
    expect(checker.check(answer({ url: '/collect', status: 202, text: '' }))).toEqual([]);
  });

  it('matches a literal path before a templated one', () => {
    expect(checker.match('get', '/v1/contacts/3f1c2a9e-6d1b-4c57-9a0e-2b7d8c3e4f10')).toMatchObject({ path: '/v1/contacts/{id}' });
    expect(checker.match('get', '/v1/contacts')).toMatchObject({ path: '/v1/contacts' });
    expect(checker.match('get', '/v1/contacts/x/journey')).toMatchObject({ path: '/v1/contacts/{id}/journey' });
  });
});
