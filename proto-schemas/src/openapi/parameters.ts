// Reusable parameters. Enums come from the registry so the document cannot drift from the compiler.
import { FILTER_DIMENSIONS } from '../registry/dimensions';
import { DEFAULT_PERIOD, JOURNEY_DAYS, MAX_WINDOW_DAYS, type PagingLimit } from '../registry/limits';
import { OPERATOR_NAMES } from '../registry/operators';
import type { ParameterObject, Schema } from './types';

export const websiteParam: ParameterObject = {
  name: 'website',
  in: 'query',
  description: 'Domain of the website to read or write. Required only when the key reaches more than one website; a domain the key does not reach is 404 website-not-found.',
  schema: { type: 'string', minLength: 1, maxLength: 253, examples: ['example.com'] },
  'x-sightline-error-kind': 'website-not-found',
};

export const periodParam: ParameterObject = {
  name: 'period',
  in: 'query',
  description: `Plain-language window resolved in the workspace timezone: a relative phrase (\`last 7 days\`, \`this month\`), a named day (\`yesterday\`), a month and year (\`March 2025\`), or a range \`<start_date>..<end_date>\`. Ignored when from/to are given. Default when neither is given: \`${DEFAULT_PERIOD}\`. A window longer than ${MAX_WINDOW_DAYS} days is 400 window-too-large.`,
  schema: { type: 'string', minLength: 1, maxLength: 100 },
  'x-sightline-error-kind': 'invalid-window',
};

export const fromParam: ParameterObject = {
  name: 'from',
  in: 'query',
  description: 'Explicit window start (date-time). With `to` it overrides period; from after to is 400 invalid-window.',
  schema: { type: 'string', format: 'date-time' },
  'x-sightline-error-kind': 'invalid-window',
};

export const toParam: ParameterObject = {
  name: 'to',
  in: 'query',
  description: 'Explicit window end (date-time), exclusive.',
  schema: { type: 'string', format: 'date-time' },
  'x-sightline-error-kind': 'invalid-window',
};

export const windowParams: ParameterObject[] = [periodParam, fromParam, toParam];

export function idParam(what: string, uuid: boolean): ParameterObject {
  return {
    name: 'id',
    in: 'path',
    required: true,
    description: `Id of the ${what}. An id that does not exist (or belongs to another website) is 404 not-found.`,
    schema: uuid ? { type: 'string', format: 'uuid' } : { type: 'string', minLength: 1 },
    'x-sightline-error-kind': 'not-found',
  };
}

export function limitParam(limit: PagingLimit, what: string): ParameterObject {
  return {
    name: 'limit',
    in: 'query',
    description: `Maximum ${what} to return. Default ${limit.default}, maximum ${limit.maximum}; a larger value is not an error, the maximum is returned.`,
    schema: { type: 'integer', minimum: 1, maximum: limit.maximum, default: limit.default },
    'x-sightline-clamp': limit.clamp,
    'x-sightline-error-kind': 'invalid-request',
  };
}

export const cursorParam: ParameterObject = {
  name: 'cursor',
  in: 'query',
  description: 'Opaque cursor from the previous page\'s `next_cursor`, passed back verbatim. A cursor that fails verification (edited, built by hand, or from another query) is 400 invalid-request whose remediation says to restart paging without a cursor.',
  schema: { type: 'string', minLength: 1, maxLength: 2048 },
  'x-sightline-error-kind': 'invalid-request',
};

export const totalCountParam: ParameterObject = {
  name: 'total_count',
  in: 'query',
  description: 'When true, meta.total_count carries the number of matching rows (respecting filters); otherwise it is null.',
  schema: { type: 'boolean', default: false },
  'x-sightline-error-kind': 'invalid-request',
};

export function journeyDaysParam(): ParameterObject {
  return {
    name: 'days',
    in: 'query',
    description: `How many days the timeline reaches back: from the contact's conversion for a contact journey (sessions after the conversion are not part of how it was earned), from now for company and deal journeys. Default ${JOURNEY_DAYS.default}; above ${JOURNEY_DAYS.maximum} is 400 window-too-large (decided: the journey scan is bounded like every analytics window).`,
    schema: { type: 'integer', minimum: JOURNEY_DAYS.minimum, maximum: JOURNEY_DAYS.maximum, default: JOURNEY_DAYS.default },
    'x-sightline-error-kind': 'window-too-large',
  };
}

/** A comma-separated list parameter: `a,b,c`. */
export function listParam(
  name: string,
  description: string,
  items: Schema,
  extra: { required?: boolean; minItems?: number; maxItems?: number; default?: readonly string[]; errorKind: string },
): ParameterObject {
  const schema: Schema = { type: 'array', items, uniqueItems: true };
  if (extra.minItems !== undefined) schema['minItems'] = extra.minItems;
  if (extra.maxItems !== undefined) schema['maxItems'] = extra.maxItems;
  if (extra.default !== undefined) schema['default'] = [...extra.default];
  const param: ParameterObject = {
    name, in: 'query', description, schema, style: 'form', explode: false,
    'x-sightline-error-kind': extra.errorKind,
  };
  if (extra.required) param.required = true;
  return param;
}

/** exclude_direct, on every request that takes attribution models (GET /metrics, funnel breakdowns). */
export const excludeDirectParam: ParameterObject = {
  name: 'exclude_direct', in: 'query',
  description: 'true: Direct touches are dropped from each journey before any model weighs it (the rest renormalised); a journey of only Direct touches stays Direct. Applies to every model, markov and shapley included; meta.definitions.exclude_direct says so when true. Only true or false (400 invalid-request with `allowed` otherwise).',
  schema: { type: 'boolean', default: false }, 'x-sightline-error-kind': 'invalid-request',
};

export const filterParam: ParameterObject = {
  name: 'filter',
  in: 'query',
  description: 'Repeatable filter `dimension:operator:value`, for example `filter=country:eq:DE&filter=channel:in:Paid Search|Paid Social`. Filters combine per `conjunction`. List operators (in, nin) separate values with `|`. An unknown dimension is 400 unknown-dimension; an operator the dimension does not allow is 400 unknown-filter-operator (both with `allowed`). GET /schema lists each dimension\'s operators.',
  schema: { type: 'array', items: { type: 'string', pattern: '^[a-z_]+:[a-z_]+:.*$', maxLength: 1000 }, maxItems: 20 },
  style: 'form',
  explode: true,
  'x-sightline-error-kind': 'unknown-filter-operator',
  'x-sightline-filter': { dimensions: [...FILTER_DIMENSIONS], operators: [...OPERATOR_NAMES] },
};

export function idempotencyKeyHeader(note: string): ParameterObject {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    description: `Client-chosen unique key for this write. ${note} A retry with the same key returns the original result and writes nothing more (header Idempotent-Replayed: true); the same key with a different request is 409 conflict. Keys are remembered for 24 hours, per API key.`,
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    'x-sightline-error-kind': 'invalid-request',
  };
}
