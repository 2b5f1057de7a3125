// Whether a body schema fills in defaults decides whether the gateway copies a body before checking
// it (ajv writes defaults into what it checks): the copy is kept where it matters and skipped where it
// would only cost (POST /events carries 200 events).
import { openApiDocument } from '@sightline/proto-schemas';
import { hasDefaults } from './request-validation';

const components = { schemas: { Leaf: { type: 'object', properties: { n: { type: 'integer', default: 1 } } }, Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } } } };

describe('hasDefaults', () => {
  it('finds a default inline, behind a reference, and not where there is none (cycles included)', () => {
    expect(hasDefaults({ type: 'object', properties: { a: { type: 'string', default: 'x' } } }, components)).toBe(true);
    expect(hasDefaults({ type: 'array', items: { $ref: '#/components/schemas/Leaf' } }, components)).toBe(true);
    expect(hasDefaults({ $ref: '#/components/schemas/Loop' }, components)).toBe(false);
    expect(hasDefaults({ type: 'object', properties: { a: { type: 'string' } } }, components)).toBe(false);
  });

  it('knows the document: POST /events has no default, POST /funnels has some', () => {
    const bodyOf = (path: string) => (openApiDocument.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>>)[path]?.['post']?.requestBody.content['application/json']?.schema;
    const parts = openApiDocument.components as Record<string, unknown>;
    expect(hasDefaults(bodyOf('/v1/events'), parts)).toBe(false);
    expect(hasDefaults(bodyOf('/v1/funnels'), parts)).toBe(true);
  });
});
