// Every place a request body holds a value, found by walking the body's schema (refs, allOf/anyOf/
// oneOf, properties, additionalProperties, array items): the fuzz puts hostile values in each, so a
// field added to the document later is fuzzed without touching the corpus.
export type Schema = Record<string, unknown>;
export type FieldPath = (string | number)[];

export interface Field {
  /** Property names and array indexes (always 0) from the body's root. */
  path: FieldPath;
  /** JSON types the schema allows there; 'any' where it says nothing (a free-form value). */
  types: Set<string>;
  minItems?: number;
  maxItems?: number;
  /** The array's item schema, for arrays. */
  items?: unknown;
  /** Whether the value comes from a fixed set (enum or const). */
  fixed?: boolean;
  /** The string format (date-time, email, uuid). */
  format?: string;
}

/** A key a map (additionalProperties) takes: its propertyNames' first enum value, else a name most patterns allow. */
function keyFor(schema: Schema): string {
  const names = schema['propertyNames'] as Schema | undefined;
  if (names && Array.isArray(names['enum']) && names['enum'].length > 0) return String(names['enum'][0]);
  return 'fuzz_key';
}

function typesOf(schema: Schema): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type as string[];
  if ('const' in schema) return [jsonType(schema['const'])];
  if (Array.isArray(schema['enum'])) return [...new Set((schema['enum'] as unknown[]).map(jsonType))];
  if (schema['properties'] || schema['additionalProperties'] !== undefined) return ['object'];
  if (schema['items']) return ['array'];
  return [];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
}

/** The fields of a body schema, one per path (branches of a union merged), the root excluded. */
export function fieldsOf(resolve: (value: unknown) => Schema, body: unknown, maxDepth = 8): Field[] {
  const found = new Map<string, Field>();
  const visit = (raw: unknown, path: FieldPath, refs: ReadonlySet<string>): void => {
    if (path.length > maxDepth) return;
    const ref = raw && typeof raw === 'object' ? (raw as Schema)['$ref'] : undefined;
    // A schema that refers to itself (directly or not) is walked once per branch.
    if (typeof ref === 'string' && refs.has(ref)) return;
    const seen = typeof ref === 'string' ? new Set([...refs, ref]) : refs;
    const schema = resolve(raw);
    for (const key of ['allOf', 'anyOf', 'oneOf']) for (const branch of (schema[key] as unknown[] | undefined) ?? []) visit(branch, path, seen);
    if (path.length > 0) {
      const id = JSON.stringify(path);
      const field = found.get(id) ?? { path, types: new Set<string>() };
      const types = typesOf(schema);
      for (const type of types.length > 0 ? types : schema['allOf'] || schema['anyOf'] || schema['oneOf'] ? [] : ['any']) field.types.add(type);
      if (typeof schema['maxItems'] === 'number') field.maxItems = schema['maxItems'];
      if (typeof schema['minItems'] === 'number') field.minItems = schema['minItems'];
      if (schema['items'] !== undefined) field.items = schema['items'];
      if (Array.isArray(schema['enum']) || 'const' in schema) field.fixed = true;
      if (typeof schema['format'] === 'string') field.format = schema['format'];
      found.set(id, field);
    }
    for (const [name, property] of Object.entries((schema['properties'] as Record<string, unknown> | undefined) ?? {})) visit(property, [...path, name], seen);
    const additional = schema['additionalProperties'];
    if (additional && typeof additional === 'object') visit(additional, [...path, keyFor(schema)], seen);
    if (schema['items'] && typeof schema['items'] === 'object') visit(schema['items'], [...path, 0], seen);
  };
  visit(body, [], new Set());
  return [...found.values()];
}

/** `base` with `value` at `path`, containers made where the sample has none (the base is not changed). */
export function withValueAt(base: unknown, path: FieldPath, value: unknown): unknown {
  const root = structuredClone(base ?? {}) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = root;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      at[key] = value;
      return;
    }
    const next = path[i + 1];
    const existing = at[key];
    const fits = typeof next === 'number' ? Array.isArray(existing) : existing !== null && typeof existing === 'object' && !Array.isArray(existing);
    if (!fits) at[key] = typeof next === 'number' ? [{}] : {};
    else if (typeof next === 'number' && (existing as unknown[]).length === 0) (existing as unknown[]).push({});
    at = at[key] as Record<string | number, unknown>;
  });
  return root;
}
