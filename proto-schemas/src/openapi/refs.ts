// Small builders for schema fragments used across the document.
import type { Schema } from './types';

export function ref(name: string): Schema {
  return { $ref: `#/components/schemas/${name}` };
}

export function nullable(schema: Schema): Schema {
  return { oneOf: [schema, { type: 'null' }] };
}

export function enumOf(values: readonly string[], description?: string): Schema {
  return description ? { type: 'string', enum: [...values], description } : { type: 'string', enum: [...values] };
}

/** `{data: [item], meta}` (+ next_cursor when paged). Responses allow fields added later. */
export function listOf(item: Schema, paged: boolean): Schema {
  const properties: Record<string, Schema> = { data: { type: 'array', items: item }, meta: ref('Meta') };
  if (paged) properties['next_cursor'] = { type: 'string', description: 'Cursor of the next page; absent on the last page.' };
  return { type: 'object', required: ['data', 'meta'], properties, additionalProperties: true };
}

/** `{data: item, meta?}` for a single resource. */
export function one(item: Schema): Schema {
  return { type: 'object', required: ['data'], properties: { data: item, meta: ref('Meta') }, additionalProperties: true };
}

export const money: Schema = { type: 'number', description: 'Amount in major currency units.' };
export const dateTime: Schema = { type: 'string', format: 'date-time' };
export const currencyCode: Schema = { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 code.' };
