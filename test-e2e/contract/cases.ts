// Requests generated from the served OpenAPI document: for every operation, valid requests (the
// required parameters; then every default sent explicitly) and invalid ones (no key, a key without
// the scope, an unknown website, an unknown parameter, a value outside each fixed set, a wrong type
// for each number and boolean, an id that cannot exist, malformed bodies). Nothing is listed by
// hand, so an operation added to the document is covered the day it appears.
import { sample } from 'openapi-sampler';
import type { DocumentOperation, MatchedOperation, ServedDocument } from './checker';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Json;
  explode?: boolean;
  'x-sightline-error-kind'?: string;
}

export type KeyChoice = 'full' | 'none' | 'lacking-scope';

export interface ContractCase {
  /** `<operationId>: <what>`, unique. */
  name: string;
  operationId: string;
  method: string;
  /** Path and query string, e.g. `/v1/metrics?metrics=visitors`. */
  url: string;
  key: KeyChoice;
  /** Scope the `lacking-scope` key must not hold. */
  scope?: string;
  headers: Record<string, string>;
  body?: string;
  /** Valid requests: any declared answer but an unexpected failure. Invalid ones: this status and kind. */
  expect: { valid: true } | { valid: false; status: number; kind?: string; allowed?: boolean };
}

export interface CaseFixtures {
  /** Domain of a website the full key reaches. */
  website: string;
  /** Real ids by path prefix (`/v1/contacts`): a valid request then reaches an existing resource. */
  ids: Record<string, string>;
}

const BOGUS = 'zz_not_a_value';

export function generateCases(document: ServedDocument, operations: MatchedOperation[], fixtures: CaseFixtures): ContractCase[] {
  const cases: ContractCase[] = [];
  for (const { method, path, operation } of operations) {
    const parameters = (operation.parameters ?? []).map((p) => resolve(document, p) as unknown as Parameter);
    const query = parameters.filter((p) => p.in === 'query');
    const scope = operation['x-sightline-scope'] as string | null;
    const takesWebsite = operation['x-sightline-website'] === true;
    const id = idFor(path, fixtures);
    const body = bodyFor(document, operation);
    const base = (values: Record<string, string[]>, idValue = id) => urlOf(path, idValue, values);
    const required: Record<string, string[]> = {};
    for (const p of query.filter((q) => q.required)) required[p.name] = valueFor(p);
    if (takesWebsite) required['website'] = [fixtures.website];
    const add = (what: string, partial: Omit<ContractCase, 'name' | 'operationId' | 'method' | 'headers' | 'key'> & { key?: KeyChoice; headers?: Record<string, string> }) => {
      const headers: Record<string, string> = { ...(partial.body !== undefined ? { 'content-type': 'application/json' } : {}), ...partial.headers };
      cases.push({ name: `${operation.operationId}: ${what}`, operationId: operation.operationId, method, key: partial.key ?? 'full', ...partial, headers });
    };

    // Valid: the required parameters only, then with every default sent as written in the document.
    add('required parameters', { url: base(required), ...(body !== undefined ? { body } : {}), expect: { valid: true } });
    const defaults: Record<string, string[]> = { ...required };
    for (const p of query) if (p.schema['default'] !== undefined && defaults[p.name] === undefined) defaults[p.name] = serialize(p, p.schema['default']);
    if (Object.keys(defaults).length > Object.keys(required).length) {
      add('every default explicit', { url: base(defaults), ...(body !== undefined ? { body } : {}), expect: { valid: true } });
    }

    // Refused before validation: the key, its scope, the website.
    add('no key', { url: base(required), key: 'none', ...(body !== undefined ? { body } : {}), expect: { valid: false, status: 401, kind: 'unauthorized' } });
    if (scope) add(`key without ${scope}`, { url: base(required), key: 'lacking-scope', scope, ...(body !== undefined ? { body } : {}), expect: { valid: false, status: 403, kind: 'insufficient-scope' } });
    if (takesWebsite) {
      add('website the key does not reach', { url: base({ ...required, website: ['nowhere.invalid'] }), ...(body !== undefined ? { body } : {}), expect: { valid: false, status: 404, kind: 'website-not-found' } });
    }

    // Refused by validation.
    add('unknown query parameter', { url: base({ ...required, zz_unknown: ['1'] }), ...(body !== undefined ? { body } : {}), expect: { valid: false, status: 400, kind: 'invalid-request', allowed: true } });
    for (const p of query) {
      if (p.name === 'website') continue;
      const kind = p['x-sightline-error-kind'];
      const status = kind === 'not-found' || kind === 'website-not-found' ? 404 : 400;
      if (enumOf(p.schema)) {
        add(`${p.name} outside its set`, { url: base({ ...required, [p.name]: [BOGUS] }), ...(body !== undefined ? { body } : {}), expect: { valid: false, status, ...(kind ? { kind } : {}), allowed: true } });
      }
      const type = itemType(p.schema);
      if (type === 'integer' || type === 'number' || type === 'boolean') {
        add(`${p.name} of the wrong type`, { url: base({ ...required, [p.name]: ['not-a-number-or-boolean'] }), ...(body !== undefined ? { body } : {}), expect: { valid: false, status } });
      }
    }
    const idParam = parameters.find((p) => p.in === 'path');
    if (idParam) {
      add('id that cannot exist', { url: base(required, 'no-such-id'), ...(body !== undefined ? { body } : {}), expect: { valid: false, status: 404, kind: 'not-found' } });
    }
    if (operation.requestBody) {
      const url = base(required);
      add('body that is not JSON', { url, body: '{"events": [', expect: { valid: false, status: 400, kind: 'invalid-request' } });
      add('body that is an array', { url, body: '[]', expect: { valid: false, status: 400, kind: 'invalid-request' } });
      add('body of the wrong media type', { url, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, expect: { valid: false, status: 415, kind: 'unsupported-media-type', allowed: true } });
      const wrong = wrongTypedBody(document, operation);
      if (wrong) add(`body field ${wrong.field} of the wrong type`, { url, body: wrong.body, expect: { valid: false, status: 400, kind: 'invalid-request' } });
      if (operation.requestBody.required) add('no body', { url, expect: { valid: false, status: 400, kind: 'invalid-request' } });
    }
  }
  return cases;
}

function urlOf(path: string, id: string, query: Record<string, string[]>): string {
  const search = new URLSearchParams();
  for (const [name, values] of Object.entries(query)) for (const value of values) search.append(name, value);
  const text = search.toString();
  return path.replace(/\{[^}]+\}/g, encodeURIComponent(id)) + (text ? `?${text}` : '');
}

function idFor(path: string, fixtures: CaseFixtures): string {
  for (const [prefix, id] of Object.entries(fixtures.ids)) if (path.startsWith(`${prefix}/`)) return id;
  return '00000000-0000-4000-8000-000000000000';
}

/** A value the parameter's schema accepts: its example, its default, its first allowed value. */
function valueFor(p: Parameter): string[] {
  const examples = p.schema['examples'];
  if (Array.isArray(examples) && examples.length > 0) return serialize(p, examples[0]);
  if (p.schema['default'] !== undefined) return serialize(p, p.schema['default']);
  const values = enumOf(p.schema);
  if (values) return serialize(p, p.schema['type'] === 'array' ? [values[0]] : values[0]);
  const type = itemType(p.schema);
  if (type === 'integer' || type === 'number') return serialize(p, p.schema['minimum'] ?? 1);
  if (type === 'boolean') return ['true'];
  if (p.schema['format'] === 'date-time') return ['2026-01-01T00:00:00Z'];
  return ['x'];
}

function serialize(p: Parameter, value: unknown): string[] {
  if (!Array.isArray(value)) return [String(value)];
  return p.explode === false ? [value.map(String).join(',')] : value.map(String);
}

function enumOf(schema: Json): unknown[] | null {
  const target = schema['type'] === 'array' ? (schema['items'] as Json | undefined) ?? {} : schema;
  return Array.isArray(target['enum']) ? (target['enum'] as unknown[]) : null;
}

function itemType(schema: Json): unknown {
  return schema['type'] === 'array' ? ((schema['items'] as Json | undefined) ?? {})['type'] : schema['type'];
}

/** A body the schema accepts as far as a sample can tell (the schema's `examples` first). */
function bodyFor(document: ServedDocument, operation: DocumentOperation): string | undefined {
  const schema = operation.requestBody?.content['application/json']?.schema;
  if (!schema) return undefined;
  return JSON.stringify(sample(schema as never, { skipReadOnly: true, skipNonRequired: false }, document as never));
}

/** The valid body with its first typed field given a value of another type. */
function wrongTypedBody(document: ServedDocument, operation: DocumentOperation): { field: string; body: string } | null {
  const schema = resolve(document, operation.requestBody?.content['application/json']?.schema ?? {});
  const properties = (schema['properties'] as Record<string, Json> | undefined) ?? {};
  for (const [field, raw] of Object.entries(properties)) {
    const property = resolve(document, raw);
    const type = property['type'] ?? (Array.isArray(property['oneOf']) ? (resolve(document, (property['oneOf'] as Json[])[0] ?? {})['type']) : undefined);
    const wrong = type === 'string' ? 12345 : type === 'number' || type === 'integer' || type === 'boolean' || type === 'array' || type === 'object' ? 'text' : undefined;
    if (wrong === undefined) continue;
    const body = JSON.parse(bodyFor(document, operation) ?? '{}') as Json;
    return { field, body: JSON.stringify({ ...body, [field]: wrong }) };
  }
  return null;
}

function resolve(document: ServedDocument, value: unknown): Json {
  let node = value as Json;
  for (let depth = 0; depth < 10 && typeof node?.['$ref'] === 'string'; depth++) {
    let target: unknown = document;
    for (const part of (node['$ref'] as string).slice(2).split('/')) target = (target as Json | undefined)?.[part];
    node = (target ?? {}) as Json;
  }
  return node ?? {};
}
