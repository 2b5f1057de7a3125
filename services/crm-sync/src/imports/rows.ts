// Checks one import row: tidies what files differ in (empty cells, nulls, ";" lists, lower-case
// currencies, numbers written as text), validates it against the kind's schema, then applies the
// rules across fields. The CLI and the admin route both call checkImportRow, so a row the CLI
// accepts is a row the route accepts.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { IMPORT_KINDS, IMPORT_ROW_SCHEMAS, listFields, type ImportKind, type ImportRows, type SpendImportRow } from './schemas';
import type { AdLevelName } from '@sightline/proto-schemas';

export type RowCheck<K extends ImportKind> = { ok: true; row: ImportRows[K] } | { ok: false; reason: string };

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A calendar date, or date and time with an optional offset (none means UTC), as an ISO instant; null if not one. */
export function toInstant(value: string): string | null {
  const m = INSTANT.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '0', offset] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const zone = !offset || offset === 'Z' ? 'Z' : offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const time = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction.slice(0, 3).padEnd(3, '0')}${zone}`);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

const validators = ((): Record<ImportKind, ValidateFunction> => {
  // coerceTypes: a CSV cell "12.5" is the number 12.5, an NDJSON id 123 the string "123".
  const ajv = new Ajv({ coerceTypes: true, allErrors: false, strict: true });
  addFormats(ajv, ['date']);
  ajv.addFormat('instant', { type: 'string', validate: (value: string) => toInstant(value) !== null });
  return Object.fromEntries(IMPORT_KINDS.map((kind) => [kind, ajv.compile(IMPORT_ROW_SCHEMAS[kind])])) as Record<ImportKind, ValidateFunction>;
})();

const LIST_FIELDS = Object.fromEntries(IMPORT_KINDS.map((kind) => [kind, new Set(listFields(kind))])) as Record<ImportKind, Set<string>>;

/** Absent, null and blank are the same thing; lists may be ";"-separated text; currencies may be lower case. */
function tidy(kind: ImportKind, raw: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'string') {
      const trimmed = value.trim();
      if (trimmed === '') continue;
      if (LIST_FIELDS[kind].has(key)) {
        row[key] = trimmed.split(';').map((v) => v.trim()).filter((v) => v !== '');
      } else {
        row[key] = key === 'currency' ? trimmed.toUpperCase() : trimmed;
      }
    } else {
      row[key] = value;
    }
  }
  return row;
}

/** The first schema error, said for a person fixing the file (with the offending value). */
function describe(error: ErrorObject, row: Record<string, unknown>): string {
  const path = error.instancePath.split('/').slice(1);
  const field = path.join('.');
  const data = path.reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), row);
  const got = (value: unknown): string => (value === undefined ? '' : ` (got ${JSON.stringify(value).slice(0, 60)})`);
  switch (error.keyword) {
    case 'required':
      return `${String((error.params as { missingProperty: string }).missingProperty)} is required`;
    case 'additionalProperties':
      return `unknown field "${String((error.params as { additionalProperty: string }).additionalProperty)}"`;
    case 'type':
      return `${field} must be ${(error.params as { type: string }).type === 'integer' ? 'a whole number' : `a ${String((error.params as { type: string }).type)}`}${got(data)}`;
    case 'enum':
      return `${field} must be one of ${((error.params as { allowedValues: string[] }).allowedValues).join(', ')}${got(data)}`;
    case 'format':
      return (error.params as { format: string }).format === 'date'
        ? `${field} must be a date like 2024-05-31${got(data)}`
        : `${field} must be a date or date-time like 2024-05-31T14:00:00Z${got(data)}`;
    case 'pattern':
      return field.endsWith('currency')
        ? `${field} must be a 3-letter ISO 4217 code${got(data)}`
        : field.endsWith('email')
          ? `${field} must be an email address${got(data)}`
          : `${field} must match ${String((error.params as { pattern: string }).pattern)}${got(data)}`;
    default:
      return `${field || 'row'} ${error.message ?? 'is invalid'}${got(data)}`;
  }
}

/** The level a spend row describes: as given, else the most specific id it carries. */
export function spendLevel(row: SpendImportRow): AdLevelName {
  return row.level ?? (row.ad_id ? 'ad' : row.ad_set_id ? 'ad_set' : row.campaign_id ? 'campaign' : 'account');
}

/** The id of the item a spend row describes, or null when the level has no default. */
export function spendItemId(row: SpendImportRow): string | null {
  if (row.item_id) return row.item_id;
  const level = spendLevel(row);
  const byLevel: Partial<Record<AdLevelName, string | undefined>> = { account: row.account_id, campaign: row.campaign_id, ad_set: row.ad_set_id, ad: row.ad_id };
  return byLevel[level] ?? null;
}

/** Rules that span fields, after the schema passed; the reason a row breaks one, or null. */
function ruleBroken(kind: ImportKind, row: Record<string, unknown>): string | null {
  for (const key in row) {
    const value = row[key];
    if (typeof value === 'number' && !Number.isFinite(value)) return `${key} must be a finite number`;
  }
  if (kind === 'contacts' && row['crm_id'] === undefined && row['email'] === undefined) return 'crm_id or email is required';
  if (kind === 'spend' && spendItemId(row as unknown as SpendImportRow) === null) {
    return `item_id is required for level ${spendLevel(row as unknown as SpendImportRow)}`;
  }
  if (kind === 'orders') {
    if (row['refund_id'] !== undefined) {
      const missing = ['refunded_at', 'refund_amount'].filter((f) => row[f] === undefined);
      if (missing.length > 0) return `a refund row (refund_id set) needs ${missing.join(' and ')}`;
      if (row['unit_price'] !== undefined || row['unit_cost'] !== undefined) return 'a row is an order line or a refund, not both: put the refund on its own row';
    } else {
      if (row['product_id'] === undefined) return 'a row needs product_id (an order line) or refund_id (a refund)';
      if (row['unit_price'] === undefined) return 'unit_price is required on an order line';
    }
  }
  return null;
}

export function checkImportRow<K extends ImportKind>(kind: K, raw: unknown): RowCheck<K> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'a row must be an object' };
  const row = tidy(kind, raw as Record<string, unknown>);
  const validate = validators[kind];
  if (!validate(row)) return { ok: false, reason: validate.errors?.[0] ? describe(validate.errors[0], row) : 'invalid row' };
  const broken = ruleBroken(kind, row);
  return broken ? { ok: false, reason: broken } : { ok: true, row: row as unknown as ImportRows[K] };
}

/** The key that groups rows into one order. */
export function orderKey(row: { platform?: string; order_id: string }): string {
  return `${row.platform ?? 'import'}\u001f${row.order_id}`;
}
