// The gateway's route table is the OpenAPI document: every operation in it is routed, under both
// its `/v1` path and the unprefixed one, with the scope, website and limit rules its
// `x-sightline-*` extensions state. Nothing is routed that the document does not describe.

export interface OpenApiParameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
  style?: string;
  explode?: boolean;
  'x-sightline-error-kind'?: string;
  'x-sightline-clamp'?: boolean;
}

export interface OpenApiOperation {
  operationId: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  'x-sightline-service': string;
  'x-sightline-scope': string | null;
  'x-sightline-website'?: boolean;
  'x-sightline-analytics'?: boolean;
  /** `<service>.<operationId>` of the RPC that answers it; null when the gateway answers itself. */
  'x-sightline-rpc'?: string | null;
}

export interface OpenApiDocumentShape {
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
}

export interface Operation {
  method: string;
  /** Path as written in the document, e.g. `/v1/contacts/{id}`. */
  documentPath: string;
  /** Express path without the version prefix, e.g. `/contacts/:id`. */
  expressPath: string;
  operationId: string;
  /** The RPC that answers it (legacy aliases name their current operation's), or null for the gateway's own. */
  rpcMethod: string | null;
  service: string;
  scope: string | null;
  takesWebsite: boolean;
  analytics: boolean;
  parameters: OpenApiParameter[];
  bodySchema: Record<string, unknown> | null;
  bodyRequired: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(document: OpenApiDocumentShape): Operation[] {
  const operations: Operation[] = [];
  for (const [documentPath, item] of Object.entries(document.paths)) {
    const shared = (item['parameters'] as OpenApiParameter[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = item[method] as OpenApiOperation | undefined;
      if (!op) continue;
      const body = op.requestBody?.content?.['application/json']?.schema ?? null;
      operations.push({
        method: method.toUpperCase(),
        documentPath,
        expressPath: documentPath.replace(/^\/v1(?=\/)/, '').replace(/\{([^}]+)\}/g, ':$1'),
        operationId: op.operationId,
        rpcMethod: op['x-sightline-rpc'] ?? null,
        service: op['x-sightline-service'],
        scope: op['x-sightline-scope'] ?? null,
        takesWebsite: op['x-sightline-website'] === true,
        analytics: op['x-sightline-analytics'] === true,
        parameters: [...shared, ...(op.parameters ?? [])].map((p) => resolveRef(document, p) as OpenApiParameter),
        bodySchema: body ? withoutPerItemSchemas(resolveRef(document, body) as Record<string, unknown>) : null,
        bodyRequired: op.requestBody?.required === true,
      });
    }
  }
  return operations;
}

/** Follows a local `$ref` (`#/components/...`) one level, which is all parameters and bodies use. */
function resolveRef(document: OpenApiDocumentShape, value: unknown): unknown {
  if (value && typeof value === 'object' && '$ref' in value) {
    const ref = String((value as { $ref: string }).$ref);
    if (!ref.startsWith('#/')) return value;
    let node: unknown = document;
    for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part];
    return resolveRef(document, node);
  }
  return value;
}

/**
 * The body schema the gateway checks: properties marked `x-sightline-checked-per-item` keep their
 * array bounds but not their item schema, since the owning service checks items one by one and
 * reports a bad one in its answer (POST /events: partial success) rather than refusing the batch.
 */
function withoutPerItemSchemas(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema['properties'] as Record<string, Record<string, unknown>> | undefined;
  if (!properties) return schema;
  const relaxed = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [name, property['x-sightline-checked-per-item'] === true ? { ...property, items: {} } : property]),
  );
  return { ...schema, properties: relaxed };
}
