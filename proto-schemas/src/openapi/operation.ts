// Builds one operation with the responses, headers and vendor extensions every operation shares,
// so each path file states only what is particular to it.
import type { ScopeName } from '../registry/scopes';
import { DOCUMENT_PROBLEM_KINDS, type DocumentProblemKind } from './problems';
import { websiteParam } from './parameters';
import type { OperationObject, ParameterObject, RequestBodyObject, ResponseObject, Schema, ServiceName } from './types';

export interface OperationInput {
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  service: ServiceName;
  scope: ScopeName | null;
  /** Takes the website parameter (added first). */
  website: boolean;
  analytics?: boolean;
  parameters?: ParameterObject[];
  requestBody?: { schema: Schema; description?: string; required?: boolean };
  ok: { description: string; schema: Schema };
  /** Kinds beyond those every operation can answer. */
  errors?: DocumentProblemKind[];
}

const RATE_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
  'Sightline-Request-Id': { $ref: '#/components/headers/Sightline-Request-Id' },
};

// Every answer carries the rate-limit headers and the request id, problems included (a refusal is
// counted too); 429 and 503 add Retry-After. They are declared on each response so a generated
// client and the contract test can rely on them.
function problemResponse(status: number, kinds: DocumentProblemKind[]): ResponseObject {
  const retry = status === 429 || status === 503;
  return {
    description: `Problem document; kinds: ${kinds.join(', ')}.`,
    headers: retry ? { ...RATE_HEADERS, 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : { ...RATE_HEADERS },
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    'x-sightline-problem-kinds': kinds,
  };
}

export function operation(input: OperationInput): OperationObject {
  const analytics = input.analytics ?? false;
  const parameters = [...(input.website ? [websiteParam] : []), ...(input.parameters ?? [])];
  const takesId = parameters.some((p) => p.in === 'path');
  // Every request can be refused before routing (431) or by the key, the limits and the scope.
  const kinds = new Set<DocumentProblemKind>(['invalid-request', 'unauthorized', 'headers-too-large', 'rate-limit-exceeded', 'quota-exceeded', 'internal']);
  if (input.scope !== null || parameters.some((p) => p['x-sightline-scope'])) kinds.add('insufficient-scope');
  if (input.website) kinds.add('website-not-found');
  if (takesId) kinds.add('not-found');
  if (analytics) kinds.add('too-many-concurrent');
  // Answered over the bus by another service: no instance may be running, or none replies in time (503).
  if (input.service !== 'gateway') kinds.add('service-unavailable');
  // An Idempotency-Key reused with a different request is refused rather than replayed.
  if (parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) kinds.add('conflict');
  if (input.requestBody) {
    kinds.add('payload-too-large');
    kinds.add('unsupported-media-type');
  }
  for (const kind of input.errors ?? []) kinds.add(kind);

  const byStatus = new Map<number, DocumentProblemKind[]>();
  for (const kind of Object.keys(DOCUMENT_PROBLEM_KINDS) as DocumentProblemKind[]) {
    if (!kinds.has(kind)) continue;
    const status = DOCUMENT_PROBLEM_KINDS[kind];
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }

  const responses: Record<string, ResponseObject> = {
    '200': {
      description: input.ok.description,
      headers: { ...RATE_HEADERS },
      content: { 'application/json': { schema: input.ok.schema } },
    },
  };
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) responses[String(status)] = problemResponse(status, list);

  const op: OperationObject = {
    operationId: input.operationId,
    summary: input.summary,
    description: input.description,
    tags: [input.tag],
    parameters,
    responses,
    security: [{ bearerAuth: [] }],
    'x-sightline-service': input.service,
    'x-sightline-scope': input.scope,
    'x-sightline-website': input.website,
    'x-sightline-analytics': analytics,
    'x-sightline-rpc': input.service === 'gateway' ? null : `${input.service}.${input.operationId}`,
  };
  if (input.requestBody) {
    const body: RequestBodyObject = {
      required: input.requestBody.required ?? true,
      content: { 'application/json': { schema: input.requestBody.schema } },
    };
    if (input.requestBody.description) body.description = input.requestBody.description;
    op.requestBody = body;
  }
  return op;
}

/** A deprecated alias that behaves exactly as `canonical` (same handler, same RPC method). */
export function legacyAlias(canonical: OperationObject, canonicalPath: string): OperationObject {
  return {
    ...canonical,
    operationId: `${canonical.operationId}Legacy`,
    summary: `${canonical.summary} (legacy path)`,
    description: `Legacy alias of \`${canonicalPath}\` (operation ${canonical.operationId}); identical behaviour and response. New integrations use ${canonicalPath}.`,
    deprecated: true,
    'x-sightline-canonical-operation': canonical.operationId,
  };
}
