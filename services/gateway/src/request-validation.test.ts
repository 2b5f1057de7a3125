// Whether a body schema fills in defaults decides whether the gateway copies a body before checking
// it (ajv writes defaults into what it checks): the copy is kept where it matters and skipped where it
// would only cost (POST /events carries 200 events).
import type { ProblemError } from '@sightline/kit';
import { openApiDocument } from '@sightline/proto-schemas';
import { operationsOf, type OpenApiDocumentShape, type Operation } from './operations';
import { hasDefaults, RequestValidator } from './request-validation';

const components = { schemas: { Leaf: { type: 'object', properties: { n: { type: 'integer', default: 1 } } }, Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } } } };

describe('hasDefaults', () => {
  it('finds a default inline, behind a reference, and not where there is none (cycles included)', () => {
    expect(hasDefaults({ type: 'object', properties: { a: { type: 'string', default: 'x' } } }, components)).toBe(true);
    expect(hasDefaults({ type: 'array', items: { $ref: '#/components/schemas/Leaf' } }, components)).toBe(true);
    expect(hasDefaults({ $ref: '#/components/schemas/Loop' }, components)).toBe(false);
    expect(hasDefaults({ type: 'object', properties: { a: { type: 'string' } } }, components)).toBe(false);
  });

  it('knows the document: POST /events and PATCH bodies have no default, POST /funnels has some', () => {
    const bodyOf = (path: string) => (openApiDocument.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>>)[path]?.['post']?.requestBody.content['application/json']?.schema;
    const parts = openApiDocument.components as Record<string, unknown>;
    expect(hasDefaults(bodyOf('/v1/events'), parts)).toBe(false);
    expect(hasDefaults(bodyOf('/v1/funnels'), parts)).toBe(true);
    const patchOf = (path: string) => (openApiDocument.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>>)[path]?.['patch']?.requestBody.content['application/json']?.schema;
    expect(hasDefaults(patchOf('/v1/funnels/{id}'), parts)).toBe(false);
  });
});

describe('RequestValidator on the served document', () => {
  const document = openApiDocument as unknown as OpenApiDocumentShape;
  const validator = new RequestValidator(document);
  const operation = (method: string, path: string) => operationsOf(document).find((op) => op.method === method && op.documentPath === path) as Operation;
  const id = '5b0c2a3e-9d4f-4e8a-9a51-3c2f7d6e1a0b';
  const deep = (depth: number) => {
    const root: Record<string, unknown> = {};
    let at = root;
    for (let i = 1; i < depth; i += 1) at = (at['a'] = {}) as Record<string, unknown>;
    return root;
  };
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error as ProblemError;
    }
    throw new Error('not refused');
  };

  it('fills in no default on a PATCH body: a field not sent is not changed', () => {
    for (const [path, body] of [['/v1/funnels/{id}', { name: 'Renamed' }], ['/v1/automations/{id}', { status: 'paused' }], ['/v1/contacts/{id}', { notes: 'x' }]] as const) {
      expect(validator.validate(operation('PATCH', path), {}, { id }, body).body).toEqual(body);
    }
    // A create still gets the defaults it documents.
    const steps = [{ name: 'A', conditions: { path_matches: '/a' } }, { name: 'B', conditions: { path_matches: '/b' } }];
    expect(validator.validate(operation('POST', '/v1/funnels'), {}, {}, { steps }).body).toMatchObject({ scope: 'visitor', step_order: 'sequential', window_days: 30 });
  });

  it('refuses a body too deep or too large before a schema or a copy recurses through it, naming the limit', () => {
    const tooDeep = refusal(() => validator.validate(operation('POST', '/v1/funnels'), {}, {}, { steps: [], filters: deep(50_000) }));
    expect(tooDeep).toMatchObject({ kind: 'invalid-request', remediation: expect.stringContaining('32 levels') });
    const tooLarge = refusal(() => validator.validate(operation('PATCH', '/v1/contacts/{id}'), {}, { id }, { notes: new Array(200_000).fill(0) }));
    expect(tooLarge).toMatchObject({ kind: 'invalid-request', remediation: expect.stringContaining('100,000') });
  });

  it('holds a declared header to its schema: an Idempotency-Key over 255 characters is refused, not passed on', () => {
    const header = (value: string) => (name: string) => (name.toLowerCase() === 'idempotency-key' ? value : undefined);
    for (const [method, path] of [['POST', '/v1/events'], ['POST', '/v1/funnels'], ['PATCH', '/v1/contacts/{id}']] as const) {
      const op = operation(method, path);
      const steps = [{ name: 'A', conditions: { path_matches: '/a' } }, { name: 'B', conditions: { path_matches: '/b' } }];
      const body = method === 'POST' && path === '/v1/events' ? { events: [{}] } : method === 'POST' ? { steps } : {};
      expect(refusal(() => validator.validate(op, {}, { id }, body, header('k'.repeat(256))))).toMatchObject({ kind: 'invalid-request', message: expect.stringContaining('Header "Idempotency-Key"') });
      expect(() => validator.validate(op, {}, { id }, body, header('k'.repeat(255)))).not.toThrow();
    }
  });

  it('passes an event too deep to carry on to ingest cut, so it is rejected by its index and the batch goes on', () => {
    const body = { events: [{ event_type: 'custom', properties: deep(50_000) }, { event_type: 'custom' }] };
    const validated = validator.validate(operation('POST', '/v1/events'), {}, {}, body).body;
    // What the bus will carry: JSON.stringify recurses, and no longer overflows.
    expect(JSON.stringify(validated).length).toBeLessThan(1_000);
  });
});
