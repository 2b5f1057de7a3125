// Schema checks the bus runs on publish, on consume and around RPC. Every schema is compiled once,
// at module load, so a broken schema fails the process at start rather than on first use.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { envelopeSchema, messageCatalog, sharedSchemas, type JsonSchema } from './messages';
import { rpcCatalog } from './rpc';

/** Every fact on the bus travels in this envelope; @sightline/kit's bus uses this definition. */
export interface Envelope<P = unknown> {
  id: string;
  type: string;
  version: number;
  occurred_at: string;
  workspace_id: string | null;
  website_id: string | null;
  source: string;
  payload: P;
}

/** Schema checks on publish, consume and around RPC: null when valid, else a reason. */
export interface MessageValidator {
  validateEnvelope(envelope: Envelope): string | null;
  validateRpcRequest(method: string, request: unknown): string | null;
  validateRpcResponse(method: string, response: unknown): string | null;
}

const MAX_REPORTED_ERRORS = 5;

export function formatSchemaErrors(errors: readonly ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'does not match its schema';
  const parts = errors.slice(0, MAX_REPORTED_ERRORS).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    return `${where} ${e.message ?? e.keyword}${extra}`;
  });
  const more = errors.length > MAX_REPORTED_ERRORS ? ` (+${errors.length - MAX_REPORTED_ERRORS} more)` : '';
  return parts.join('; ') + more;
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  return ajv;
}

const ajv = createAjv();
const rpcSchemas = Object.values(rpcCatalog).flatMap((e) => [e.request, e.response]);
const schemas: JsonSchema[] = [envelopeSchema, ...sharedSchemas, ...rpcSchemas, ...Object.values(messageCatalog).map((e) => e.schema)];
for (const schema of new Map(schemas.map((s) => [s.$id, s])).values()) ajv.addSchema(schema);

function compiled(schema: JsonSchema): ValidateFunction {
  const fn = ajv.getSchema(schema.$id);
  if (!fn) throw new Error(`schema ${schema.$id} did not compile`);
  return fn;
}

const validateEnvelopeShape = compiled(envelopeSchema);
const messageValidators = new Map<string, { version: number; validate: ValidateFunction }>(
  Object.entries(messageCatalog).map(([type, entry]) => [type, { version: entry.version, validate: compiled(entry.schema) }]),
);

function check(validate: ValidateFunction, value: unknown, what: string): string | null {
  return validate(value) ? null : `${what}: ${formatSchemaErrors(validate.errors)}`;
}

export const messageValidator: MessageValidator = {
  validateEnvelope(envelope) {
    const shape = check(validateEnvelopeShape, envelope, 'envelope');
    if (shape) return shape;
    const entry = messageValidators.get(envelope.type);
    // Unknown types are refused: every message on the bus must have a schema in this package.
    if (!entry) return `unknown message type '${envelope.type}': add its schema to @sightline/proto-schemas`;
    if (envelope.version !== entry.version) {
      return `no schema for ${envelope.type} v${envelope.version} (current v${entry.version})`;
    }
    return check(entry.validate, envelope, `${envelope.type} v${envelope.version}`);
  },
  validateRpcRequest(method, request) {
    const entry = rpcCatalog[method];
    if (!entry) return `unknown RPC method '${method}'`;
    const shape = check(compiled(entry.request), request, `${method} request`);
    if (shape || entry.operationId === null) return shape;
    const operation = (request as { operation: string }).operation;
    return operation === entry.operationId ? null : `${method} request: operation '${operation}' is not '${entry.operationId}'`;
  },
  validateRpcResponse(method, response) {
    const entry = rpcCatalog[method];
    if (!entry) return `unknown RPC method '${method}'`;
    return check(compiled(entry.response), response, `${method} response`);
  },
};
