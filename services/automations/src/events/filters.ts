// Whether an event passes an alert's filters (all must hold).
import { readField, type CatalogType } from '../spec/event-catalog';
import type { EventFilter } from '../spec/spec';

export function matches(type: CatalogType, payload: unknown, filters: readonly EventFilter[] | undefined): boolean {
  return (filters ?? []).every((f) => holds(readField(type, payload, f.field) ?? null, f));
}

function holds(value: string | number | boolean | null, f: EventFilter): boolean {
  const text = value === null ? null : String(value);
  const num = typeof value === 'number' ? value : value === null || typeof value === 'boolean' || value.trim() === '' ? NaN : Number(value);
  const same = (v: string): boolean => (typeof value === 'number' ? num === Number(v) : text === v);
  const first = f.values[0] ?? '';
  switch (f.op) {
    case 'eq': return text !== null && same(first);
    case 'ne': return text === null || !same(first);
    case 'in': return text !== null && f.values.some(same);
    case 'nin': return text === null || !f.values.some(same);
    case 'contains': return text !== null && text.toLowerCase().includes(first.toLowerCase());
    case 'not_contains': return text === null || !text.toLowerCase().includes(first.toLowerCase());
    case 'gt': return Number.isFinite(num) && num > Number(first);
    case 'gte': return Number.isFinite(num) && num >= Number(first);
    case 'lt': return Number.isFinite(num) && num < Number(first);
    case 'lte': return Number.isFinite(num) && num <= Number(first);
  }
}
