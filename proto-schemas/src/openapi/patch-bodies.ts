// A PATCH carries only the fields being changed: a field left out keeps its value. A `default` on a
// top-level property of a PATCH body says the opposite (left out = the default), and whatever applies
// the document's defaults (the gateway's validator, a generated client) would then reset every field
// not sent. PATCH bodies reuse their resource's properties (FunnelPatch takes the definition's, defaults
// included), so the defaults are taken out here, for every PATCH operation, rather than by hand in each
// schema. A value sent whole (an automation's `spec`, replacing the old one) keeps the defaults inside
// it: they describe that value as at creation.
import type { PathItemObject, Schema } from './types';

const COMPONENT_REF = '#/components/schemas/';

/** `schemas` with the top-level property defaults of every PATCH body removed (copies; nothing shared is changed). */
export function withoutPatchDefaults(paths: Record<string, PathItemObject>, schemas: Record<string, Schema>): Record<string, Schema> {
  const out = { ...schemas };
  for (const item of Object.values(paths)) {
    const body = item.patch?.requestBody?.content['application/json'];
    if (!body) continue;
    const ref = body.schema['$ref'];
    if (typeof ref === 'string' && ref.startsWith(COMPONENT_REF)) {
      const name = ref.slice(COMPONENT_REF.length);
      const component = out[name];
      if (!component) throw new Error(`PATCH body refers to a missing schema: ${ref}`);
      out[name] = withoutPropertyDefaults(component);
    } else {
      body.schema = withoutPropertyDefaults(body.schema);
    }
  }
  return out;
}

function withoutPropertyDefaults(schema: Schema): Schema {
  const properties = schema['properties'] as Record<string, Schema> | undefined;
  if (!properties) return schema;
  const stripped = Object.fromEntries(Object.entries(properties).map(([name, property]) => {
    if (!('default' in property)) return [name, property];
    const { default: _default, ...rest } = property;
    return [name, rest];
  }));
  return { ...schema, properties: stripped };
}
