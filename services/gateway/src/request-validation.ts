// Validates query, path and body against the operation's OpenAPI schemas (ajv), so every bad value
// gets the right problem kind, with `allowed` where the set of values is fixed. Limits above their
// maximum are clamped rather than refused, as the spec asks.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ProblemError, isProblemKind, type ProblemKind } from '@sightline/kit';
import type { OpenApiDocumentShape, OpenApiParameter, Operation } from './operations';

type RawQuery = Record<string, string | string[] | undefined>;

export interface ValidatedRequest {
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  body: unknown;
}

interface CompiledOperation {
  query: ValidateFunction;
  path: ValidateFunction;
  body: ValidateFunction | null;
  queryParams: Map<string, OpenApiParameter>;
}

const DOCUMENT_ID = 'sightline-openapi';

export class RequestValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<Operation, CompiledOperation>();

  constructor(document: OpenApiDocumentShape) {
    // verbose: errors carry their schema, so a refused field can be named with the accepted ones.
    this.ajv = new Ajv2020({ strict: false, coerceTypes: true, useDefaults: true, allErrors: false, verbose: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: rebaseRefs(document.components ?? {}) });
  }

  validate(op: Operation, rawQuery: RawQuery, rawParams: Record<string, string>, rawBody: unknown): ValidatedRequest {
    const compiled = this.compile(op);
    const query = this.prepareQuery(compiled, rawQuery);
    if (!compiled.query(query)) throw problemFor(compiled.query.errors ?? [], compiled.queryParams, 'query parameter');
    const params: Record<string, unknown> = { ...rawParams };
    if (!compiled.path(params)) throw problemFor(compiled.path.errors ?? [], new Map(), 'path parameter');
    let body = rawBody;
    if (compiled.body) {
      if (body === undefined) {
        if (op.bodyRequired) {
          throw new ProblemError('invalid-request', {
            detail: 'This operation needs a JSON request body.',
            remediation: 'Send a JSON object with Content-Type: application/json.',
          });
        }
      } else {
        body = structuredClone(body);
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
    const objectSchema = (params: OpenApiParameter[], closed: boolean) => ({
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, rebaseRefs(p.schema ?? {})])),
      required: params.filter((p) => p.required).map((p) => p.name),
      additionalProperties: !closed,
    });
    const compiled: CompiledOperation = {
      query: this.ajv.compile(objectSchema([...queryParams.values()], true)),
      path: this.ajv.compile(objectSchema(pathParams, false)),
      body: op.bodySchema ? this.ajv.compile(rebaseRefs(op.bodySchema) as object) : null,
      queryParams,
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
        out[name] = split ? values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '') : values;
        continue;
      }
      if (values.length > 1) {
        throw new ProblemError('invalid-request', {
          detail: `Query parameter "${name}" was given ${values.length} times; it takes one value.`,
          remediation: `Send "${name}" once.`,
        });
      }
      let single: unknown = values[0];
      const maximum = schema['maximum'];
      if (param['x-sightline-clamp'] && typeof maximum === 'number' && /^-?\d+$/.test(String(single)) && Number(single) > maximum) {
        single = String(maximum);
      }
      out[name] = single;
    }
    return out;
  }
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
  if (error.keyword === 'additionalProperties') {
    // An unknown field: list the fields that are accepted (for PATCH bodies, the writable ones).
    const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
    return properties ? Object.keys(properties) : undefined;
  }
  return undefined;
}

function valueNote(error: ErrorObject): string {
  return error.data === undefined || typeof error.data === 'object' ? '' : ` (got ${JSON.stringify(error.data)})`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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
