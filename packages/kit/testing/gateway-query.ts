// The query a handler receives for `GET <path>?<raw>`: the raw strings typed by the operation's
// OpenAPI parameter schemas (lists split on commas, numbers coerced, defaults filled), as the
// gateway's validation hands them over. Tests call handlers with it, so they see production input.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '@sightline/proto-schemas';

interface QueryParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

const ajv = new Ajv2020({ strict: false, coerceTypes: true, useDefaults: true });
addFormats(ajv);
const compiled = new Map<string, { validate: ValidateFunction; params: QueryParameter[] }>();

function compile(path: string) {
  const known = compiled.get(path);
  if (known) return known;
  const item = (openApiDocument.paths as Record<string, { get?: { parameters?: QueryParameter[] } }>)[path];
  if (!item?.get) throw new Error(`no GET ${path} in the OpenAPI document`);
  const params = (item.get.parameters ?? []).filter((p) => p.in === 'query');
  const validate = ajv.compile({
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
    required: params.filter((p) => p.required).map((p) => p.name),
    additionalProperties: false,
  });
  const entry = { validate, params };
  compiled.set(path, entry);
  return entry;
}

/** The query `GET <path>?<raw>` reaches the handler with; throws when the gateway would refuse it. */
export function gatewayQuery(path: string, raw: Record<string, string>): Record<string, unknown> {
  const { validate, params } = compile(path);
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const schema = params.find((p) => p.name === name)?.schema;
    query[name] = schema?.['type'] === 'array' ? value.split(',').map((v) => v.trim()).filter((v) => v !== '') : value;
  }
  if (!validate(query)) throw new Error(`gateway would refuse ${path} ${JSON.stringify(raw)}: ${ajv.errorsText(validate.errors)}`);
  return query;
}
