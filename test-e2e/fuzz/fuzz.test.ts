// Issue 16: every module of the build in one process on embedded drivers, attacked as an outsider and
// used as a careless client would. The corpus is generated from the OpenAPI document the gateway
// serves, so an operation added later is fuzzed without touching this file. Every numbered finding
// of the issue is a named case; the corpus (issue 24: at least 5,000 requests) asserts no 5xx other
// than a 501/503 the operation documents, no request over 5 s, a problem document for every refusal,
// the RateLimit headers on every answer, and that nothing accepted is dead-lettered.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODULE_REGISTRY, SETTINGS_SECTIONS, TARGET_NAMES } from '@sightline/cli';
import { createLogger, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import { identifySignature } from '@sightline/tracker';
import { uncheckedFetch } from '../contract/hook';
import { buildCorpus, operationsOf, type FuzzCase } from './corpus';

type Json = Record<string, unknown>;
interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

const DOMAIN = 'shop.test';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const MINUTE = 60_000;
/** Longest a failing message is retried before it is dead-lettered by the bus (200 + 400 + 600 + 800 ms), with room. */
const RETRY_HORIZON_MS = 3_000;

describe('issue 16: hostile input against every module (embedded)', () => {
  let proc: RunningProcess;
  let dataDir: string;
  let base: string;
  let adminBase: string;
  let key: string;
  let narrowKey: string;
  let workspaceId: string;
  let websiteId: string;
  let publicId: string;
  let secret: string;
  let document: Json;
  /** Events the API said it accepted (first answers only, not replays): all must be stored. */
  let acceptedEvents = 0;

  const admin = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const r = await fetch(`${adminBase}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await r.json()) as Json;
  };
  const read = async (r: globalThis.Response): Promise<Answer> => {
    const text = await r.text();
    let body: Json = {};
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = {};
    }
    if (r.status === 200 && r.headers.get('idempotent-replayed') === null && typeof body['accepted'] === 'number') acceptedEvents += body['accepted'];
    if (r.status === 202 && typeof body['accepted'] === 'number') acceptedEvents += body['accepted'];
    return { status: r.status, headers: r.headers, text, body };
  };
  const api = async (path: string, init: RequestInit & { as?: string | null } = {}) => {
    const { as = key, headers, ...rest } = init;
    return read(await fetch(`${base}${path}`, { ...rest, headers: { ...(as ? { authorization: `Bearer ${as}` } : {}), ...(headers as Record<string, string> | undefined) } }));
  };
  const postEvents = (events: unknown[], as = key) => api('/v1/events', { method: 'POST', as, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
  const collect = async (body: unknown, headers: Record<string, string> = {}) =>
    read(await fetch(`${base}/collect`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: `https://${DOMAIN}`, 'user-agent': CHROME, ...headers }, body: JSON.stringify(body) }));
  const hit = (over: Json = {}) => ({ id: randomUUID(), type: 'pageview', name: null, ts: Date.now(), url: `https://${DOMAIN}/`, referrer: null, title: 'Shop', screen: '1440x900', props: {}, ...over });
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const stored = async () => (await (await fetch(`${adminBase}/admin/ingest/websites/${websiteId}/stats`, { headers: { authorization: `Bearer ${proc.settings.adminToken}` } })).json()) as { events: number };
  /**
   * Problems with the answer itself: the checks every answer of the corpus must pass. A 5xx is a
   * defect, but for a 501 or 503 the operation documents (`documented`; by default any 503).
   */
  const defects = (answer: Answer, documented: number[] = [503]): string[] => {
    const found: string[] = [];
    if (answer.status >= 500 && !((answer.status === 501 || answer.status === 503) && documented.includes(answer.status))) found.push(`status ${answer.status}`);
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) if (!/^\d+$/.test(answer.headers.get(name) ?? '')) found.push(`no ${name}`);
    const requestId = answer.headers.get('sightline-request-id');
    if (!requestId) found.push('no request id');
    if (answer.status >= 400) {
      if (!(answer.headers.get('content-type') ?? '').startsWith('application/problem+json')) found.push(`content type ${answer.headers.get('content-type')}`);
      const b = answer.body;
      if (typeof b['type'] !== 'string' || !/\/problems\/[a-z-]+$/.test(b['type'])) found.push('problem without type');
      if (b['status'] !== answer.status) found.push(`problem status ${String(b['status'])}`);
      for (const field of ['title', 'detail', 'remediation']) if (typeof b[field] !== 'string' || b[field] === '') found.push(`problem without ${field}`);
      if (b['instance'] !== requestId) found.push('instance is not the request id');
    } else if (!(answer.headers.get('content-type') ?? '').startsWith('application/json')) {
      found.push(`content type ${answer.headers.get('content-type')}`);
    }
    return found;
  };
  const expectSound = (answer: Answer) => expect(defects(answer)).toEqual([]);
  /** A HEAD answer has no body to check: its status and headers only. */
  const headDefects = (answer: Answer): string[] => [
    ...(answer.status >= 500 ? [`status ${answer.status}`] : []),
    ...['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].filter((name) => !/^\d+$/.test(answer.headers.get(name) ?? '')).map((name) => `no ${name}`),
    ...(answer.headers.get('sightline-request-id') ? [] : ['no request id']),
  ];
  const metricsByCampaign = async (models = 'first_touch,last_touch,linear') => {
    const window = `from=${encodeURIComponent(new Date(Date.now() - 3 * 60 * MINUTE).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 60 * MINUTE).toISOString())}`;
    const r = await api(`/v1/metrics?metrics=visitors,conversions,revenue&group_by=campaign&attribution=${models}&${window}`);
    expect(r.status).toBe(200);
    return Object.fromEntries((r.body['data'] as Json[]).map((row) => [String(row['campaign']), row]));
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-fuzz-'));
    // No proxy is configured: X-Forwarded-For from a client means nothing.
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off' }, SETTINGS_SECTIONS);
    const modules = await Promise.all(MODULE_REGISTRY.map((entry) => entry.create(config, TARGET_NAMES)));
    proc = await startModules({ config, modules, logger: createLogger({ level: 'silent' }) });
    base = `http://127.0.0.1:${proc.publicPort}`;
    adminBase = `http://127.0.0.1:${proc.adminPort}`;
    const ws = await admin('POST', '/workspaces', { name: 'Fuzz', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
    workspaceId = String(ws['id']);
    const site = await admin('POST', `/workspaces/${workspaceId}/websites`, { domain: DOMAIN });
    websiteId = String(site['id']);
    publicId = String(site['public_id']);
    secret = String(site['identify_secret']);
    key = String((await admin('POST', '/keys', { workspace_id: workspaceId }))['key']);
    narrowKey = String((await admin('POST', '/keys', { workspace_id: workspaceId, scopes: ['conversions:read', 'conversions:write', 'deals:read', 'events:write'] }))['key']);
    document = (await api('/v1/openapi.json', { as: null })).body;
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  describe('finding 1: attribution hijack through /collect', () => {
    it('replayed as an outsider, leaves the customer\'s credit where it was in /metrics', async () => {
      const customer = `customer-${randomUUID()}`;
      const purchaseAt = Date.now() - 60 * MINUTE;
      // The customer's real history: a newsletter visit two hours ago (a replay, so its time holds), then a purchase.
      expect((await collect({ site: publicId, aid: customer, events: [hit({ ts: Date.now() - 120 * MINUTE, url: `https://${DOMAIN}/?utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale` })] }, { authorization: `Bearer ${key}`, 'x-forwarded-for': '81.2.69.160' })).status).toBe(202);
      expect((await postEvents([{ event_type: 'purchase', email: 'claire@example.com', anonymous_id: customer, revenue: 500, currency: 'EUR', occurred_at: new Date(purchaseAt).toISOString() }])).body['accepted']).toBe(1);
      const before = await waitFor('the purchase credited to spring-sale', async () => {
        const rows = await metricsByCampaign();
        return (rows['spring-sale']?.['last_touch'] as Json | undefined)?.['revenue'] === 500 ? rows : undefined;
      });

      // The attack: forged Origin, a ts backdated before the purchase, a gclid pageview, identify() of
      // the customer's email without a signature, a hit for another host, and a spoofed address.
      const attacker = `attacker-${randomUUID()}`;
      const attack = await collect(
        {
          site: publicId, aid: attacker, events: [
            hit({ ts: purchaseAt - 30 * MINUTE, url: `https://${DOMAIN}/?utm_source=google&utm_medium=cpc&utm_campaign=hijack&gclid=evil` }),
            hit({ ts: purchaseAt - 29 * MINUTE, type: 'identify', email: 'claire@example.com' }),
            hit({ ts: purchaseAt - 28 * MINUTE, url: 'https://attacker.example/?utm_campaign=elsewhere' }),
          ],
        },
        { 'x-forwarded-for': '81.2.69.160' },
      );
      expect(attack.status).toBe(202);
      expect(attack.body).toEqual({ accepted: 1, rejected: 2 });
      // Wait until the attacker's own visit is counted, so the answer below is after the attack was processed.
      const after = await waitFor('the attacker\'s visit processed', async () => {
        const rows = await metricsByCampaign();
        return rows['hijack']?.['visitors'] === 1 ? rows : undefined;
      });
      for (const model of ['first_touch', 'last_touch', 'linear']) {
        expect({ model, credit: after['spring-sale']?.[model] }).toEqual({ model, credit: before['spring-sale']?.[model] });
        expect({ model, credit: after['hijack']?.[model] }).toEqual({ model, credit: { conversions: 0, revenue: 0 } });
      }
      // The spoofed address did not set the attacker's country.
      const byCountry = await api(`/v1/metrics?metrics=visitors&group_by=country&filter=campaign:eq:hijack&from=${encodeURIComponent(new Date(Date.now() - 3 * 60 * MINUTE).toISOString())}`);
      expect((byCountry.body['data'] as Json[]).map((row) => row['country'])).not.toContain('GB');
    }, 60_000);

    it('the same sequence vouched for by an API key (a replay) does move the credit: the check above can fail', async () => {
      const customer = `customer-${randomUUID()}`;
      const purchaseAt = Date.now() - 60 * MINUTE;
      const replay = { authorization: `Bearer ${key}` };
      expect((await collect({ site: publicId, aid: customer, events: [hit({ ts: Date.now() - 120 * MINUTE, url: `https://${DOMAIN}/?utm_source=newsletter&utm_medium=email&utm_campaign=autumn-sale` })] }, replay)).body).toEqual({ accepted: 1, rejected: 0 });
      expect((await postEvents([{ event_type: 'purchase', email: 'dora@example.com', anonymous_id: customer, revenue: 700, currency: 'EUR', occurred_at: new Date(purchaseAt).toISOString() }])).body).toMatchObject({ accepted: 1 });
      let seen: unknown;
      await waitFor('the purchase credited to autumn-sale', async () => {
        seen = await metricsByCampaign();
        return ((seen as Record<string, Json>)['autumn-sale']?.['last_touch'] as Json | undefined)?.['revenue'] === 700 ? true : undefined;
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(seen)}`);
      });
      const insider = `insider-${randomUUID()}`;
      await collect({
        site: publicId, aid: insider, events: [
          hit({ ts: purchaseAt - 30 * MINUTE, url: `https://${DOMAIN}/?utm_source=google&utm_medium=cpc&utm_campaign=vouched&gclid=ok` }),
          hit({ ts: purchaseAt - 29 * MINUTE, type: 'identify', email: 'dora@example.com' }),
        ],
      }, replay);
      await waitFor('the vouched touch credited', async () => ((await metricsByCampaign())['vouched']?.['last_touch'] as Json | undefined)?.['revenue'] === 700 ? true : undefined);
    }, 60_000);

    it('answers CORS only for the website\'s origins (finding 7)', async () => {
      const evil = await collect({ site: publicId, aid: 'x', events: [hit()] }, { origin: 'https://evil.example' });
      expect(evil.status).toBe(403);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      const own = await collect({ site: publicId, aid: 'x', events: [hit()] });
      expect(own.headers.get('access-control-allow-origin')).toBe(`https://${DOMAIN}`);
    });

    it('a browser identify() signed by the website\'s backend links the browser, and only forward in time', async () => {
      const email = 'erin@example.com';
      const aid = `erin-${randomUUID()}`;
      const answer = await collect({ site: publicId, aid, events: [hit({ type: 'identify', email, sig: identifySignature({ secret, site: publicId, visitor: aid, email, expiresAt: new Date(Date.now() + 600_000) }) })] });
      expect(answer.body).toEqual({ accepted: 1, rejected: 0 });
    });
  });

  describe('finding 3: accepted, then lost', () => {
    it('rejects by index what the stores would refuse, accepts the rest, and stores every accepted event', async () => {
      const good = (i: number) => ({ event_type: 'custom', event_name: `ok-${i}`, anonymous_id: `lost-${i}` });
      const events = [
        ...Array.from({ length: 6 }, (_, i) => good(i)),
        { event_type: 'custom', anonymous_id: 'nul\u0000byte' },
        { event_type: 'custom', anonymous_id: 'surrogate', properties: { note: 'half \ud83d pair' } },
        { event_type: 'custom', anonymous_id: 'year-zero', occurred_at: '0000-01-01T00:00:00Z' },
        { event_type: 'custom', anonymous_id: 'key', properties: { ['k\u0000']: 1 } },
      ];
      const before = (await stored()).events;
      const answer = await postEvents(events);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ accepted: 6, rejected: 4 });
      expect((answer.body['errors'] as { index: number }[]).map((e) => e.index)).toEqual([6, 7, 8, 9]);
      await waitFor('the six accepted events stored', async () => ((await stored()).events >= before + 6 ? true : undefined));
      // The tracker's NUL in url or aid: refused, not accepted and lost.
      expect((await collect({ site: publicId, aid: 'tracker-nul', events: [hit({ url: `https://${DOMAIN}/a\u0000b` }), hit()] })).body).toEqual({ accepted: 1, rejected: 1 });
      expect((await collect({ site: publicId, aid: 'nul\u0000aid', events: [hit()] })).body).toEqual({ accepted: 0, rejected: 1 });
    });
  });

  describe('finding 4: one event fails the batch', () => {
    it('a leap second and an empty event_type in a 200-event batch are two rejected events, not a 500', async () => {
      const events: Json[] = Array.from({ length: 200 }, (_, i) => ({ event_type: 'custom', event_name: `bulk-${i}`, anonymous_id: `bulk-${i}` }));
      events[17] = { event_type: 'custom', anonymous_id: 'leap', occurred_at: '2016-12-31T23:59:60Z' };
      events[123] = { event_type: '', anonymous_id: 'empty' };
      const answer = await postEvents(events);
      expectSound(answer);
      expect(answer.body).toMatchObject({ accepted: 198, rejected: 2 });
      expect((answer.body['errors'] as { index: number }[]).map((e) => e.index)).toEqual([17, 123]);
    });
  });

  describe('finding 5: bodies parsed before the key is checked', () => {
    it('a bad key is refused on its headers, before a 2 MB body is sent', async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(proc.publicPort as number, '127.0.0.1', () => socket.write(`POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sl_bad_bad\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('utf8');
          if (text.includes('"instance"')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer).toMatch(/ratelimit-remaining: \d+/i);
    });
  });

  describe('finding 6: personal data without pii:read', () => {
    it('GET /deals masks contact ids that are emails; another key\'s Idempotency-Key never replays its answer', async () => {
      const imported = await admin('POST', `/crm/imports/deals?website=${DOMAIN}`, {
        website_id: websiteId, workspace_id: workspaceId, rows: [{ crm_id: 'deal-1', name: 'Big deal', created_at: '2025-01-01T00:00:00Z', contact_crm_ids: ['claire@example.com', '51'] }],
      });
      expect(imported['accepted']).toBe(1);
      const deals = await api('/v1/deals', { as: narrowKey });
      expectSound(deals);
      expect(JSON.stringify(deals.body)).not.toContain('claire@example.com');
      expect([...((deals.body['data'] as Json[])[0]?.['crm_contact_ids'] as string[])].sort()).toEqual(['51', 'c***@example.com']);

      const purchase = await postEvents([{ event_type: 'purchase', email: 'frank@example.com', anonymous_id: 'frank', revenue: 10 }]);
      expect(purchase.body['accepted']).toBe(1);
      const contact = await waitFor('the contact', async () => {
        const rows = (await api('/v1/contacts?email=frank@example.com')).body['data'] as Json[] | undefined;
        return rows?.[0];
      });
      const patch = (as: string, body: unknown) => api(`/v1/contacts/${String(contact['id'])}`, { method: 'PATCH', as, headers: { 'content-type': 'application/json', 'idempotency-key': 'shared-idempotency-key' }, body: JSON.stringify(body) });
      expect((await patch(key, { notes: 'from the full key' })).body['data']).toMatchObject({ email: 'frank@example.com' });
      const other = await patch(narrowKey, { notes: 'from the full key' });
      expectSound(other);
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      expect(JSON.stringify(other.body)).not.toContain('frank@example.com');
    }, 60_000);
  });

  describe('finding 2: unbounded memory and no rate limit on /collect', () => {
    it('4,000 junk site ids leave the lookup caches empty; a flood from one address is cut at its budget', async () => {
      const cacheEntries = async () => Number(/^sightline_gateway_collect_site_cache_entries (\d+)$/m.exec(await (await fetch(`${adminBase}/metrics`, { headers: { authorization: `Bearer ${proc.settings.metricsToken}` } })).text())?.[1]);
      const entriesBefore = await cacheEntries();
      // From one address: refused by the address budget (1,200 hits a minute) or as unknown ids, never cached.
      const statuses = new Map<number, number>();
      for (let batch = 0; batch < 40; batch += 1) {
        const answers = await Promise.all(Array.from({ length: 100 }, () => collect({ site: randomBytes(15_000).toString('hex'), aid: 'junk', events: [hit()] })));
        for (const a of answers) {
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          expectSound(a);
        }
      }
      // Every answer a refusal; the address budget (1,200 hits a minute, tested exactly in the gateway's
      // hardening test) cuts the flood even if its minute rolls over once during it.
      expect((statuses.get(404) ?? 0) + (statuses.get(429) ?? 0)).toBe(4_000);
      expect(statuses.get(429)).toBeGreaterThanOrEqual(4_000 - 2 * 1_200);
      expect(await cacheEntries()).toBe(entriesBefore);
    }, 60_000);
  });

  describe('finding 8: RateLimit headers on every answer', () => {
    it('an unknown path, a 415 and a 400 from body parsing carry them, as problem documents', async () => {
      expectSound(await api('/v1/no-such-thing'));
      expectSound(await api('/v1/no-such-thing', { as: null }));
      expectSound(await api('/v1/events', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,b' }));
      expectSound(await api('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"events": [' }));
    });
  });

  describe('finding 7: 500s from malformed input, and the refusals the issue listed', () => {
    it('each input the issue reported answers its problem, or is taken as documented', async () => {
      const contact = ((await api('/v1/contacts?email=frank@example.com')).body['data'] as Json[])[0] as Json;
      const id = String(contact['id']);
      const expectKind = (answer: Answer, status: number, kind: string) => {
        expectSound(answer);
        expect({ status: answer.status, type: answer.body['type'] }).toEqual({ status, type: expect.stringMatching(new RegExp(`/${kind}$`)) });
      };
      const patch = (body: string, headers: Record<string, string> = {}) => api(`/v1/contacts/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body });
      for (const path of ['/v1/contacts/%zz', '/v1/contacts/%zz/journey', '/v1/deals/%zz/journey', '/v1/companies/%zz/journey']) expectKind(await api(path), 400, 'invalid-request');
      expectKind(await api(`/v1/contacts/urn:uuid:${id}`), 404, 'not-found');
      expectKind(await api('/v1/metrics?metrics=visitors&filter=country:eq:D%00E'), 400, 'unknown-filter-operator');
      expectKind(await api('/v1/contacts?status=a%00b'), 400, 'invalid-request');
      for (const date of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) expectKind(await api(`/v1/metrics?metrics=visitors&from=${date}`), 400, 'invalid-window');
      expectKind(await api('/v1/metrics?metrics=visitors&to=1970-01-01T00:00:00Z'), 400, 'invalid-window');
      expectKind(await api('/v1/metrics?metrics=visitors&period=1970-01-01..1970-01-02'), 400, 'invalid-window');
      expectKind(await api('/v1/contacts?period=March%200000'), 400, 'invalid-window');
      expectKind(await patch('{"notes":"plain"}', { 'content-encoding': 'gzip' }), 400, 'invalid-request');
      expectKind(await patch('{"notes":"a\\u0000b"}'), 400, 'invalid-request');
      expectKind(await patch('{"notes":"\\ud800"}'), 400, 'invalid-request');
      expectKind(await patch(`{"notes":${'['.repeat(5_000)}${']'.repeat(5_000)}}`), 400, 'invalid-request');
      expectKind(await patch('{"notes":12345}'), 400, 'invalid-request');
      // Documented as clearing the field: taken, and cleared.
      expect((await patch('{"sales_value":1}')).status).toBe(200);
      const cleared = await patch('{"sales_value":null,"notes":null}');
      expect(cleared.status).toBe(200);
      expect(cleared.body['data']).toMatchObject({ sales_value: null, notes: null });
      // limit=1e9 is clamped like other large integers.
      const clamped = await api('/v1/contacts?limit=1e9');
      expect(clamped.status).toBe(200);
      expect(clamped.body['meta']).toMatchObject({ has_more: false });
      // 431 is a problem document (the runner answers it before any route).
      const big = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}`, cookie: 'a'.repeat(20_000) } });
      expect(big.status).toBe(431);
      expect(big.headers.get('content-type')).toContain('application/problem+json');
      expect(big.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
      // CORS (finding 7 too) is checked with finding 1, before the address budget is spent by finding 2.
    }, 60_000);
  });

  describe('issue 24: deep structures', () => {
    it('an event nested 5,000 levels inside properties is one rejected event, named by its index and the limit; the batch goes on', async () => {
      const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
      const answer = await api('/v1/events', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: `{"events":[{"event_type":"custom","anonymous_id":"deep-1","properties":${deep}},{"event_type":"custom","anonymous_id":"flat-1","properties":{"a":{"b":1}}}]}`,
      });
      expectSound(answer);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, detail: expect.stringMatching(/nested deeper than 16 levels/) }] });
      // Anywhere else, the request is refused whole, naming the limit.
      const funnel = await api('/v1/funnels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"steps":[],"filters":${deep}}` });
      expectSound(funnel);
      expect({ status: funnel.status, remediation: funnel.body['remediation'] }).toEqual({ status: 400, remediation: expect.stringContaining('32 levels') });
    });
  });

  describe('finding 7 and the corpus', () => {
    /** Longest any one request of the corpus may take: longer is a hang, failed by name. */
    const HANG_MS = 5_000;

    it('at least 5,000 hostile requests over every operation of the served document: no 5xx (501/503 only where documented), no hang, problem documents, RateLimit headers', async () => {
      const started = Date.now();
      const corpus = buildCorpus(document, DOMAIN);
      const operations = operationsOf(document).map((op) => `${op.method} ${op.path}`);
      expect(operations.length).toBeGreaterThanOrEqual(38);
      // Every operation gets at least the eight cases every operation has (plausible, keys, method, parameters).
      expect(operations.filter((op) => corpus.filter((c) => c.name.startsWith(`${op} · `)).length < 8)).toEqual([]);
      expect(corpus.length).toBeGreaterThanOrEqual(5_000);
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      const slowest: [number, string][] = [];
      const run = async (c: FuzzCase) => {
        const headers = { ...c.headers };
        const chosen = headers['x-fuzz-key'];
        delete headers['x-fuzz-key'];
        if (chosen === undefined) headers['authorization'] = `Bearer ${key}`;
        else if (chosen === 'bearer-lower') headers['authorization'] = `bearer ${key}`;
        else if (chosen !== 'none') headers['authorization'] = chosen;
        const sent = Date.now();
        try {
          // Its own deadline, so a hang fails this request by name rather than the whole test by timeout.
          // A HEAD answer has no body for the contract check to read: its headers are checked below.
          const send = c.method === 'HEAD' ? uncheckedFetch() : fetch;
          const answer = await read(await send(`${base}${c.url}`, { method: c.method, headers, signal: AbortSignal.timeout(HANG_MS), ...(c.body !== undefined ? { body: c.body } : {}) }));
          const took = Date.now() - sent;
          slowest.push([took, c.name]);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const found = c.method === 'HEAD' ? headDefects(answer) : defects(answer, c.documented);
          if (took > HANG_MS) found.push(`took ${took} ms (a hang: over ${HANG_MS} ms)`);
          if (found.length > 0) failures.push(`${c.name}: ${found.join(', ')} (${answer.text.slice(0, 200)})`);
        } catch (error) {
          const took = Date.now() - sent;
          failures.push(`${c.name}: ${took >= HANG_MS ? `no answer within ${HANG_MS} ms (a hang)` : 'no answer'} (${String(error).slice(0, 300)})`);
        }
      };
      const queue = [...corpus];
      // Modest concurrency: the machine has two cores, shared with the stack under test.
      await Promise.all(Array.from({ length: 6 }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) await run(c);
      }));
      expect(failures).toEqual([]);
      expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true);
      // The run's size and time, for the record (SIGHTLINE_FUZZ_REPORT=1).
      if (process.env['SIGHTLINE_FUZZ_REPORT']) {
        const top = slowest.sort((a, b) => b[0] - a[0]).slice(0, 5).map(([ms, name]) => `${ms} ms ${name}`);
        process.stderr.write(`fuzz: ${corpus.length} requests over ${operations.length} operations in ${Math.round((Date.now() - started) / 1000)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}; slowest:\n  ${top.join('\n  ')}\n`);
      }
    }, 170_000);

    it('no accepted event is dead-lettered: every one is stored, and no service holds a dead letter', async () => {
      await waitFor(`all ${acceptedEvents} accepted events stored`, async () => ((await stored()).events >= acceptedEvents ? true : undefined), 30_000);
      expect((await stored()).events).toBe(acceptedEvents);
      await new Promise((r) => setTimeout(r, RETRY_HORIZON_MS));
      const dead: string[] = [];
      for (const service of new Set(['gateway', ...TARGET_NAMES])) {
        for (const letter of await proc.bus.takeDeadLetters(service, 1_000)) dead.push(`${service}: ${letter.envelope?.type ?? 'unparsable'} after ${letter.attempts} attempts: ${letter.reason.slice(0, 300)}`);
      }
      expect(dead).toEqual([]);
    }, 60_000);
  });
});
