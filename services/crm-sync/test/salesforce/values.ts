// Value conversion between what tests/PATCH bodies pass, the internal row form, and
// Salesforce's JSON form; one place so every path stores and renders values alike.
import { normalizeId } from './ids';
import type { FieldDef, Kind } from './schema';
import type { FieldInput } from './types';

/** Internal row: datetimes as epoch ms, dates as 'YYYY-MM-DD', everything else as JSON. */
export type Row = Record<string, string | number | boolean | null>;


/** REST JSON datetime form: 2026-11-01T00:00:00.000+0000. */
export function sfDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

export function toMs(v: FieldInput): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v;
  const s = String(v).replace(/([+-]\d\d)(\d\d)$/, '$1:$2'); // +0000 → +00:00 for Date.parse
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`not a datetime: ${String(v)}`);
  return ms;
}

export function toDate(v: FieldInput): string {
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'number') return new Date(v).toISOString().slice(0, 10);
  const s = String(v);
  if (!/^\d{4}-\d\d-\d\d$/.test(s) || Number.isNaN(Date.parse(s))) throw new Error(`not a date: ${s}`);
  return s;
}

export const isNumericKind = (k: Kind): boolean => k === 'double' || k === 'currency' || k === 'percent' || k === 'int';
export const isTextKind = (k: Kind): boolean => k === 'string' || k === 'textarea' || k === 'email' || k === 'url' || k === 'picklist';

/** Coerces a test/PATCH value to the stored form; throws a message when it cannot. */
export function coerce(field: FieldDef, v: unknown): string | number | boolean | null {
  if (v === null || v === undefined || v === '') return null;
  switch (field.kind) {
    case 'datetime':
      if (typeof v !== 'string' && typeof v !== 'number' && !(v instanceof Date)) throw new Error(`Cannot deserialize value for ${field.name} as dateTime`);
      return toMs(v);
    case 'date':
      if (typeof v !== 'string' && !(v instanceof Date)) throw new Error(`Cannot deserialize value for ${field.name} as date`);
      return toDate(v);
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw new Error(`Cannot deserialize instance of boolean from ${JSON.stringify(v)} for ${field.name}`);
    case 'double':
    case 'currency':
    case 'percent':
    case 'int': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) throw new Error(`Cannot deserialize instance of double from ${JSON.stringify(v)} for ${field.name}`);
      return field.kind === 'int' ? Math.trunc(n) : n;
    }
    case 'id':
    case 'reference':
      if (typeof v !== 'string') throw new Error(`Cannot deserialize instance of string from ${JSON.stringify(v)} for ${field.name}`);
      return normalizeId(v);
    default:
      if (typeof v === 'object') throw new Error(`Cannot deserialize instance of string from ${JSON.stringify(v)} for ${field.name}`);
      return String(v);
  }
}

export function outValue(field: FieldDef, v: string | number | boolean | null | undefined): string | number | boolean | null {
  if (v === undefined || v === null) return null;
  if (field.kind === 'datetime') return sfDateTime(v as number);
  return v;
}
