// Values a PATCH can set a field to, derived from the field's schema in the OpenAPI document and the
// field's current value: each candidate differs from the current value where the schema allows, so a
// PATCH walk changes one field for real and can see whether any other moved.
type Schema = Record<string, unknown>;

export function resolveIn(document: Schema, value: unknown): Schema {
  let node = value as Schema;
  const seen = new Set<string>();
  while (node && typeof node === 'object' && typeof node['$ref'] === 'string' && !seen.has(node['$ref'])) {
    const ref = node['$ref'];
    seen.add(ref);
    const target = ref.slice(2).split('/').reduce<unknown>((at, part) => (at as Schema | undefined)?.[part], document) as Schema;
    // Keywords beside the $ref (a description) are kept; the target's fill the rest.
    const { $ref: _ref, ...beside } = node;
    node = { ...target, ...beside };
  }
  return node ?? {};
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Candidate values for a field, best first; the last may equal the current value (a PATCH that changes nothing). */
export function candidatesFor(document: Schema, raw: unknown, current: unknown, depth = 0): unknown[] {
  const schema = resolveIn(document, raw);
  const out: unknown[] = [];
  const push = (value: unknown) => {
    if (value !== undefined && !out.some((v) => same(v, value))) out.push(value);
  };
  for (const key of ['anyOf', 'oneOf']) {
    for (const branch of (schema[key] as unknown[] | undefined) ?? []) {
      if (resolveIn(document, branch)['type'] !== 'null') for (const v of candidatesFor(document, branch, current, depth + 1)) push(v);
    }
  }
  const types = Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type'] as string] : [];
  if (Array.isArray(schema['enum'])) for (const v of schema['enum'] as unknown[]) if (!same(v, current) && v !== null) push(v);
  if (types.includes('boolean')) push(typeof current === 'boolean' ? !current : true);
  if (types.includes('integer') || types.includes('number')) {
    const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
    const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : Number.MAX_SAFE_INTEGER;
    if (typeof current === 'number') push(current + 1 <= max ? current + 1 : current - 1 >= min ? current - 1 : undefined);
    push(Math.max(min, Math.min(max, 42)));
  }
  if (types.includes('string') && !Array.isArray(schema['enum'])) {
    const maxLength = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : 200;
    if (schema['pattern'] === '^[A-Z]{3}$') {
      for (const code of ['USD', 'GBP']) if (code !== current) push(code);
    } else if (schema['format'] === 'email') {
      push('patched@example.com');
    } else if (!schema['format'] && !schema['pattern']) {
      push(`patched ${String(current ?? '')}`.trim().slice(0, maxLength));
    }
  }
  if (types.includes('array') && Array.isArray(current) && current.length > 1) push([...current].reverse());
  if (types.includes('object') && depth < 4) {
    // A map keyed by a fixed set: one entry (the first name, a plain value).
    const names = resolveIn(document, schema['propertyNames'])['enum'];
    if (Array.isArray(names) && schema['additionalProperties']) push({ ...(current as object), [String(names[0])]: 'patched' });
    // An object: the current value with one optional property it lacks added (its first candidate).
    const base = current && typeof current === 'object' && !Array.isArray(current) ? (current as Schema) : {};
    const required = new Set((schema['required'] as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries((schema['properties'] as Record<string, unknown> | undefined) ?? {})) {
      if (required.has(name) || name in base) continue;
      const [value] = candidatesFor(document, property, undefined, depth + 1);
      if (value !== undefined) push({ ...base, [name]: value });
    }
  }
  push(current);
  return out;
}
