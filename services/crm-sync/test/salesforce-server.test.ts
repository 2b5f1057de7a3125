// Tests of the local Salesforce stand-in itself: auth (JWT bearer verified for real, refresh
// grant), the documented answer shapes (fixtures in fixtures/salesforce/ are checked key-for-key
// against what the server sends), paging, SOQL parsing and its errors, Get Deleted windows, writes,
// limits, Bulk API 2.0 query jobs, and the speed the connector's tests rely on.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileQuery, idChecksum, parseSoql, SalesforceOrg, seedOrg, signJwtAssertion, startSalesforceServer, type SalesforceServer, type SalesforceServerOptions } from './salesforce-server';

const FIXTURES = join(__dirname, 'fixtures', 'salesforce');
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const CLIENT = '3MVG9sightline.test.client';
const USER = 'integration@sightline.test';
const V = 'v68.0';

let nowMs = Date.parse('2026-11-28T12:00:00Z');
const clock = (): Date => new Date(nowMs);

/** The same key set, ignoring values; nested objects compared recursively (arrays by first element). */
function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shapeOf(v[0])] : [];
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shapeOf((v as Record<string, unknown>)[k])]));
  return v === null ? 'null' : typeof v;
}

async function start(extra: SalesforceServerOptions = {}): Promise<{ sf: SalesforceServer; token: string; api: (path: string, init?: RequestInit) => Promise<Response> }> {
  const sf = await startSalesforceServer({ jwtPublicKeyPem: PUBLIC_PEM, clientIds: [CLIENT], usernames: [USER], now: clock, ...extra });
  const token = sf.issueToken();
  const api = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${sf.url}/services/data/${V}/${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });
  return { sf, token, api };
}

const servers: SalesforceServer[] = [];
afterEach(async () => {
  nowMs = Date.parse('2026-11-28T12:00:00Z');
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function started(extra: SalesforceServerOptions = {}): ReturnType<typeof start> {
  const s = await start(extra);
  servers.push(s.sf);
  return s;
}

const form = (o: Record<string, string>): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString() });

describe('ids', () => {
  it('builds 18-character ids with the documented case-checksum suffix and key prefixes', () => {
    // A hand-checked case: chunks 001A0|00000|6Vm9r have upper case at bits 3, none, 1 → I, A, C.
    expect(idChecksum('001A0000006Vm9r')).toBe('001A0000006Vm9rIAC');
    const org = new SalesforceOrg({ now: clock });
    const lead = org.insert('Lead', { LastName: 'Amsel', Company: 'Acme' });
    expect(lead).toMatch(/^00Q[0-9A-Za-z]{15}$/);
    expect(idChecksum(lead.slice(0, 15))).toBe(lead);
    expect(org.insert('Account', { Name: 'A' }).slice(0, 3)).toBe('001');
    expect(org.all('OpportunityStage').map((s) => s['ApiName'])).toEqual(['Prospecting', 'Qualification', 'Needs Analysis', 'Value Proposition', 'Id. Decision Makers', 'Perception Analysis', 'Proposal/Price Quote', 'Negotiation/Review', 'Closed Won', 'Closed Lost']);
  });
});

describe('OAuth token endpoint', () => {
  const jwt = (sf: SalesforceServer, over: Partial<Parameters<typeof signJwtAssertion>[0]> = {}): string =>
    signJwtAssertion({ privateKeyPem: PRIVATE_PEM, clientId: CLIENT, username: USER, audience: sf.url, now: clock(), ...over });
  const grant = (sf: SalesforceServer, assertion: string): Promise<Response> => fetch(`${sf.url}/services/oauth2/token`, form({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }));

  it('issues a token for a valid JWT assertion, in the documented shape, usable on the instance', async () => {
    const { sf } = await started();
    const res = await grant(sf, jwt(sf));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(shapeOf(body)).toEqual(shapeOf(fixture('token-jwt-bearer-response.json')));
    expect(body['instance_url']).toBe(sf.url);
    expect(body['token_type']).toBe('Bearer');
    const q = await fetch(`${sf.url}/services/data/${V}/limits`, { headers: { Authorization: `Bearer ${body['access_token']}` } });
    expect(q.status).toBe(200);
  });

  it.each([
    ['a wrong signature', (sf: SalesforceServer) => jwt(sf, { privateKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }), 'invalid_grant'],
    ['an expired exp', (sf: SalesforceServer) => jwt(sf, { expSeconds: -5 }), 'invalid_grant'],
    ['an exp more than 3 minutes ahead', (sf: SalesforceServer) => jwt(sf, { expSeconds: 600 }), 'invalid_grant'],
    ['another audience', (sf: SalesforceServer) => jwt(sf, { audience: 'https://login.salesforce.com' }), 'invalid_grant'],
    ['an unknown user', (sf: SalesforceServer) => jwt(sf, { username: 'nobody@sightline.test' }), 'invalid_grant'],
    ['an unknown consumer key', (sf: SalesforceServer) => jwt(sf, { clientId: 'nope' }), 'invalid_client_id'],
    ['alg none', (sf: SalesforceServer) => jwt(sf, { alg: 'none' }), 'invalid_grant'],
  ])('refuses %s with 400 %s', async (_what, make, error) => {
    const { sf } = await started();
    const res = await grant(sf, make(sf));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, string>;
    expect(body['error']).toBe(error);
    expect(typeof body['error_description']).toBe('string');
  });

  it('checks the audience against options.loginUrl when given', async () => {
    const { sf } = await started({ loginUrl: 'https://login.salesforce.com' });
    expect((await grant(sf, jwt(sf))).status).toBe(400);
    expect((await grant(sf, jwt(sf, { audience: 'https://login.salesforce.com' }))).status).toBe(200);
  });

  it('refresh grant: new access token without a new refresh token; revoked → invalid_grant', async () => {
    const { sf } = await started({ clientSecrets: { [CLIENT]: 's3cret' } });
    const rt = sf.issueRefreshToken();
    const ok = await fetch(`${sf.url}/services/oauth2/token`, form({ grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT, client_secret: 's3cret' }));
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as Record<string, string>;
    expect(body['refresh_token']).toBeUndefined();
    expect(shapeOf(body)).toEqual(shapeOf(fixture('token-refresh-response.json')));
    sf.revokeRefreshToken(rt);
    const bad = await fetch(`${sf.url}/services/oauth2/token`, form({ grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT, client_secret: 's3cret' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual(fixture('error-token-invalid-grant.json'));
  });
});

describe('sessions, limits and scripted faults', () => {
  it('401 INVALID_SESSION_ID for missing, unknown, revoked and expired tokens', async () => {
    const { sf, token, api } = await started({ sessionSeconds: 60 });
    expect((await api('limits')).status).toBe(200);
    const none = await fetch(`${sf.url}/services/data/${V}/limits`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(fixture('error-invalid-session-id.json'));
    const other = sf.issueToken();
    expect(sf.issuedTokens()).toEqual([token, other]);
    sf.revokeToken(token);
    expect(sf.issuedTokens()).toEqual([other]);
    expect((await api('limits')).status).toBe(401);
    nowMs += 61_000;
    expect((await fetch(`${sf.url}/services/data/${V}/limits`, { headers: { Authorization: `Bearer ${other}` } })).status).toBe(401);
  });

  it('counts each data call in Sforce-Limit-Info and answers REQUEST_LIMIT_EXCEEDED at the allocation, counting no further', async () => {
    const { sf, api } = await started({ dailyAllocation: 3 });
    expect((await api('limits')).headers.get('Sforce-Limit-Info')).toBe('api-usage=1/3');
    const lim = (await (await api('limits')).json()) as { DailyApiRequests: { Max: number; Remaining: number } };
    expect(lim.DailyApiRequests).toEqual({ Max: 3, Remaining: 1 });
    expect((await api('query?q=SELECT+Id+FROM+Lead')).status).toBe(200);
    const refused = await api('limits');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('Sforce-Limit-Info')).toBe('api-usage=3/3');
    expect(await refused.json()).toEqual(fixture('error-request-limit-exceeded.json'));
    await api('limits');
    expect(sf.usage()).toEqual({ used: 3, max: 3 });
    sf.resetAllocation(10);
    expect((await api('limits')).headers.get('Sforce-Limit-Info')).toBe('api-usage=1/10');
  });

  it('failNext answers scripted replies in order, then resumes; calls are logged by endpoint', async () => {
    const { sf, api } = await started();
    sf.failNext({ status: 503, body: '' }, { status: 500, body: [{ errorCode: 'UNKNOWN_EXCEPTION', message: 'An unexpected error occurred.' }] });
    expect((await api('query?q=SELECT+Id+FROM+Lead')).status).toBe(503);
    const r = await api('query?q=SELECT+Id+FROM+Lead');
    expect(r.status).toBe(500);
    expect(r.headers.get('Sforce-Limit-Info')).toMatch(/^api-usage=\d+\/15000$/);
    expect((await api('query?q=SELECT+Id+FROM+Lead')).status).toBe(200);
    expect(sf.calls.map((c) => c.status)).toEqual([503, 500, 200]);
    expect(sf.calls[2]).toMatchObject({ method: 'GET', path: `/services/data/${V}/query`, endpoint: 'query', query: { q: 'SELECT Id FROM Lead' } });
  });

  it('accepts any vNN.0 and answers unknown resources 404 NOT_FOUND', async () => {
    const { sf, token } = await started();
    const r = await fetch(`${sf.url}/services/data/v59.0/query?q=SELECT+Id+FROM+Account`, { headers: { Authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    const nf = await fetch(`${sf.url}/services/data/v68.0/nothing`, { headers: { Authorization: `Bearer ${token}` } });
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual(fixture('error-not-found.json'));
  });
});

describe('query, queryMore, queryAll', () => {
  it('pages with nextRecordsUrl in batches and the documented record shape', async () => {
    const { sf, api } = await started({ batchSize: 3 });
    const acct = sf.org.insert('Account', { Name: 'Acme' });
    for (let i = 0; i < 7; i++) sf.org.insert('Contact', { LastName: `C${i}`, AccountId: i % 2 ? acct : null });
    const first = (await (await api('query?q=' + encodeURIComponent('SELECT Id, LastName, Account.Name FROM Contact ORDER BY LastName'))).json()) as {
      totalSize: number;
      done: boolean;
      nextRecordsUrl: string;
      records: Record<string, unknown>[];
    };
    expect(shapeOf({ ...first, records: [first.records[1]] })).toEqual(shapeOf(fixture('query-response-first-batch.json')));
    expect(first).toMatchObject({ totalSize: 7, done: false });
    expect(first.nextRecordsUrl).toMatch(/^\/services\/data\/v68\.0\/query\/01g[0-9A-Za-z]{15}-3$/);
    expect(first.records[0]).toEqual({ attributes: { type: 'Contact', url: expect.stringMatching(/^\/services\/data\/v68\.0\/sobjects\/Contact\/003/) }, Id: expect.any(String), LastName: 'C0', Account: null });
    expect(first.records[1]!['Account']).toEqual({ attributes: { type: 'Account', url: `/services/data/v68.0/sobjects/Account/${acct}` }, Name: 'Acme' });
    const names = first.records.map((r) => r['LastName']);
    let next: string | undefined = first.nextRecordsUrl;
    while (next) {
      const page = (await (await fetch(sf.url + next, { headers: { Authorization: `Bearer ${sf.issueToken()}` } })).json()) as { done: boolean; nextRecordsUrl?: string; records: Record<string, unknown>[] };
      if (page.done) expect(shapeOf({ ...page, records: [page.records[0]] })).toEqual(shapeOf(fixture('query-more-response-last-batch.json')));
      names.push(...page.records.map((r) => r['LastName']));
      next = page.nextRecordsUrl;
    }
    expect(names).toEqual(['C0', 'C1', 'C2', 'C3', 'C4', 'C5', 'C6']);
    expect(sf.calls.map((c) => c.endpoint)).toEqual(['query', 'queryMore', 'queryMore']);
    // A spent or unknown locator.
    const gone = await fetch(sf.url + first.nextRecordsUrl.replace(/-3$/, '-6'), { headers: { Authorization: `Bearer ${sf.issueToken()}` } });
    expect(gone.status).toBe(400);
    expect(((await gone.json()) as { errorCode: string }[])[0]!.errorCode).toBe('INVALID_QUERY_LOCATOR');
  });

  it('honours Sforce-Query-Options batchSize within 200–2,000', async () => {
    const { sf, api } = await started();
    for (let i = 0; i < 450; i++) sf.org.insert('Account', { Name: `A${i}` });
    const r = (await (await api('query?q=SELECT+Id+FROM+Account', { headers: { 'Sforce-Query-Options': 'batchSize=200' } })).json()) as { records: unknown[]; nextRecordsUrl: string };
    expect(r.records).toHaveLength(200);
    expect(r.nextRecordsUrl).toMatch(/-200$/);
    const tiny = (await (await api('query?q=SELECT+Id+FROM+Account', { headers: { 'Sforce-Query-Options': 'batchSize=5' } })).json()) as { records: unknown[] };
    expect(tiny.records).toHaveLength(200);
    expect(((await (await api('query?q=SELECT+Id+FROM+Account')).json()) as { records: unknown[] }).records).toHaveLength(450);
  });

  it('query hides deleted rows; queryAll returns them with IsDeleted true', async () => {
    const { sf, api } = await started();
    const a = sf.org.insert('Lead', { LastName: 'A', Company: 'X' });
    sf.org.insert('Lead', { LastName: 'B', Company: 'X' });
    sf.org.remove('Lead', a);
    const q = (await (await api('query?q=' + encodeURIComponent('SELECT Id, IsDeleted FROM Lead'))).json()) as { totalSize: number };
    expect(q.totalSize).toBe(1);
    const all = (await (await api('queryAll?q=' + encodeURIComponent('SELECT Id, IsDeleted FROM Lead WHERE IsDeleted = true'))).json()) as { totalSize: number; records: { Id: string; IsDeleted: boolean }[] };
    expect(all.records).toEqual([expect.objectContaining({ Id: a, IsDeleted: true })]);
  });

  it('COUNT() answers totalSize with no records', async () => {
    const { sf, api } = await started();
    for (let i = 0; i < 4; i++) sf.org.insert('Account', { Name: `N${i}`, Industry: i < 3 ? 'Retail' : 'Finance' });
    const r = await (await api('query?q=' + encodeURIComponent("SELECT COUNT() FROM Account WHERE Industry = 'retail'"))).json();
    expect(r).toEqual({ totalSize: 3, done: true, records: [] });
  });

  it('filters: AND/OR/NOT with parentheses, IN/NOT IN, LIKE, datetimes in three forms, dates, null, LIMIT/OFFSET, ORDER BY', () => {
    const org = new SalesforceOrg({ now: clock });
    const acct = org.insert('Account', { Name: "O'Brien & Co" });
    const mk = (name: string, stage: string, amount: number | null, close: string, at: string): string => org.insert('Opportunity', { Name: name, StageName: stage, Amount: amount, CloseDate: close, AccountId: acct }, at);
    const o1 = mk('Alpha', 'Prospecting', 100, '2026-11-01', '2026-11-01T00:00:00Z');
    const o2 = mk('Beta', 'Closed Won', 500, '2026-11-10', '2026-11-05T00:00:00Z');
    const o3 = mk('Gamma', 'Closed Lost', null, '2026-12-01', '2026-11-20T00:00:00Z');
    const ids = (soql: string): string[] => compileQuery(org, soql).run(false).map((r) => r['Id'] as string);
    expect(ids('SELECT Id FROM Opportunity WHERE IsWon = true')).toEqual([o2]);
    expect(ids("SELECT Id FROM Opportunity WHERE (StageName = 'Prospecting' OR Amount > 200) AND (NOT Name LIKE 'g%')")).toEqual([o1, o2]);
    expect(ids("SELECT Id FROM Opportunity WHERE NOT Name LIKE 'g%'")).toEqual([o1, o2]);
    expect(ids("SELECT Id FROM Opportunity WHERE StageName IN ('Closed Won', 'Closed Lost') AND Amount = null")).toEqual([o3]);
    expect(ids("SELECT Id FROM Opportunity WHERE StageName NOT IN ('Closed Won')")).toEqual([o1, o3]);
    expect(ids('SELECT Id FROM Opportunity WHERE SystemModstamp > 2026-11-01T00:00:00Z')).toEqual([o2, o3]);
    expect(ids('SELECT Id FROM Opportunity WHERE SystemModstamp >= 2026-11-01T01:00:00+01:00')).toEqual([o1, o2, o3]);
    expect(ids('SELECT Id FROM Opportunity WHERE CreatedDate <= 2026-11-05T00:00:00.000Z')).toEqual([o1, o2]);
    expect(ids('SELECT Id FROM Opportunity WHERE CloseDate < 2026-11-10')).toEqual([o1]);
    expect(ids("SELECT Id FROM Opportunity WHERE Account.Name = 'o\\'brien & co'")).toEqual([o1, o2, o3]);
    expect(ids('SELECT Id FROM Opportunity ORDER BY Amount DESC NULLS LAST LIMIT 2')).toEqual([o2, o1]);
    expect(ids('SELECT Id FROM Opportunity ORDER BY Amount')).toEqual([o3, o1, o2]);
    expect(ids('SELECT Id FROM Opportunity ORDER BY Name DESC LIMIT 1 OFFSET 1')).toEqual([o2]);
    expect(ids(`SELECT Id FROM Opportunity WHERE Id = '${o2.slice(0, 15)}'`)).toEqual([o2]);
  });

  it('parses with a tokenizer: keywords in any case, escapes, <> as !=', () => {
    const soql = "select Id from Lead where Email <> 'a\\'b' order by CreatedDate asc nulls last limit 5";
    const ast = parseSoql(soql);
    expect(ast.from).toBe('Lead');
    expect(ast.where).toEqual({ t: 'cmp', field: 'Email', fieldPos: soql.indexOf('Email'), op: '!=', lit: { kind: 'string', value: "a'b", pos: soql.indexOf("'") } });
    expect(ast.orderBy).toEqual([{ path: 'CreatedDate', pos: soql.indexOf('CreatedDate'), desc: false, nullsLast: true }]);
    expect(ast.limit).toBe(5);
  });

  it.each([
    ['SELECT Id FROM Lead WHERE', 'MALFORMED_QUERY'],
    ['SELECT Id, FROM Lead', 'MALFORMED_QUERY'],
    ["SELECT Id FROM Lead WHERE Email = 'x' AND Company = 'y' OR Status = 'z'", 'MALFORMED_QUERY'],
    ["SELECT Id FROM Lead WHERE Email = 'unterminated", 'MALFORMED_QUERY'],
    ["SELECT Id FROM Lead WHERE Email = 'x' AND NOT Company = 'y'", 'MALFORMED_QUERY'],
    ['SELECT Id FROM Lead LIMIT x', 'MALFORMED_QUERY'],
    ['SELECT Foo FROM Lead', 'INVALID_FIELD'],
    ['SELECT Score__c FROM Lead', 'INVALID_FIELD'],
    ['SELECT Owner.Name FROM Lead', 'INVALID_FIELD'],
    ["SELECT Id FROM Lead WHERE CreatedDate > '2026-11-01T00:00:00Z'", 'INVALID_FIELD'],
    ['SELECT Id FROM Lead WHERE IsConverted = 1', 'INVALID_FIELD'],
    ['SELECT Id FROM Widget', 'INVALID_TYPE'],
  ])('%s → 400 %s', async (soql, code) => {
    const { api } = await started();
    const r = await api('query?q=' + encodeURIComponent(soql));
    expect(r.status).toBe(400);
    const body = (await r.json()) as { errorCode: string; message: string }[];
    expect(body[0]!.errorCode).toBe(code);
    if (code === 'INVALID_FIELD' && soql.includes('Foo')) {
      expect(body[0]!.message).toContain("No such column 'Foo' on entity 'Lead'");
      expect(shapeOf(body)).toEqual(shapeOf(fixture('error-invalid-field.json')));
    }
    if (soql === 'SELECT Id FROM Lead WHERE') expect(shapeOf(body)).toEqual(shapeOf(fixture('error-malformed-query.json')));
  });

  it('custom fields exist only once declared', async () => {
    const { sf, api } = await started({ customFields: [{ type: 'Opportunity', name: 'Sightline_Value__c', kind: 'currency' }] });
    const id = sf.org.insert('Opportunity', { Name: 'X', StageName: 'Prospecting', CloseDate: '2026-12-01', Sightline_Value__c: 42 });
    const r = (await (await api('query?q=' + encodeURIComponent('SELECT Sightline_Value__c FROM Opportunity'))).json()) as { records: Record<string, unknown>[] };
    expect(r.records[0]).toMatchObject({ Sightline_Value__c: 42 });
    expect((await api('query?q=' + encodeURIComponent('SELECT Other__c FROM Opportunity'))).status).toBe(400);
    sf.org.declareField('Lead', 'Score__c', 'number');
    expect((await api('query?q=' + encodeURIComponent('SELECT Score__c FROM Lead'))).status).toBe(200);
    expect(id).toMatch(/^006/);
  });
});

describe('sObject Get Deleted', () => {
  it('lists deletions within the window, to the minute, with the documented keys', async () => {
    const { sf, api } = await started();
    const a = sf.org.insert('Contact', { LastName: 'A' }, '2026-11-20T00:00:00Z');
    const b = sf.org.insert('Contact', { LastName: 'B' }, '2026-11-20T00:00:00Z');
    sf.org.remove('Contact', a, '2026-11-25T10:15:30Z');
    sf.org.remove('Contact', b, '2026-11-27T10:00:00Z');
    const r = await api(`sobjects/Contact/deleted/?start=${encodeURIComponent('2026-11-25T00:00:00+00:00')}&end=${encodeURIComponent('2026-11-26T00:00:00+00:00')}`);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(shapeOf(body)).toEqual(shapeOf(fixture('get-deleted-response.json')));
    expect(body).toEqual({ deletedRecords: [{ id: a, deletedDate: '2026-11-25T10:15:30.000+0000' }], earliestDateAvailable: '2026-10-29T12:00:00.000+0000', latestDateCovered: '2026-11-26T00:00:00.000+0000' });
    // end in the future: covered only up to now (minute).
    const later = (await (await api(`sobjects/Contact/deleted/?start=2026-11-27T00:00:00Z&end=2026-12-30T00:00:00Z`)).json()) as { deletedRecords: { id: string }[]; latestDateCovered: string };
    expect(later.deletedRecords.map((d) => d.id)).toEqual([b]);
    expect(later.latestDateCovered).toBe('2026-11-28T12:00:00.000+0000');
  });

  it.each([
    ['start=2026-11-25T00:00:00Z', 'MISSING_ARGUMENT'],
    ['start=2026-11-25T00:00:00Z&end=2026-11-25T00:00:30Z', 'INVALID_REPLICATION_DATE'],
    ['start=2026-10-01T00:00:00Z&end=2026-11-25T00:00:00Z', 'INVALID_REPLICATION_DATE'],
    ['start=yesterday&end=2026-11-25T00:00:00Z', 'INVALID_REPLICATION_DATE'],
  ])('%s → 400 %s', async (qs, code) => {
    const { api } = await started();
    const r = await api(`sobjects/Lead/deleted/?${qs}`);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { errorCode: string }[])[0]!.errorCode).toBe(code);
  });
});

describe('writes', () => {
  it('PATCH sobjects/<Type>/<id>: 204, stamps SystemModstamp, writes OpportunityHistory on stage change', async () => {
    const { sf, api } = await started();
    const opp = sf.org.insert('Opportunity', { Name: 'D', StageName: 'Prospecting', Amount: 10, CloseDate: '2026-12-01' }, '2026-11-01T00:00:00Z');
    expect(sf.org.all('OpportunityHistory')).toHaveLength(1);
    const r = await api(`sobjects/Opportunity/${opp}`, { method: 'PATCH', body: JSON.stringify({ StageName: 'Closed Won' }) });
    expect(r.status).toBe(204);
    expect(await r.text()).toBe('');
    const after = sf.org.get('Opportunity', opp)!;
    expect(after).toMatchObject({ StageName: 'Closed Won', IsWon: true, IsClosed: true, Probability: 100, SystemModstamp: '2026-11-28T12:00:00.000+0000', LastModifiedDate: '2026-11-28T12:00:00.000+0000' });
    expect(sf.org.all('OpportunityHistory').map((h) => h['StageName'])).toEqual(['Prospecting', 'Closed Won']);
    // A save that changes none of stage/amount/close date writes no history.
    await api(`sobjects/Opportunity/${opp}`, { method: 'PATCH', body: JSON.stringify({ Name: 'D2' }) });
    expect(sf.org.all('OpportunityHistory')).toHaveLength(2);
  });

  it('PATCH errors: 404 NOT_FOUND, INVALID_FIELD, INVALID_FIELD_FOR_INSERT_UPDATE, FIELD_CUSTOM_VALIDATION_EXCEPTION', async () => {
    const { sf, api } = await started();
    const lead = sf.org.insert('Lead', { LastName: 'L', Company: 'C' });
    const patch = (id: string, body: unknown): Promise<Response> => api(`sobjects/Lead/${id}`, { method: 'PATCH', body: JSON.stringify(body) });
    const nf = await patch('00Q5e00000ZZZZZZZZ', { Status: 'x' });
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual(fixture('error-not-found.json'));
    const unk = await patch(lead, { Nope: 1 });
    expect(unk.status).toBe(400);
    expect(((await unk.json()) as { errorCode: string }[])[0]!.errorCode).toBe('INVALID_FIELD');
    const ro = await patch(lead, { IsConverted: true });
    expect(ro.status).toBe(400);
    expect(((await ro.json()) as { errorCode: string; fields: string[] }[])[0]).toMatchObject({ errorCode: 'INVALID_FIELD_FOR_INSERT_UPDATE', fields: ['IsConverted'] });
    sf.org.rejectWrite('Lead', lead, 'Status', 'Status cannot move backwards');
    const v = await patch(lead, { Status: 'Open - Not Contacted' });
    expect(v.status).toBe(400);
    const vb = await v.json();
    expect(shapeOf(vb)).toEqual(shapeOf(fixture('error-field-custom-validation-exception.json')));
    expect(vb).toEqual([{ message: 'Status cannot move backwards', errorCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', fields: ['Status'] }]);
    expect((await patch(lead, { LeadSource: 'Web' })).status).toBe(204);
  });

  it('sObject Collections PATCH: per-record results, partial success, allOrNone rollback, 200-record cap', async () => {
    const { sf, api } = await started();
    const c1 = sf.org.insert('Contact', { LastName: 'One' });
    const c2 = sf.org.insert('Contact', { LastName: 'Two' });
    sf.org.rejectWrite('Contact', c2, 'LeadSource', 'Lead source is locked');
    const body = (allOrNone: boolean): string =>
      JSON.stringify({ allOrNone, records: [{ attributes: { type: 'Contact' }, id: c1, LeadSource: 'Web' }, { attributes: { type: 'Contact' }, id: c2, LeadSource: 'Web' }] });
    const all = await api('composite/sobjects', { method: 'PATCH', body: body(true) });
    expect(all.status).toBe(200);
    const allBody = (await all.json()) as { success: boolean; errors: { statusCode: string }[] }[];
    expect(allBody.map((r) => r.success)).toEqual([false, false]);
    expect(allBody[0]!.errors[0]!.statusCode).toBe('ALL_OR_NONE_OPERATION_ROLLED_BACK');
    expect(sf.org.get('Contact', c1)!['LeadSource']).toBeNull();
    const partial = await (await api('composite/sobjects', { method: 'PATCH', body: body(false) })).json();
    expect(shapeOf(partial)).toEqual(shapeOf(fixture('collections-update-partial-failure.json')));
    expect(partial).toEqual([
      { id: c1, success: true, errors: [] },
      { id: c2, success: false, errors: [{ statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message: 'Lead source is locked', fields: ['LeadSource'] }] },
    ]);
    expect(sf.org.get('Contact', c1)!['LeadSource']).toBe('Web');
    const tooMany = await api('composite/sobjects', { method: 'PATCH', body: JSON.stringify({ records: Array.from({ length: 201 }, () => ({ attributes: { type: 'Contact' }, id: c1 })) }) });
    expect(tooMany.status).toBe(400);
  });
});

describe('Bulk API 2.0 query', () => {
  it('creates a job, reports InProgress then JobComplete, and pages CSV results by locator', async () => {
    const { sf, api } = await started({ bulkPollsBeforeDone: 2 });
    sf.org.insert('Account', { Name: 'Plain' });
    sf.org.insert('Account', { Name: 'Quote "and", comma' });
    const gone = sf.org.insert('Account', { Name: 'Gone', Website: null });
    sf.org.remove('Account', gone);
    const created = await api('jobs/query', { method: 'POST', body: JSON.stringify({ operation: 'queryAll', query: 'SELECT Id, Name, Website, IsDeleted FROM Account ORDER BY Name' }) });
    expect(created.status).toBe(200);
    const job = (await created.json()) as Record<string, unknown>;
    expect(shapeOf(job)).toEqual(shapeOf(fixture('bulk-query-job-created.json')));
    expect(job).toMatchObject({ operation: 'queryAll', object: 'Account', state: 'UploadComplete', apiVersion: 68 });
    const poll = async (): Promise<Record<string, unknown>> => (await (await api(`jobs/query/${job['id']}`)).json()) as Record<string, unknown>;
    expect((await poll())['state']).toBe('InProgress');
    expect((await poll())['state']).toBe('InProgress');
    const done = await poll();
    expect(shapeOf(done)).toEqual(shapeOf(fixture('bulk-query-job-complete.json')));
    expect(done).toMatchObject({ state: 'JobComplete', numberRecordsProcessed: 3 });
    const p1 = await api(`jobs/query/${job['id']}/results?maxRecords=2`);
    expect(p1.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(p1.headers.get('Sforce-NumberOfRecords')).toBe('2');
    const locator = p1.headers.get('Sforce-Locator')!;
    expect(locator).not.toBe('null');
    const text1 = await p1.text();
    expect(text1.split('\n')[0]).toBe('"Id","Name","Website","IsDeleted"');
    expect(text1).toContain(`"${gone}","Gone",,"true"`);
    const p2 = await api(`jobs/query/${job['id']}/results?maxRecords=2&locator=${locator}`);
    expect(p2.headers.get('Sforce-Locator')).toBe('null');
    expect(p2.headers.get('Sforce-NumberOfRecords')).toBe('1');
    expect((await p2.text()).split('\n')[1]).toMatch(/^"001[0-9A-Za-z]{15}","Quote ""and"", comma",,"false"$/);
  });

  it('rejects a bad operation and reports SOQL errors at creation', async () => {
    const { api } = await started();
    expect((await api('jobs/query', { method: 'POST', body: JSON.stringify({ operation: 'upsert', query: 'SELECT Id FROM Lead' }) })).status).toBe(400);
    // Bulk API 2.0 documents no aggregate functions and no OFFSET.
    expect((await api('jobs/query', { method: 'POST', body: JSON.stringify({ operation: 'query', query: 'SELECT COUNT() FROM Lead' }) })).status).toBe(400);
    expect((await api('jobs/query', { method: 'POST', body: JSON.stringify({ operation: 'query', query: 'SELECT Id FROM Lead LIMIT 5 OFFSET 5' }) })).status).toBe(400);
    const bad = await api('jobs/query', { method: 'POST', body: JSON.stringify({ operation: 'query', query: 'SELECT Nope FROM Lead' }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errorCode: string }[])[0]!.errorCode).toBe('INVALID_FIELD');
  });
});

describe('seedOrg and speed', () => {
  it('is deterministic for a seed and writes stage histories', () => {
    const a = new SalesforceOrg({ now: clock });
    const b = new SalesforceOrg({ now: clock });
    const opts = { leads: 200, contacts: 100, accounts: 20, opportunities: 100, seed: 42 };
    seedOrg(a, opts);
    seedOrg(b, opts);
    expect(a.all('Opportunity')).toEqual(b.all('Opportunity'));
    expect(a.all('Lead')).toEqual(b.all('Lead'));
    expect(a.all('OpportunityHistory').length).toBeGreaterThan(100);
    expect(a.all('Lead').some((l) => l['IsConverted'] === true)).toBe(true);
    const c = new SalesforceOrg({ now: clock });
    seedOrg(c, { ...opts, seed: 43 });
    expect(c.all('Opportunity')).not.toEqual(a.all('Opportunity'));
  });

  it('seeds 100,000 records and serves them in 2,000-row batches', async () => {
    const { sf, api } = await started();
    seedOrg(sf.org, { leads: 40_000, contacts: 25_000, accounts: 5_000, opportunities: 30_000, seed: 7 });
    const r = await api('query?q=' + encodeURIComponent('SELECT Id, Email, Status, ConvertedOpportunityId, SystemModstamp FROM Lead WHERE SystemModstamp >= 2026-06-01T00:00:00Z ORDER BY SystemModstamp, Id'));
    const body = (await r.json()) as { totalSize: number; records: unknown[]; nextRecordsUrl: string };
    const more = (await (await fetch(sf.url + body.nextRecordsUrl, { headers: { Authorization: `Bearer ${sf.issueToken()}` } })).json()) as { records: unknown[] };
    expect(sf.org.all('Lead').length).toBe(40_000);
    expect(body.records).toHaveLength(2000);
    expect(body.totalSize).toBeGreaterThan(4000);
    expect(more.records).toHaveLength(2000);
  });
});
