// The client against a local HTTP server answering as the API documents: retries of 429 and 5xx
// after Retry-After (bounded, never other 4xx, the request sent unchanged), cursor paging, and
// query lists serialized as the document states.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSightlineClient, items, pages, serializeQuery, SightlineApiError, type SightlineClientOptions } from './index';
import { retryAfterSeconds } from './retry';

interface Seen { method: string; url: string; body: string; headers: IncomingMessage['headers'] }
type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang-up';

let server: Server;
let base: string;
let seen: Seen[] = [];
let script: ((request: Seen) => Reply)[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', body, headers: req.headers };
      seen.push(request);
      const unscripted = (): Reply => ({ status: 500, body: { type: 'x/internal', title: 't', status: 500, detail: 'no script', instance: 'i' } });
      const reply = (script.shift() ?? unscripted)(request);
      if (reply === 'hang-up') {
        req.socket.destroy();
        return;
      }
      const problem = reply.status >= 400;
      res.writeHead(reply.status, { 'content-type': problem ? 'application/problem+json' : 'application/json', ...reply.headers });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  script = [];
});

const problem = (kind: string, status: number) => ({ type: `${base}/problems/${kind}`, title: kind, status, detail: `${kind} happened`, remediation: 'Do the right thing.', instance: 'req-1' });
const ok = (body: unknown) => () => ({ status: 200, body });
const sleeps: number[] = [];
const client = (retry: SightlineClientOptions['retry'] = {}) => {
  sleeps.length = 0;
  return createSightlineClient({ baseUrl: `${base}/`, apiKey: 'sl_test_key', retry: { sleep: async (ms) => void sleeps.push(ms), ...retry } });
};
const events = { events: [{ event_type: 'purchase', email: 'ada@example.com', revenue: 10, currency: 'EUR' }] };

describe('retries', () => {
  it('retries 429 after Retry-After and 5xx with backoff, sending the same request each time', async () => {
    script = [
      () => ({ status: 429, headers: { 'retry-after': '2' }, body: problem('rate-limit-exceeded', 429) }),
      () => ({ status: 503, body: problem('service-unavailable', 503) }),
      ok({ accepted: 1, rejected: 0, errors: [] }),
    ];
    const { data, response } = await client().POST('/v1/events', { params: { header: { 'Idempotency-Key': 'k-1' } }, body: events });
    expect(response.status).toBe(200);
    expect(data).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect(sleeps).toEqual([2000, 2000]);
    expect(seen.map((s) => [s.method, s.url, s.body, s.headers['idempotency-key'], s.headers['authorization']])).toEqual(
      Array.from({ length: 3 }, () => ['POST', '/v1/events', JSON.stringify(events), 'k-1', 'Bearer sl_test_key']),
    );
  });

  it('never retries another 4xx', async () => {
    script = [() => ({ status: 400, body: problem('unknown-metric', 400) }), ok({})];
    const { error, response } = await client().GET('/v1/metrics', { params: { query: { metrics: ['visitors'] } } });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ type: `${base}/problems/unknown-metric` });
    expect(seen).toHaveLength(1);
  });

  it('stops after maxAttempts, exactly, and hands back the last answer', async () => {
    script = Array.from({ length: 5 }, () => () => ({ status: 429, headers: { 'retry-after': '0' }, body: problem('rate-limit-exceeded', 429) }));
    const { response } = await client({ maxAttempts: 3 }).GET('/v1/me');
    expect(response.status).toBe(429);
    expect(seen).toHaveLength(3);
    script = [() => ({ status: 500, body: problem('internal', 500) }), ok({})];
    expect((await client({ maxAttempts: 1 }).GET('/v1/me')).response.status).toBe(500);
    expect(seen).toHaveLength(4);
  });

  it('waits a Retry-After up to maxDelaySeconds, and returns one a second longer at once', async () => {
    script = [() => ({ status: 429, headers: { 'retry-after': '30' }, body: problem('rate-limit-exceeded', 429) }), ok({ data: {} })];
    expect((await client({ maxDelaySeconds: 30 }).GET('/v1/me')).response.status).toBe(200);
    expect(sleeps).toEqual([30_000]);
    script = [() => ({ status: 429, headers: { 'retry-after': '31' }, body: problem('quota-exceeded', 429) }), ok({ data: {} })];
    expect((await client({ maxDelaySeconds: 30 }).GET('/v1/me')).response.status).toBe(429);
    expect(sleeps).toEqual([]);
  });

  it('repeats a request after a dropped connection only when it cannot write twice', async () => {
    script = [() => 'hang-up', ok({ data: {} })];
    expect((await client().GET('/v1/me')).response.status).toBe(200);
    expect(seen).toHaveLength(2);
    script = [() => 'hang-up', ok({ accepted: 1, rejected: 0, errors: [] })];
    await expect(client().POST('/v1/events', { body: events })).rejects.toThrow();
    expect(seen).toHaveLength(3);
    script = [() => 'hang-up', ok({ accepted: 1, rejected: 0, errors: [] })];
    expect((await client().POST('/v1/events', { params: { header: { 'Idempotency-Key': 'k-2' } }, body: events })).response.status).toBe(200);
    expect(seen).toHaveLength(5);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10);
    expect(retryAfterSeconds(null)).toBeNull();
    expect(retryAfterSeconds('soon')).toBeNull();
  });
});

describe('paging', () => {
  const contact = (id: string) => ({ id, identity_id: `p-${id}`, type: 'purchase', occurred_at: '2026-01-01T00:00:00Z', is_spam: false });

  it('passes next_cursor back verbatim until it is absent', async () => {
    const cursor = 'v1.a+b/c==';
    script = [
      ok({ data: [contact('1'), contact('2')], meta: { has_more: true }, next_cursor: cursor }),
      ok({ data: [contact('3')], meta: { has_more: false } }),
    ];
    const ids: string[] = [];
    for await (const row of items(client(), '/v1/contacts', { params: { query: { limit: 2, status: 'won' } } })) ids.push(row.id);
    expect(ids).toEqual(['1', '2', '3']);
    expect(seen.map((s) => new URL(s.url, base).searchParams.get('cursor'))).toEqual([null, cursor]);
    expect(seen.every((s) => new URL(s.url, base).searchParams.get('status') === 'won')).toBe(true);
  });

  it('stops when meta.has_more is false even with a cursor (the change feed keeps it to resume from)', async () => {
    script = [
      ok({ changes: [{ id: 'c1', type: 'conversion.created', source: 'ingest', occurred_at: '2026-01-01T00:00:00Z' }], meta: { has_more: true }, next_cursor: 'n1' }),
      ok({ changes: [{ id: 'c2', type: 'deal.stage_changed', source: 'crm:hubspot', occurred_at: '2026-01-01T00:00:00Z' }], meta: { has_more: false }, next_cursor: 'n2' }),
    ];
    const got: string[] = [];
    let last: string | undefined;
    for await (const page of pages(client(), '/v1/changes', { params: { query: { since: '2026-01-01T00:00:00Z' } } })) {
      got.push(...page.changes.map((c) => c.id));
      last = page.next_cursor;
    }
    expect(got).toEqual(['c1', 'c2']);
    expect(last).toBe('n2');
    expect(seen).toHaveLength(2);
  });

  it('throws a problem answer as SightlineApiError with its kind', async () => {
    script = [() => ({ status: 400, body: { ...problem('invalid-request', 400), remediation: 'Restart paging without a cursor.' } })];
    const walk = items(client(), '/v1/contacts', { params: { query: { cursor: 'edited' } } });
    const error = await walk.next().then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(SightlineApiError);
    expect(error).toMatchObject({ status: 400, kind: 'invalid-request', message: expect.stringContaining('Restart paging') });
  });
});

describe('query strings', () => {
  it('joins lists with commas, repeats filter, and leaves out what is unset', () => {
    expect(serializeQuery({ metrics: ['visitors', 'revenue'], filter: ['country:eq:DE', 'channel:in:A|B'], limit: 5, only_paid: false, period: undefined, cursor: null })).toBe(
      'metrics=visitors%2Crevenue&filter=country%3Aeq%3ADE&filter=channel%3Ain%3AA%7CB&limit=5&only_paid=false',
    );
  });

  it('sends them so through the client', async () => {
    script = [ok({ data: [], meta: {} })];
    await client().GET('/v1/metrics', { params: { query: { metrics: ['visitors', 'conversions'], group_by: ['channel'], filter: ['country:eq:DE'] } } });
    expect(new URL(seen[0]?.url ?? '', base).search).toBe('?metrics=visitors%2Cconversions&group_by=channel&filter=country%3Aeq%3ADE');
  });
});
