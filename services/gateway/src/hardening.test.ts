// Issue 16 against the gateway on embedded drivers: the public tracker endpoint trusts nothing it
// cannot check, a refusal costs no body, every transport-level failure is a problem document with
// the RateLimit headers, and bodies are validated as sent. Stand-in services answer over the real
// bus and record what the gateway forwards. (The whole stack, the hijack replay and the fuzz corpus
// are in test-e2e/fuzz.)
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Response } from 'express';
import { createLogger, createStoreProvider, defineStandIn, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import type { CollectRequest } from '@sightline/proto-schemas';
import { CLIENT_CLOCK_BOUND_MS, identifySignature } from '@sightline/tracker';
import { KEY_CACHE_ENTRIES } from './auth';
import { createGatewayModule } from './index';
import { COLLECT_HITS_PER_ADDRESS_PER_MINUTE, COLLECT_HITS_PER_SITE_PER_MINUTE, Limits } from './limits';
import { SITE_CACHE } from './site-directory';

const collected: CollectRequest[] = [];

/** Stand-in ingest: records what /collect forwards; POST /events answers what it received. */
const ingest = defineStandIn({
  name: 'ingest',
  needs: {},
  async create() {
    return {
      rpc: {
        'ingest.collect': async (request: CollectRequest) => {
          collected.push(request);
          return { accepted: (request.body as { events: unknown[] }).events.length, rejected: 0 };
        },
        'ingest.postEvents': async (request: unknown) => ({ status: 200, body: { echo: request } }),
      },
    };
  },
});

/** Stand-in contacts and attribution: echo the validated request, to show what validation let through. */
const contacts = defineStandIn({
  name: 'contacts',
  needs: {},
  async create() {
    return { rpc: { 'contacts.patchContact': async (request: unknown) => ({ status: 200, body: { echo: request } }) } };
  },
});
const attribution = defineStandIn({
  name: 'attribution',
  needs: {},
  async create() {
    return { rpc: { 'attribution.getMetrics': async (request: unknown) => ({ status: 200, body: { echo: request } }) } };
  },
});

describe('gateway hardening (issue 16, embedded)', () => {
  let proc: RunningProcess;
  let dataDir: string;
  let base: string;
  let key: string;
  let eventsOnlyKey: string;
  let readOnlyKey: string;
  let otherKey: string;
  let freeKey: string;
  let publicId: string;
  let otherPublicId: string;
  let secret: string;
  let websiteId: string;
  let address = 0;
  /** A fresh client address per test, so per-address budgets do not leak between tests. */
  const nextAddress = () => `10.1.${Math.floor(++address / 250)}.${(address % 250) + 1}`;

  const admin = async (path: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await r.json()) as Record<string, string>;
  };
  const call = async (path: string, init: RequestInit & { key?: string | null; from?: string } = {}) => {
    const { key: bearer = key, from = nextAddress(), headers, ...rest } = init;
    const r = await fetch(`${base}${path}`, {
      ...rest,
      headers: { 'x-forwarded-for': from, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(headers as Record<string, string> | undefined) },
    });
    const text = await r.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { text };
    }
    return { status: r.status, headers: r.headers, body };
  };
  const hit = (over: Record<string, unknown> = {}) => ({
    id: randomUUID(), type: 'pageview', name: null, ts: Date.now(), url: 'https://shop.test/', referrer: null, title: 'Shop', screen: '1440x900', props: {}, ...over,
  });
  const collect = (body: unknown, init: { origin?: string | null; from?: string; key?: string; raw?: string } = {}) =>
    call('/collect', {
      method: 'POST',
      key: init.key ?? null,
      ...(init.from ? { from: init.from } : {}),
      headers: { 'content-type': 'text/plain', ...(init.origin === null ? {} : { origin: init.origin ?? 'https://shop.test' }) },
      body: init.raw ?? JSON.stringify(body),
    });
  const expectProblem = (answer: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, kind: string) => {
    expect({ status: answer.status, type: answer.body['type'] }).toEqual({ status, type: expect.stringMatching(new RegExp(`/${kind}$`)) });
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ title: expect.any(String), detail: expect.any(String), remediation: expect.any(String), instance: answer.headers.get('sightline-request-id') });
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(answer.headers.get(name)).toMatch(/^\d+$/);
  };
  const siteCacheEntries = async () => {
    const text = await (await fetch(`http://127.0.0.1:${proc.adminPort}/metrics`, { headers: { authorization: `Bearer ${proc.settings.metricsToken}` } })).text();
    return Number(/^sightline_gateway_collect_site_cache_entries (\d+)$/m.exec(text)?.[1]);
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-gw-hardening-'));
    proc = await startModules({
      // The test client stands in for a proxy on loopback: its X-Forwarded-For is the client address.
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_TRUST_PROXY: 'loopback' }),
      logger: createLogger({ level: 'silent' }),
      modules: [createGatewayModule({ demo: false }), ingest, contacts, attribution],
    });
    base = `http://127.0.0.1:${proc.publicPort}`;
    const ws = await admin('/workspaces', { name: 'Shop', plan: 'business' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    publicId = site['public_id'] as string;
    secret = site['identify_secret'] as string;
    websiteId = site['id'] as string;
    key = (await admin('/keys', { workspace_id: ws['id'] }))['key'] as string;
    eventsOnlyKey = (await admin('/keys', { workspace_id: ws['id'], scopes: ['events:write'] }))['key'] as string;
    readOnlyKey = (await admin('/keys', { workspace_id: ws['id'], scopes: ['analytics:read'] }))['key'] as string;
    const other = await admin('/workspaces', { name: 'Other', plan: 'business' });
    otherPublicId = (await admin(`/workspaces/${other['id']}/websites`, { domain: 'other.test' }))['public_id'] as string;
    otherKey = (await admin('/keys', { workspace_id: other['id'] }))['key'] as string;
    const free = await admin('/workspaces', { name: 'Free', plan: 'free' });
    await admin(`/workspaces/${free['id']}/websites`, { domain: 'free.test' });
    freeKey = (await admin('/keys', { workspace_id: free['id'] }))['key'] as string;
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  beforeEach(() => {
    collected.length = 0;
  });

  describe('the tracker endpoint (finding 1, 2)', () => {
    it('keeps the site-id caches bounded: 4,000 junk 30 KB ids add nothing, unknown well-formed ids stop at the bound', async () => {
      expect(await siteCacheEntries()).toBe(0);
      for (let batch = 0; batch < 40; batch += 1) {
        const answers = await Promise.all(Array.from({ length: 100 }, () => collect({ site: randomBytes(15_000).toString('hex'), aid: 'a', events: [hit()] })));
        for (const answer of answers) expect(answer.status).toBe(404);
      }
      expect(await siteCacheEntries()).toBe(0);
      for (let batch = 0; batch < 11; batch += 1) {
        await Promise.all(Array.from({ length: 100 }, () => collect({ site: `site_${randomBytes(8).toString('hex')}`, aid: 'a', events: [hit()] })));
      }
      // 1,100 unknown ids were looked up; the unknown cache holds its bound, not one more.
      expect(await siteCacheEntries()).toBe(SITE_CACHE.maxUnknown);
      expect(collected).toEqual([]);
    }, 120_000);

    it('answers an unknown site id with a problem document', async () => {
      expectProblem(await collect({ site: 'site_0000000000000000', aid: 'a', events: [hit()] }), 404, 'website-not-found');
    });

    it('limits hits per client address exactly at the budget, and says so in the headers', async () => {
      const from = nextAddress();
      const full = Array.from({ length: 50 }, () => hit());
      for (let sent = 0; sent < COLLECT_HITS_PER_ADDRESS_PER_MINUTE - 1; sent += 50) {
        expect((await collect({ site: publicId, aid: 'busy', events: full.slice(0, Math.min(50, COLLECT_HITS_PER_ADDRESS_PER_MINUTE - 1 - sent)) }, { from })).status).toBe(202);
      }
      const last = await collect({ site: publicId, aid: 'busy', events: [hit()] }, { from });
      expect(last.status).toBe(202);
      expect(last.headers.get('ratelimit-remaining')).toBe('0');
      const over = await collect({ site: publicId, aid: 'busy', events: [hit()] }, { from });
      expectProblem(over, 429, 'rate-limit-exceeded');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address has its own budget.
      expect((await collect({ site: publicId, aid: 'busy', events: [hit()] })).status).toBe(202);
    });

    it('limits hits per website exactly at the budget, whatever the addresses', async () => {
      const provider = createStoreProvider({ logger: createLogger({ level: 'silent' }) });
      const limits = new Limits(await provider.kv(), 1_000);
      const res = { setHeader: () => undefined } as unknown as Response;
      const site = randomUUID();
      for (let i = 0; i < COLLECT_HITS_PER_SITE_PER_MINUTE / 50; i += 1) await limits.admitHits('site', site, 50, res, () => undefined);
      await expect(limits.admitHits('site', site, 1, res, () => undefined)).rejects.toMatchObject({ kind: 'rate-limit-exceeded' });
      await limits.admitHits('site', randomUUID(), 1, res, () => undefined);
      await provider.close();
    });

    it('refuses a page that is not on the website, and answers CORS only for the website\'s origins', async () => {
      for (const origin of ['https://evil.example', 'https://shop.test.evil.example', 'null', 'file:///tmp/x.html', null]) {
        const answer = await collect({ site: publicId, aid: 'a', events: [hit()] }, { origin });
        expectProblem(answer, 403, 'origin-not-allowed');
        expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      }
      const sub = await collect({ site: publicId, aid: 'a', events: [hit({ url: 'https://www.shop.test/' })] }, { origin: 'https://www.shop.test' });
      expect(sub.status).toBe(202);
      expect(sub.headers.get('access-control-allow-origin')).toBe('https://www.shop.test');
      const preflight = await fetch(`${base}/collect`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('times hits by the server: a backdated ts lands at the receive time, and only orders hits within the bound', async () => {
      const dayAgo = Date.now() - 86_400_000;
      const before = Date.now();
      const answer = await collect({
        site: publicId, aid: 'clock', events: [
          hit({ ts: dayAgo - CLIENT_CLOCK_BOUND_MS - 1 }), hit({ ts: dayAgo - CLIENT_CLOCK_BOUND_MS }), hit({ ts: dayAgo - 1_000 }), hit({ ts: dayAgo }),
        ],
      });
      const after = Date.now();
      expect(answer.status).toBe(202);
      const ts = (collected[0]?.body as { events: { ts: number }[] }).events.map((e) => e.ts);
      const latest = ts[3] as number;
      expect(latest).toBeGreaterThanOrEqual(before);
      expect(latest).toBeLessThanOrEqual(after);
      // Spacing kept up to the bound (exactly at it), cut at the bound one past it.
      expect(ts.map((t) => t - latest)).toEqual([-CLIENT_CLOCK_BOUND_MS, -CLIENT_CLOCK_BOUND_MS, -1_000, 0]);
    });

    it('believes identify() only with the website backend\'s signature, and never forwards the signature', async () => {
      const email = 'Ada@Example.com';
      // Bound to this website and visitor with an expiry (issue 24; collect-identify.test.ts holds the rest).
      const sign = (key: string, signed: string) => identifySignature({ secret: key, site: publicId, visitor: 'ident', email: signed, expiresAt: new Date(Date.now() + 600_000) });
      const answer = await collect({
        site: publicId, aid: 'ident', events: [
          hit({ type: 'identify', email }),
          hit({ type: 'identify', email, sig: sign('not-the-secret', email) }),
          hit({ type: 'identify', email: 'eve@example.com', sig: sign(secret, email) }),
          hit({ type: 'identify', email, sig: sign(secret, ' ada@example.com ') }),
          hit(),
        ],
      });
      expect(answer.body).toEqual({ accepted: 2, rejected: 3 });
      const forwarded = (collected[0]?.body as { events: Record<string, unknown>[] }).events;
      expect(forwarded.map((e) => [e['type'], e['email'] ?? null])).toEqual([['identify', email], ['pageview', null]]);
      expect(forwarded.some((e) => 'sig' in e)).toBe(false);
    });

    it('takes the client address from X-Forwarded-For only as the configured proxy reports it', async () => {
      await collect({ site: publicId, aid: 'geo', events: [hit()] }, { from: '81.2.69.160' });
      expect(collected[0]?.ip).toBe('81.2.69.160');
    });

    it('believes a replay sent with an events:write key: its times, identities and visitor address', async () => {
      const dayAgo = Date.now() - 86_400_000;
      const answer = await collect(
        { site: publicId, aid: 'replay', events: [hit({ ts: dayAgo }), hit({ ts: dayAgo + 5, type: 'identify', email: 'ada@example.com' })] },
        { key: eventsOnlyKey, origin: null, from: '81.2.69.160, 10.9.9.9' },
      );
      expect(answer.status).toBe(202);
      const request = collected[0] as CollectRequest;
      expect((request.body as { events: { ts: number }[] }).events.map((e) => e.ts)).toEqual([dayAgo, dayAgo + 5]);
      expect(request.ip).toBe('81.2.69.160');
      expect(answer.headers.get('ratelimit-limit')).toBe('600'); // counted against the workspace's plan
      expectProblem(await collect({ site: publicId, aid: 'r', events: [hit()] }, { key: readOnlyKey }), 403, 'insufficient-scope');
      expectProblem(await collect({ site: otherPublicId, aid: 'r', events: [hit()] }, { key }), 404, 'website-not-found');
      expectProblem(await collect({ site: publicId, aid: 'r', events: [hit()] }, { key: otherKey }), 404, 'website-not-found');
      expectProblem(await collect({ site: publicId, aid: 'r', events: [hit()] }, { key: 'sl_nope_nope' }), 401, 'unauthorized');
    });

    it('refuses bodies the tracker never sends, as problem documents', async () => {
      const deep = `{"site":"${publicId}","aid":"a","events":[${'['.repeat(5_000)}${']'.repeat(5_000)}]}`;
      expectProblem(await collect(null, { raw: deep }), 400, 'invalid-request');
      expectProblem(await collect(null, { raw: '{"site":' }), 400, 'invalid-request');
      expectProblem(await collect({ site: publicId, aid: 'a', events: Array.from({ length: 51 }, () => hit()) }), 400, 'invalid-request');
      expect((await collect({ site: publicId, aid: 'a', events: Array.from({ length: 50 }, () => hit()) })).status).toBe(202);
      expectProblem(await collect(null, { raw: JSON.stringify({ site: publicId, aid: 'a', events: [hit({ title: 'x'.repeat(70_000) })] }) }), 413, 'payload-too-large');
    });
  });

  describe('cheap refusal (finding 5)', () => {
    /** Sends only the headers of a request that announces a 2 MB body, and reads the answer. */
    const headersOnly = (path: string, authorization: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(proc.publicPort as number, '127.0.0.1', () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{"events":[`);
        });
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString('utf8');
          if (answer.includes('\r\n\r\n') && /"instance"/.test(answer)) {
            socket.destroy();
            resolve(answer);
          }
        });
        socket.on('error', reject);
      });

    it('answers a bad key, a missing scope and a spent budget without reading the announced body', async () => {
      expect(await headersOnly('/v1/events', 'Bearer sl_nope_nope')).toMatch(/^HTTP\/1\.1 401 [^]*connection: close/i);
      expect(await headersOnly('/v1/events', `Bearer ${readOnlyKey}`)).toMatch(/^HTTP\/1\.1 403 /);
      await Promise.all(Array.from({ length: 60 }, () => call('/v1/me', { key: freeKey })));
      expect(await headersOnly('/v1/events?website=free.test', `Bearer ${freeKey}`)).toMatch(/^HTTP\/1\.1 429 [^]*ratelimit-remaining: 0/i);
    });

    it('refuses a body over 2 MB, and JSON nested deeper than 32 levels, as problems', async () => {
      expectProblem(await call('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ events: [{ properties: { x: 'x'.repeat(2_100_000) } }] }) }), 413, 'payload-too-large');
      const nested = (depth: number) => `{"notes":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const deep = await call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: nested(5_000) });
      expectProblem(deep, 400, 'invalid-request');
      expect(String(deep.body['detail'])).toMatch(/nested deeper than 32/);
      // 31 levels under the top-level object is within the cap: refused for its type instead.
      const edge = await call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: nested(31) });
      expect(String(edge.body['detail'])).not.toMatch(/nested/);
      expect(String((await call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: nested(32) })).body['detail'])).toMatch(/nested deeper/);
    });
  });

  describe('transport-level failures are problem documents with RateLimit headers (finding 7, 8)', () => {
    it('bad percent-encoding in a path id, an unknown path, a wrong method', async () => {
      expectProblem(await call('/v1/contacts/%zz'), 400, 'invalid-request');
      expectProblem(await call('/v1/contacts/%E0%A4%A'), 400, 'invalid-request');
      expectProblem(await call('/v1/nothing-here'), 404, 'not-found');
      expectProblem(await call('/v1/nothing-here', { key: null }), 404, 'not-found');
      expectProblem(await call('/v1/me', { method: 'DELETE' }), 405, 'method-not-allowed');
    });

    it('ids that cannot exist: urn:uuid and NUL are not found', async () => {
      expectProblem(await call(`/v1/contacts/urn:uuid:${randomUUID()}`), 404, 'not-found');
      expectProblem(await call('/v1/contacts/%00'), 404, 'not-found');
    });

    it('a body that is not gzip sent as gzip, a non-JSON body, an unknown encoding, a bad charset', async () => {
      const patch = (body: string | Buffer, headers: Record<string, string>) => call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers, body });
      expectProblem(await patch('{"notes":"x"}', { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 400, 'invalid-request');
      expectProblem(await patch('{"notes":', { 'content-type': 'application/json' }), 400, 'invalid-request');
      expectProblem(await patch('notes=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported-media-type');
      expectProblem(await patch('{}', { 'content-type': 'application/json', 'content-encoding': 'compress' }), 415, 'unsupported-media-type');
      expectProblem(await patch('{}', { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported-media-type');
      const zipped = await patch(gzipSync('{"notes":"zipped"}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(zipped.status).toBe(200);
      expect((zipped.body['echo'] as { body: unknown }).body).toEqual({ notes: 'zipped' });
    });
  });

  describe('validation as sent (finding 3, 4, 7)', () => {
    const patch = (body: unknown) => call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const metrics = (query: string) => call(`/v1/metrics?website=shop.test&metrics=visitors&${query}`);

    it('refuses a value of the wrong type naming the field and its type; null clears a nullable field', async () => {
      const refused = await patch({ notes: 12345 });
      expectProblem(refused, 400, 'invalid-request');
      expect(String(refused.body['detail'])).toMatch(/"notes".*string.*number 12345/);
      expectProblem(await patch({ is_spam: 'true' }), 400, 'invalid-request');
      expectProblem(await patch({ sales_value: '12' }), 400, 'invalid-request');
      for (const body of [{ sales_value: null }, { notes: null }, { quote_value: null, lead_status_raw: null }]) {
        const cleared = await patch(body);
        expect({ body, status: cleared.status }).toEqual({ body, status: 200 });
        expect((cleared.body['echo'] as { body: unknown }).body).toEqual(body);
      }
    });

    it('refuses NUL and lone surrogates in body fields, property names included', async () => {
      for (const raw of ['{"notes":"a\\u0000b"}', '{"notes":"\\ud800"}', '{"status":"x\\udc00y"}']) {
        const answer = await call(`/v1/contacts/${randomUUID()}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: raw });
        expectProblem(answer, 400, 'invalid-request');
      }
    });

    it('coerces query strings only where the document types them, and clamps limit however it is written', async () => {
      const limitOf = async (value: string) => ((await metrics(`limit=${value}`)).body['echo'] as { query: { limit: unknown } } | undefined)?.query.limit;
      expect(await limitOf('1000')).toBe(1000);
      expect(await limitOf('1001')).toBe(1000);
      expect(await limitOf('1e9')).toBe(1000);
      expect(await limitOf('99999999999999999999999')).toBe(1000);
      expect(await limitOf('7')).toBe(7);
      for (const bad of ['1.5', '0', '-1', 'ten', '0x10', '']) expectProblem(await metrics(`limit=${bad}`), 400, 'invalid-request');
    });

    it('refuses NUL in filters and dates outside what the stores hold, with the window kind', async () => {
      expectProblem(await metrics('filter=country:eq:D%00E'), 400, 'unknown-filter-operator');
      for (const date of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2016-12-31T23:59:60Z', '1999-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z']) {
        const answer = await metrics(`from=${encodeURIComponent(date)}&to=2025-01-01T00:00:00Z`);
        expectProblem(answer, 400, 'invalid-window');
        expect(String(answer.body['detail'])).toMatch(/2000-01-01T00:00:00Z/);
      }
      expect((await metrics('from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')).status).toBe(200);
    });

    it('leaves each event of POST /events to ingest, but refuses the request as a whole for its own fields', async () => {
      const sent = await call('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"events":[{"anonymous_id":"a\\u0000"},{"anonymous_id":"b"}]}' });
      expect(sent.status).toBe(200);
      expect(((sent.body['echo'] as { body: { events: unknown[] } }).body.events)).toHaveLength(2);
      expectProblem(await call('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"website":"shop.test\\u0000","events":[{}]}' }), 404, 'website-not-found');
      expectProblem(await call('/v1/events?website=shop.test', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"events":[{}],"extra\\ud800":1}' }), 400, 'invalid-request');
    });
  });

  it('keeps the key cache bounded: a flood of unknown key ids from many addresses stops at its bound', async () => {
    const keyCacheEntries = async () => Number(/^sightline_gateway_key_cache_entries (\d+)$/m.exec(await (await fetch(`http://127.0.0.1:${proc.adminPort}/metrics`, { headers: { authorization: `Bearer ${proc.settings.metricsToken}` } })).text())?.[1]);
    for (let batch = 0; batch < 102; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => call('/v1/me', { key: `sl_${randomBytes(6).toString('hex')}_${randomBytes(24).toString('hex')}` })));
      for (const answer of answers) expect(answer.status).toBe(401);
    }
    expect(await keyCacheEntries()).toBe(KEY_CACHE_ENTRIES);
  }, 120_000);

  it('stores every website with an identify secret the public API never shows', async () => {
    const websites = await call('/v1/websites');
    expect(JSON.stringify(websites.body)).not.toContain(secret);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(websiteId).toBeTruthy();
  });
});
