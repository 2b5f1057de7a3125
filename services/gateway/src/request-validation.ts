// Validates query, path and body against the operation's OpenAPI schemas (ajv), so every bad value
// gets the right problem kind, with `allowed` where the set of values is fixed. Limits above their
// maximum are clamped rather than refused, as the spec asks.
//
// Nothing is coerced behind the client's back: a body is checked exactly as sent (`{"notes": 12345}`
// is refused, `null` clears a nullable field), and a query string becomes a number or a boolean only
// where the document types the parameter so. Every string and date passes the kit's input rules
// (no NUL, no lone surrogate, dates the stores hold) before any schema is applied, and a body's
// depth and size are checked before anything recursive touches it (body-bounds.ts).
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { addInputFormats, DATE_TIME_RULE, findInputFault, MAX_JSON_DEPTH, MAX_JSON_VALUES, ProblemError, isProblemKind, type InputFault, type ProblemKind } from '@sightline/kit';
import { boundBody } from './body-bounds';
import type { OpenApiDocumentShape, OpenApiParameter, Operation } from './operations';

/** Body properties whose items the owning service checks one by one (partial success). */
export const PER_ITEM_EXTENSION = 'x-sightline-checked-per-item';

type RawQuery = Record<string, string | string[] | undefined>;

export interface ValidatedRequest {
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  body: unknown;
}

interface CompiledOperation {
  query: ValidateFunction;
  path: ValidateFunction;
  /** Header parameters the document declares (Idempotency-Key), by their documented name. */
  header: ValidateFunction;
  headerParams: Map<string, OpenApiParameter>;
  body: ValidateFunction | null;
  queryParams: Map<string, OpenApiParameter>;
  /** Top-level body properties left to the service's per-item check. */
  perItem: Set<string>;
  /** Whether the body schema fills in defaults (ajv then writes into the body, so it is copied first). */
  bodyHasDefaults: boolean;
}

const DOCUMENT_ID = 'sightline-openapi';

export class RequestValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<Operation, CompiledOperation>();
  private readonly components: Record<string, unknown>;

  constructor(document: OpenApiDocumentShape) {
    this.components = (document.components as Record<string, unknown> | undefined) ?? {};
    // verbose: errors carry their schema, so a refused field can be named with the accepted ones.
    this.ajv = new Ajv2020({ strict: false, coerceTypes: false, useDefaults: true, allErrors: false, verbose: true });
    addFormats(this.ajv);
    addInputFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: rebaseRefs(document.components ?? {}) });
  }

  /** `header(name)`: a request header's value (case-insensitive), for the header parameters the document declares. */
  validate(op: Operation, rawQuery: RawQuery, rawParams: Record<string, string>, rawBody: unknown, header: (name: string) => string | undefined = () => undefined): ValidatedRequest {
    const compiled = this.compile(op);
    refuseFault(findInputFault(rawQuery), 'query parameter', compiled.queryParams);
    refuseFault(findInputFault(rawParams), 'path parameter', new Map(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p])));
    const query = this.prepareQuery(compiled, rawQuery);
    if (!compiled.query(query)) throw problemFor(compiled.query.errors ?? [], compiled.queryParams, 'query parameter');
    const params: Record<string, unknown> = { ...rawParams };
    const pathParams = new Map(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p]));
    if (!compiled.path(params)) throw problemFor(compiled.path.errors ?? [], pathParams, 'path parameter');
    // Declared headers are held to their schema too (an Idempotency-Key over its maxLength would
    // otherwise reach the service, whose request schema refuses it: a 500).
    const headers = Object.fromEntries([...compiled.headerParams.keys()].flatMap((name) => {
      const value = header(name);
      return value === undefined ? [] : [[name, value]];
    }));
    if (!compiled.header(headers)) throw problemFor(compiled.header.errors ?? [], compiled.headerParams, 'header');
    let body = rawBody;
    if (body !== undefined) {
      // Depth and size first: ajv, structuredClone and the bus's JSON.stringify below all recurse.
      refuseFault(boundBody(body, compiled.perItem), 'body', new Map());
      refuseFault(findInputFault(body, { skip: (path) => compiled.perItem.has(path) }), 'body', new Map());
    }
    if (compiled.body) {
      if (body === undefined) {
        if (op.bodyRequired) {
          throw new ProblemError('invalid-request', {
            detail: 'This operation needs a JSON request body.',
            remediation: 'Send a JSON object with Content-Type: application/json.',
          });
        }
      } else {
        // Defaults are written into the body; copy it first so the caller's value stays as sent.
        // Without defaults (POST /events: 200 events) the copy would be pure cost.
        if (compiled.bodyHasDefaults) body = structuredClone(body);
        if (!compiled.body(body)) throw problemFor(compiled.body.errors ?? [], new Map(), 'body');
      }
    }
    return { query, params, body };
  }

  private compile(op: Operation): CompiledOperation {
    const existing = this.compiled.get(op);
    if (existing) return existing;
    const queryParams = new Map(op.parameters.filter((p) => p.in === 'query').map((p) => [p.name, p]));
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const headerParams = new Map(op.parameters.filter((p) => p.in === 'header').map((p) => [p.name, p]));
    const objectSchema = (params: OpenApiParameter[], closed: boolean) => ({
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, rebaseRefs(p.schema ?? {})])),
      required: params.filter((p) => p.required).map((p) => p.name),
      additionalProperties: !closed,
    });
    const compiled: CompiledOperation = {
      query: this.ajv.compile(objectSchema([...queryParams.values()], true)),
      path: this.ajv.compile(objectSchema(pathParams, false)),
      header: this.ajv.compile(objectSchema([...headerParams.values()], false)),
      headerParams,
      body: op.bodySchema ? this.ajv.compile(rebaseRefs(op.bodySchema) as object) : null,
      queryParams,
      perItem: new Set(
        Object.entries((op.bodySchema?.['properties'] as Record<string, Record<string, unknown>> | undefined) ?? {})
          .filter(([, schema]) => schema[PER_ITEM_EXTENSION] === true)
          .map(([name]) => name),
      ),
      bodyHasDefaults: op.bodySchema ? hasDefaults(op.bodySchema, this.components) : false,
    };
    this.compiled.set(op, compiled);
    return compiled;
  }

  /** Turns raw query strings into the shapes the schemas describe (lists split, limits clamped). */
  private prepareQuery(compiled: CompiledOperation, raw: RawQuery): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined) continue;
      const param = compiled.queryParams.get(name);
      if (!param) {
        throw new ProblemError('invalid-request', {
          detail: `Unknown query parameter "${name}".`,
          remediation: 'Remove the parameter or correct its name; see GET /v1/openapi.json for this endpoint.',
          allowed: [...compiled.queryParams.keys()],
        });
      }
      const schema = param.schema ?? {};
      const values = Array.isArray(value) ? value : [value];
      if (schema['type'] === 'array') {
        // style=form, explode=false lists are comma-separated; repeatable ones (explode) are not split.
        const split = param.explode === false || (param.style === 'form' && param.explode !== true);
        const items = split ? values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '') : values;
        const itemSchema = (schema['items'] as Record<string, unknown> | undefined) ?? {};
        out[name] = items.map((item) => scalarOf(item, itemSchema, false));
        continue;
      }
      if (values.length > 1) {
        throw new ProblemError('invalid-request', {
          detail: `Query parameter "${name}" was given ${values.length} times; it takes one value.`,
          remediation: `Send "${name}" once.`,
        });
      }
      out[name] = scalarOf(values[0] as string, schema, param['x-sightline-clamp'] === true);
    }
    return out;
  }
}

// JSON's number syntax: what a client may write for a number in a query string (`50`, `1e9`, `-2.5`).
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A query string as the document types it: numbers and booleans only where the schema says so
 * (otherwise the text stays, and the schema refuses it naming the type); a number above the
 * maximum of a clamped parameter becomes the maximum, however it is written (`5000`, `1e9`).
 */
function scalarOf(text: string, schema: Record<string, unknown>, clamp: boolean): unknown {
  const type = schema['type'];
  if ((type === 'integer' || type === 'number') && NUMBER.test(text)) {
    const value = Number(text);
    const maximum = schema['maximum'];
    if (clamp && typeof maximum === 'number' && value > maximum) return maximum;
    return value;
  }
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

const FAULT_REMEDIATION: Record<InputFault['rule'], string> = {
  text: 'Send text as valid UTF-8 without NUL characters or lone UTF-16 surrogates.',
  depth: `Nest JSON objects and arrays at most ${MAX_JSON_DEPTH} levels deep (the limit for every body).`,
  size: `Send at most ${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values (objects, arrays, strings, numbers, booleans and nulls) in one body; split the request into smaller ones.`,
};

/** A string the stores cannot hold, nesting too deep or a body too large: refused naming where it was. */
function refuseFault(fault: InputFault | null, where: string, params: Map<string, OpenApiParameter>): void {
  if (!fault) return;
  const field = fault.path.split('.')[0] ?? '';
  const kindName = params.get(field)?.['x-sightline-error-kind'];
  // A path id that cannot exist is simply not found; other parameters keep their own kind.
  const kind: ProblemKind = kindName && isProblemKind(kindName) ? kindName : 'invalid-request';
  // Property names are the client's: a long one is not echoed whole.
  const path = fault.path.length > 200 ? `${fault.path.slice(0, 200)}…` : fault.path;
  const label = where === 'body' ? (path === '' ? 'The body' : `Body field "${path}"`) : path === '' ? capitalise(where) : `${capitalise(where)} "${path}"`;
  throw new ProblemError(kind, { detail: `${label} ${fault.reason}.`, remediation: FAULT_REMEDIATION[fault.rule] });
}

function problemFor(errors: ErrorObject[], params: Map<string, OpenApiParameter>, where: string): ProblemError {
  const error = errors[0];
  if (!error) return new ProblemError('invalid-request', { detail: `Invalid ${where}.`, remediation: 'Correct the request and retry.' });
  const segments = error.instancePath.split('/').filter(Boolean);
  let field = segments[0] ?? '';
  if (error.keyword === 'required') field = String(error.params['missingProperty']);
  if (error.keyword === 'additionalProperties') field = [...segments, String(error.params['additionalProperty'])].join('.');
  const param = params.get(field);
  const allowed = allowedValues(error);
  const kindName = param?.['x-sightline-error-kind'];
  const valueError = error.keyword !== 'required' && error.keyword !== 'additionalProperties';
  const kind: ProblemKind = valueError && kindName && isProblemKind(kindName) ? kindName : 'invalid-request';
  const label = where === 'body' ? `Body field "${segments.join('.') || field}"` : `${capitalise(where)} "${field}"`;
  const detail =
    error.keyword === 'required'
      ? `${capitalise(where)} "${field}" is required.`
      : error.keyword === 'additionalProperties'
        ? `${capitalise(where)} field "${field}" is not accepted.`
        : `${label} ${error.message ?? 'is invalid'}${valueNote(error)}.`;
  const remediation = allowed
    ? `Use one of the allowed values for "${field}".`
    : error.keyword === 'required'
      ? `Add "${field}" to the request.`
      : `Correct "${field}" as the OpenAPI document (GET /v1/openapi.json) describes and retry.`;
  return new ProblemError(kind, { detail, remediation, ...(allowed ? { allowed } : {}) });
}

function allowedValues(error: ErrorObject): string[] | undefined {
  if (error.keyword === 'enum') return (error.params['allowedValues'] as unknown[]).map(String);
  if (error.keyword === 'const') return [String(error.params['allowedValue'])];
  // A switch (only_paid, exclude_direct) has exactly two values: name them as an enum would.
  if (error.keyword === 'type' && error.params['type'] === 'boolean') return ['true', 'false'];
  if (error.keyword === 'additionalProperties') {
    // An unknown field: list the fields that are accepted (for PATCH bodies, the writable ones).
    const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
    return properties ? Object.keys(properties) : undefined;
  }
  return undefined;
}

function valueNote(error: ErrorObject): string {
  if (error.keyword === 'format' && error.params['format'] === 'date-time') return `: ${DATE_TIME_RULE}${gotNote(error.data)}`;
  if (error.keyword === 'type') return ` (got ${error.data === null ? 'null' : Array.isArray(error.data) ? 'an array' : typeof error.data === 'object' ? 'an object' : `${typeof error.data} ${JSON.stringify(error.data)}`})`;
  return gotNote(error.data);
}

function gotNote(data: unknown): string {
  if (data === undefined || typeof data === 'object') return '';
  const text = JSON.stringify(data);
  return ` (got ${text.length > 80 ? `${text.slice(0, 80)}…` : text})`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Whether a schema, following its `#/components/...` refs, declares a `default` anywhere. */
export function hasDefaults(schema: unknown, components: Record<string, unknown>, seen = new Set<string>()): boolean {
  if (Array.isArray(schema)) return schema.some((item) => hasDefaults(item, components, seen));
  if (!schema || typeof schema !== 'object') return false;
  const node = schema as Record<string, unknown>;
  if ('default' in node) return true;
  const ref = node['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/components/') && !seen.has(ref)) {
    seen.add(ref);
    const target = ref.slice('#/components/'.length).split('/').reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], components);
    if (hasDefaults(target, components, seen)) return true;
  }
  return Object.entries(node).some(([key, value]) => key !== '$ref' && hasDefaults(value, components, seen));
}

/** Points local `#/components/...` refs at the registered document so ajv can resolve them. */
function rebaseRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebaseRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOCUMENT_ID}${v}` : rebaseRefs(v)]),
    );
  }
  return value;
}
