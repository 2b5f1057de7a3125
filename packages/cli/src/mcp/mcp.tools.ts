// MCP tools described from the OpenAPI document: one per read operation (GET, legacy aliases left
// out) and one for POST /events. A tool's name is the operationId, its description the operation's
// summary and description, and its input schema the operation's parameters (plus the body's
// properties for POST /events), with every $ref inlined so an agent needs nothing else to call it.

type Json = Record<string, unknown>;

export interface OpenApiLike {
  paths: Record<string, Record<string, Json>>;
  components?: Json;
}

export interface ToolArgument {
  /** Name in the tool input. */
  name: string;
  /** Where it goes in the HTTP request; `body` for a property of a JSON body. */
  in: 'query' | 'path' | 'header' | 'body';
  /** Its name there (a header keeps its spelling: Idempotency-Key). */
  wireName: string;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Json>; required?: string[]; additionalProperties: false };
  method: 'get' | 'post';
  path: string;
  scope: string | null;
  arguments: ToolArgument[];
}

/** The writes an agent may make besides reading: only sending events. */
const WRITE_OPERATIONS = new Set(['postEvents']);
const MAX_DESCRIPTION = 4000;

export function toolsFromDocument(document: OpenApiLike): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'post'] as const) {
      const operation = item[method];
      if (!operation || operation['deprecated'] === true) continue;
      const operationId = String(operation['operationId']);
      if (method === 'post' && !WRITE_OPERATIONS.has(operationId)) continue;
      tools.push(toolOf(document, path, method, operation));
    }
  }
  return tools;
}

function toolOf(document: OpenApiLike, path: string, method: 'get' | 'post', operation: Json): ToolDefinition {
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  const args: ToolArgument[] = [];
  for (const raw of (operation['parameters'] as Json[] | undefined) ?? []) {
    const parameter = inline(document, raw);
    const where = parameter['in'] as ToolArgument['in'];
    const wireName = String(parameter['name']);
    const name = where === 'header' ? wireName.toLowerCase().replace(/-/g, '_') : wireName;
    properties[name] = { ...(parameter['schema'] as Json), description: String(parameter['description'] ?? '') };
    if (parameter['required'] === true) required.push(name);
    args.push({ name, in: where, wireName });
  }
  const body = inline(document, ((operation['requestBody'] as Json | undefined)?.['content'] as Record<string, Json> | undefined)?.['application/json']?.['schema'] ?? null);
  if (body) {
    const bodyRequired = new Set((body['required'] as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((body['properties'] as Record<string, Json> | undefined) ?? {})) {
      // A body field named like a parameter (website) is sent once, as the parameter.
      if (properties[name]) continue;
      properties[name] = withoutExtensions(schema);
      if (bodyRequired.has(name)) required.push(name);
      args.push({ name, in: 'body', wireName: name });
    }
  }
  const scope = (operation['x-sightline-scope'] as string | null | undefined) ?? null;
  const summary = String(operation['summary'] ?? '');
  const text = [summary.endsWith('.') ? summary : `${summary}.`, String(operation['description'] ?? ''), `${method.toUpperCase()} ${path}${scope ? `; needs scope ${scope}` : ''}.`, 'Errors come back as a problem document with `remediation` (what to do next) and, for a value outside a fixed set, `allowed`.'].join('\n\n');
  return {
    name: String(operation['operationId']),
    title: summary,
    description: text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    method,
    path,
    scope,
    arguments: args,
  };
}

/** The schema with every local $ref replaced by its target (the document's inputs hold no cycles). */
function inline(document: OpenApiLike, value: unknown, depth = 0): Json {
  if (depth > 32) throw new Error('schema nests too deeply to inline');
  if (Array.isArray(value)) return value.map((v) => inline(document, v, depth + 1)) as unknown as Json;
  if (!value || typeof value !== 'object') return value as Json;
  const ref = (value as Json)['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let target: unknown = document;
    for (const part of ref.slice(2).split('/')) target = (target as Json | undefined)?.[part];
    const { $ref: _ref, ...siblings } = value as Json;
    return { ...inline(document, target, depth + 1), ...inline(document, siblings, depth + 1) };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(document, v, depth + 1)]));
}

/** Vendor extensions (x-sightline-*) are for the gateway, not for an agent's input schema. */
function withoutExtensions(schema: Json): Json {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !k.startsWith('x-')));
}
