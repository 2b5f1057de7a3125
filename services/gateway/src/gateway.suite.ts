// The gateway's behaviour, written once and run on both driver profiles: embedded (PGlite,
// in-memory KV, in-process bus) by gateway.test.ts and distributed (Postgres, Redis, RabbitMQ) by
// gateway.int.test.ts. Two stand-in services answer over the real bus so routing, RPC errors and
// deadlines are exercised end to end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createLogger,
  defineStandIn,
  loadConfig,
  ProblemError,
  startModules,
  type RunningProcess,
  type RunnableModule,
} from '@sightline/kit';
import { openApiDocument, schemaDocument } from '@sightline/proto-schemas';
import { createGatewayModule } from './index';
import { operationsOf, type OpenApiDocumentShape } from './operations';

export interface DriverProfile {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

const operations = operationsOf(openApiDocument as unknown as OpenApiDocumentShape);
const opId = (method: string, path: string): string => {
  const op = operations.find((o) => o.method === method && o.documentPath === path);
  if (!op) throw new Error(`no operation ${method} ${path} in the OpenAPI document`);
  if (!op.rpcMethod) throw new Error(`${method} ${path} has no RPC method`);
  return op.rpcMethod;
};

/** Stand-in analytics service: echoes what the gateway sent, refuses one combination, and can be slow. */
function standInAttribution(): RunnableModule {
  return defineStandIn({
    name: 'attribution',
    needs: {},
    async create() {
      return {
        rpc: {
          [opId('GET', '/v1/metrics')]: async (raw: unknown) => {
            const request = raw as { query: Record<string, unknown> };
            const groupBy = (request.query['group_by'] as string[] | undefined) ?? [];
            if (groupBy.includes('platform') && groupBy.length > 1) {
              throw new ProblemError('unsupported-combination', {
                detail: 'platform cannot be combined with other dimensions.',
                remediation: 'Group by platform alone.',
                allowed: ['platform'],
              });
            }
            const hold = Number(request.query['limit'] ?? 0) === 7 ? 400 : 0;
            if (hold) await new Promise((r) => setTimeout(r, hold));
            return { status: 200, body: { echo: raw } };
          },
        },
      };
    },
  });
}

/** Stand-in service that never answers in time, to show the RPC deadline becomes a 503. */
function standInSlowFunnels(): RunnableModule {
  return defineStandIn({
    name: 'funnels',
    needs: {},
    async create() {
      return {
        rpc: {
          [opId('GET', '/v1/funnels')]: async () => {
            await new Promise((r) => setTimeout(r, 2500));
            return { status: 200, body: { data: [] } };
          },
        },
      };
    },
  });
}

export function describeGateway(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`gateway (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let dataDir: string;
    let base: string;
    let admin: string;
    let adminToken: string;
    let fullKey: string;
    let fullKeyId: string;
    let narrowKey: string;
    let singleSiteKey: string;
    let freeKey: string;

    const api = async (path: string, init: RequestInit & { key?: string | null } = {}) => {
      const { key = fullKey, headers, ...rest } = init;
      const response = await fetch(`${base}${path}`, {
        ...rest,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string> | undefined) },
      });
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = { text };
      }
      return { status: response.status, headers: response.headers, body };
    };
    const adminCall = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${admin}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    beforeAll(async () => {
      profile = await makeProfile();
      dataDir = mkdtempSync(join(tmpdir(), 'sightline-gw-'));
      const config = loadConfig({
        SIGHTLINE_PORT: '0',
        SIGHTLINE_ADMIN_PORT: '0',
        SIGHTLINE_DATA_DIR: dataDir,
        SIGHTLINE_RPC_TIMEOUT_MS: '1000',
        SIGHTLINE_LOG_LEVEL: 'silent',
        SIGHTLINE_SHUTDOWN_TIMEOUT_MS: '20000',
        ...profile.env,
      });
      proc = await startModules({
        config,
        logger: createLogger({ level: 'silent' }),
        modules: [
          createGatewayModule({ demo: false }),
          standInAttribution(),
          standInSlowFunnels(),
        ],
      });
      base = `http://127.0.0.1:${proc.publicPort}`;
      admin = `http://127.0.0.1:${proc.adminPort}`;
      adminToken = proc.settings.adminToken;

      const ws = await adminCall('POST', '/workspaces', { name: 'Acme', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'business' });
      const wsId = String(ws.body['id']);
      await adminCall('POST', `/workspaces/${wsId}/websites`, { domain: 'acme.test' });
      await adminCall('POST', `/workspaces/${wsId}/websites`, { domain: 'shop.acme.test', timezone: 'America/New_York', currency: 'USD' });
      const full = await adminCall('POST', '/keys', { workspace_id: wsId, name: 'full' });
      fullKey = String(full.body['key']);
      fullKeyId = String(full.body['key_id']);
      narrowKey = String((await adminCall('POST', '/keys', { workspace_id: wsId, scopes: ['analytics:read'] })).body['key']);
      singleSiteKey = String((await adminCall('POST', '/keys', { workspace_id: wsId, websites: ['acme.test'] })).body['key']);
      const freeWs = await adminCall('POST', '/workspaces', { name: 'Tiny', plan: 'free' });
      await adminCall('POST', `/workspaces/${String(freeWs.body['id'])}/websites`, { domain: 'tiny.test' });
      freeKey = String((await adminCall('POST', '/keys', { workspace_id: String(freeWs.body['id']) })).body['key']);
    }, 120_000);

    afterAll(async () => {
      await proc?.stop();
      await profile?.cleanup();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    describe('keys and identity', () => {
      it('GET /v1/me reports scopes, plan and reachable websites; /me is the same path', async () => {
        const v1 = await api('/v1/me');
        expect(v1.status).toBe(200);
        const me = v1.body['data'] as { key: { id: string; scopes: string[] }; plan: { name: string; requests_per_minute: number }; websites: { domain: string }[] };
        expect(me.key.id).toBe(fullKeyId);
        expect(me.plan).toMatchObject({ name: 'business', requests_per_minute: 600 });
        expect(me.key.scopes).toEqual(expect.arrayContaining(['pii:read', 'events:write', 'conversions:read']));
        expect(me.websites.map((w) => w.domain)).toEqual(['acme.test', 'shop.acme.test']);
        const bare = await api('/me');
        expect(bare.status).toBe(200);
        expect((bare.body['data'] as { key: { id: string } }).key.id).toBe(fullKeyId);
      });

      it('GET /v1/websites gives each website its timezone and currency', async () => {
        const { status, body } = await api('/v1/websites');
        expect(status).toBe(200);
        expect(body['data']).toEqual([
          expect.objectContaining({ domain: 'acme.test', timezone: 'Europe/Berlin', currency: 'EUR' }),
          expect.objectContaining({ domain: 'shop.acme.test', timezone: 'America/New_York', currency: 'USD' }),
        ]);
      });

      it('GET /v1/schema serves the registry that query compilation reads', async () => {
        const { status, body } = await api('/v1/schema');
        expect(status).toBe(200);
        expect(body).toEqual(JSON.parse(JSON.stringify(schemaDocument())));
      });

      it('a missing or malformed key is a 401 problem carrying the request id', async () => {
        for (const key of [null, 'not-a-key', 'sl_aaaaaaaaaaaa_' + '0'.repeat(48)]) {
          const { status, headers, body } = await api('/v1/me', { key });
          expect(status).toBe(401);
          expect(headers.get('content-type')).toContain('application/problem+json');
          expect(String(body['type'])).toMatch(/\/unauthorized$/);
          expect(body['instance']).toBe(headers.get('sightline-request-id'));
          expect(typeof body['remediation']).toBe('string');
        }
      });

      it('a key in the query string is refused with a problem saying to use the header', async () => {
        const { status, body } = await api(`/v1/me?api_key=${fullKey}`, { key: null });
        expect(status).toBe(400);
        expect(String(body['type'])).toMatch(/\/invalid-request$/);
        expect(String(body['remediation'])).toMatch(/Authorization: Bearer/);
      });

      it('a revoked key stops working', async () => {
        const workspace = ((await api('/v1/me')).body['data'] as { workspace: { id: string } }).workspace;
        const created = await adminCall('POST', '/keys', { workspace_id: workspace.id });
        const key = String(created.body['key']);
        expect((await api('/v1/me', { key })).status).toBe(200);
        expect((await adminCall('DELETE', `/keys/${String(created.body['key_id'])}`)).status).toBe(200);
        expect((await api('/v1/me', { key })).status).toBe(401);
      });

      it('the admin API requires the admin token', async () => {
        const response = await fetch(`${admin}/admin/workspaces`);
        expect(response.status).toBe(401);
      });
    });

    describe('scopes and websites', () => {
      it('a key without the required scope gets 403 insufficient-scope naming it', async () => {
        const { status, body } = await api('/v1/funnels?website=acme.test', { key: narrowKey });
        expect(status).toBe(403);
        expect(String(body['type'])).toMatch(/\/insufficient-scope$/);
        expect(body['missing_scope']).toBe('funnels:read');
        expect(String(body['detail'])).toContain('funnels:read');
      });

      it('website is required when a key reaches several, listing the allowed domains', async () => {
        const { status, body } = await api('/v1/metrics?metrics=visitors');
        expect(status).toBe(400);
        expect(body['allowed']).toEqual(['acme.test', 'shop.acme.test']);
      });

      it('an unknown or unreachable website is 404 website-not-found', async () => {
        for (const [key, site] of [[fullKey, 'nope.test'], [singleSiteKey, 'shop.acme.test']] as const) {
          const { status, body } = await api(`/v1/metrics?metrics=visitors&website=${site}`, { key });
          expect(status).toBe(404);
          expect(String(body['type'])).toMatch(/\/website-not-found$/);
        }
      });

      it('a single-website key needs no website parameter, and the service gets the website context', async () => {
        const { status, body } = await api('/v1/metrics?metrics=visitors', { key: singleSiteKey });
        expect(status).toBe(200);
        const echo = body['echo'] as { website: { domain: string; timezone: string; currency: string }; key: { id: string } };
        expect(echo.website).toEqual(expect.objectContaining({ domain: 'acme.test', timezone: 'Europe/Berlin', currency: 'EUR' }));
      });
    });

    describe('validation against the OpenAPI document', () => {
      it('an unknown metric is unknown-metric with the allowed metrics', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test&metrics=visitors,bogus');
        expect(status).toBe(400);
        expect(String(body['type'])).toMatch(/\/unknown-metric$/);
        expect(body['allowed']).toEqual(expect.arrayContaining(['visitors', 'revenue', 'ltv_cac']));
      });

      it('an unknown attribution model, and a switch that is not true or false, are invalid-request with allowed', async () => {
        const model = await api('/v1/metrics?website=acme.test&metrics=conversions&group_by=channel&attribution=markovian');
        expect(model.status).toBe(400);
        expect(model.body['allowed']).toEqual(expect.arrayContaining(['last_non_direct', 'markov', 'shapley']));
        const flag = await api('/v1/metrics?website=acme.test&metrics=conversions&group_by=channel&exclude_direct=yes');
        expect(flag.status).toBe(400);
        expect(String(flag.body['type'])).toMatch(/\/invalid-request$/);
        expect(flag.body['allowed']).toEqual(['true', 'false']);
      });

      it('an unknown dimension is unknown-dimension with the allowed dimensions', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test&metrics=visitors&group_by=channel,colour');
        expect(status).toBe(400);
        expect(String(body['type'])).toMatch(/\/unknown-dimension$/);
        expect(body['allowed']).toEqual(expect.arrayContaining(['channel', 'campaign', 'cohort']));
      });

      it('a missing required parameter is invalid-request', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test');
        expect(status).toBe(400);
        expect(String(body['type'])).toMatch(/\/invalid-request$/);
        expect(String(body['detail'])).toContain('metrics');
      });

      it('an unknown query parameter is refused with the accepted ones listed', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test&metrics=visitors&metric=visitors');
        expect(status).toBe(400);
        expect(body['allowed']).toEqual(expect.arrayContaining(['metrics', 'group_by', 'limit']));
      });

      it('a limit above its maximum is clamped, not refused', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test&metrics=visitors&limit=5000');
        expect(status).toBe(200);
        expect((body['echo'] as { query: { limit: number } }).query.limit).toBe(1000);
      });

      it('lists arrive split and typed; repeated filters stay a list', async () => {
        const { body } = await api('/v1/metrics?website=acme.test&metrics=visitors,revenue&group_by=channel&filter=country:eq:DE&filter=device_type:ne:mobile');
        const query = (body['echo'] as { query: Record<string, unknown> }).query;
        expect(query['metrics']).toEqual(['visitors', 'revenue']);
        expect(query['filter']).toEqual(['country:eq:DE', 'device_type:ne:mobile']);
      });

      it('a malformed JSON body is invalid-request, a non-JSON body is unsupported-media-type', async () => {
        const broken = await api('/v1/funnels?website=acme.test', { method: 'POST', body: '{"name":', headers: { 'content-type': 'application/json' } });
        expect(broken.status).toBe(400);
        expect(String(broken.body['type'])).toMatch(/\/invalid-request$/);
        const form = await api('/v1/funnels?website=acme.test', { method: 'POST', body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
        expect(form.status).toBe(415);
      });
    });

    describe('routing', () => {
      it('a problem thrown by the owning service arrives with its kind and allowed values', async () => {
        const { status, body } = await api('/v1/metrics?website=acme.test&metrics=spend&group_by=platform,channel');
        expect(status).toBe(400);
        expect(String(body['type'])).toMatch(/\/unsupported-combination$/);
        expect(body['allowed']).toEqual(['platform']);
      });

      it('an RPC past its deadline is a 503 problem, never a hang', async () => {
        const started = Date.now();
        const { status, headers, body } = await api('/v1/funnels?website=acme.test');
        expect(status).toBe(503);
        expect(String(body['type'])).toMatch(/\/service-unavailable$/);
        expect(headers.get('retry-after')).toBeTruthy();
        expect(Date.now() - started).toBeLessThan(10_000);
      });

      it('endpoints of services with no running instance answer 503 at once; legacy aliases answer identically', async () => {
        const current = await api('/v1/contacts?website=acme.test');
        const legacy = await api('/v1/conversions?website=acme.test');
        expect(current.status).toBe(503);
        expect(String(current.body['type'])).toMatch(/\/service-unavailable$/);
        expect(String(current.body['detail'])).toMatch(/no instance of the contacts service is running/i);
        expect(legacy.status).toBe(503);
        expect(legacy.body['type']).toBe(current.body['type']);
        expect((await api('/accounts?website=acme.test')).status).toBe(503);
      });

      it('unknown paths are 404 problems and wrong methods 405 with the allowed methods', async () => {
        const missing = await api('/v1/nothing-here');
        expect(missing.status).toBe(404);
        expect(String(missing.body['type'])).toMatch(/\/not-found$/);
        const wrong = await api('/v1/me', { method: 'DELETE' });
        expect(wrong.status).toBe(405);
        expect(wrong.body['allowed']).toEqual(['GET']);
      });

      it('every operation of the spec answers: a real answer or a problem, never a 500 or a hang', async () => {
        for (const op of operations) {
          const path = op.documentPath.replace(/\{id\}/g, '00000000-0000-4000-8000-000000000000').replace(/\{[^}]+\}/g, 'x');
          const url = `${path}${op.takesWebsite ? '?website=acme.test' : ''}`;
          const hasBody = ['POST', 'PATCH', 'PUT'].includes(op.method);
          const { status, headers } = await api(url, {
            method: op.method,
            ...(hasBody ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
          });
          expect({ op: `${op.method} ${op.documentPath}`, ok: status < 500 || [501, 503].includes(status) }).toEqual({ op: `${op.method} ${op.documentPath}`, ok: true });
          expect(headers.get('sightline-request-id')).toBeTruthy();
        }
      }, 60_000);

      it('serves the OpenAPI document and rendered docs without a key', async () => {
        const doc = await api('/v1/openapi.json', { key: null });
        expect(doc.status).toBe(200);
        expect(doc.body['openapi']).toMatch(/^3\.1/);
        const page = await fetch(`${base}/docs/`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('swagger-ui-bundle.js');
      });
    });

    describe('limits', () => {
      it('every response carries RateLimit headers', async () => {
        const { headers } = await api('/v1/me');
        expect(Number(headers.get('ratelimit-limit'))).toBe(600);
        expect(Number(headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
        expect(Number(headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      });

      it('counts exactly under concurrency: 70 parallel requests on the free plan give 60 answers and 10 rate-limit-exceeded', async () => {
        const results = await Promise.all(Array.from({ length: 70 }, () => api('/v1/me', { key: freeKey })));
        const ok = results.filter((r) => r.status === 200);
        const limited = results.filter((r) => r.status === 429);
        expect(ok).toHaveLength(60);
        expect(limited).toHaveLength(10);
        for (const r of limited) {
          expect(String(r.body['type'])).toMatch(/\/rate-limit-exceeded$/);
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(r.headers.get('ratelimit-remaining')).toBe('0');
        }
      });

      it('allows at most 4 concurrent analytics queries per workspace', async () => {
        // limit=7 makes the stand-in service hold each query for 400 ms.
        const results = await Promise.all(Array.from({ length: 6 }, () => api('/v1/metrics?website=acme.test&metrics=visitors&limit=7')));
        expect(results.filter((r) => r.status === 200)).toHaveLength(4);
        const refused = results.filter((r) => r.status === 429);
        expect(refused).toHaveLength(2);
        for (const r of refused) {
          expect(String(r.body['type'])).toMatch(/\/too-many-concurrent$/);
          expect(r.headers.get('retry-after')).toBeTruthy();
        }
        // Slots are released afterwards.
        expect((await api('/v1/metrics?website=acme.test&metrics=visitors')).status).toBe(200);
      });
    });

    describe('admin port', () => {
      it('serves /healthz, /readyz and Prometheus metrics; /metrics on the public port is the API', async () => {
        expect((await fetch(`${admin}/healthz`)).status).toBe(200);
        expect((await fetch(`${admin}/readyz`)).status).toBe(200);
        const text = await (await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${proc.settings.metricsToken}` } })).text();
        expect(text).toContain('sightline_gateway_http_requests_total');
        const publicMetrics = await api('/metrics', { key: null });
        expect(publicMetrics.status).toBe(401);
      });

      it('answers /metrics only with the metrics token or the admin token, and exports the event-loop delay histogram', async () => {
        const scrape = (token?: string) => fetch(`${admin}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
        for (const refused of [await scrape(), await scrape('wrong'), await scrape(`${proc.settings.metricsToken}x`)]) {
          expect(refused.status).toBe(401);
          expect(refused.headers.get('content-type')).toContain('application/problem+json');
          expect(await refused.text()).not.toContain('sightline_');
        }
        expect((await scrape(adminToken)).status).toBe(200);
        // The metrics token opens /metrics and nothing else on the admin port.
        expect((await fetch(`${admin}/admin/workspaces`, { headers: { authorization: `Bearer ${proc.settings.metricsToken}` } })).status).toBe(401);
        const text = await (await scrape(proc.settings.metricsToken)).text();
        expect(text).toMatch(/^sightline_event_loop_delay_seconds_bucket\{le="0.05"\} \d+$/m);
        expect(Number(/^sightline_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      });
    });
  });
}
