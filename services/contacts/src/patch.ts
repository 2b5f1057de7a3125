// PATCH /contacts/{id}: the body check and the diff against the stored row. The gateway already
// checks the body against the OpenAPI schema; this repeats the rules the ledger depends on, so
// no other caller can write a computed field or a malformed value either.
import { ProblemError } from '@sightline/kit';
import { CONTACT_WRITABLE_FIELDS, type ContactWritableField, type FieldChangeV1 } from '@sightline/proto-schemas';

export type OutcomeValue = string | number | boolean | null;
export type ContactPatch = Partial<Record<ContactWritableField, OutcomeValue>>;
export type OutcomeFields = Record<ContactWritableField, OutcomeValue>;
export type FieldChange = FieldChangeV1<ContactWritableField, string | number | boolean>;

export const VALUE_FIELDS = ['sales_value', 'quote_value', 'currency'] as const;
export const STAGE_FIELDS = ['status', 'lead_status_raw', 'lifecycle_stage_raw'] as const;
export const DESCRIPTIVE_FIELDS = ['notes', 'is_spam'] as const;

const WRITABLE: readonly string[] = CONTACT_WRITABLE_FIELDS;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

const rule = (kind: 'string' | 'money' | 'boolean' | 'currency', nullable: boolean, maxLength = 0) => ({ kind, nullable, maxLength });
const RULES: Record<ContactWritableField, ReturnType<typeof rule>> = {
  status: rule('string', false, 100),
  sales_value: rule('money', true),
  quote_value: rule('money', true),
  currency: rule('currency', false),
  notes: rule('string', true, 10_000),
  lead_status_raw: rule('string', true, 200),
  lifecycle_stage_raw: rule('string', true, 200),
  is_spam: rule('boolean', false),
};

function invalid(field: string, detail: string, remediation: string): ProblemError {
  return new ProblemError('invalid-request', { detail: `Body field "${field}" ${detail}.`, remediation });
}

/** Checks a PATCH body; throws invalid-request (with the writable fields for an unknown one). */
export function parsePatch(body: unknown): ContactPatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ProblemError('invalid-request', { detail: 'The body must be a JSON object.', remediation: `Send an object with any of ${WRITABLE.join(', ')}.`, allowed: [...WRITABLE] });
  }
  const patch: ContactPatch = {};
  for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
    if (!WRITABLE.includes(field)) {
      throw new ProblemError('invalid-request', {
        detail: `Body field "${field}" is not accepted: only outcome fields can be written; attribution, identity and personal fields are read-only.`,
        remediation: 'Send only the writable fields listed in `allowed`.',
        allowed: [...WRITABLE],
      });
    }
    const name = field as ContactWritableField;
    const r = RULES[name];
    if (value === null) {
      if (!r.nullable) throw invalid(field, 'cannot be null', `Send a value for "${field}" or leave it out.`);
      patch[name] = null;
      continue;
    }
    switch (r.kind) {
      case 'string':
        if (typeof value !== 'string') throw invalid(field, 'must be a string', `Send "${field}" as a string.`);
        if (value.length > r.maxLength) throw invalid(field, `is longer than ${r.maxLength} characters`, `Shorten "${field}".`);
        break;
      case 'money':
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalid(field, 'must be a number of at least 0', `Send "${field}" in major currency units, e.g. 1200.50.`);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') throw invalid(field, 'must be true or false', `Send "${field}" as a JSON boolean.`);
        break;
      case 'currency':
        if (typeof value !== 'string' || !/^[A-Z]{3}$/.test(value) || !CURRENCIES.has(value)) {
          throw invalid(field, 'must be an ISO 4217 currency code', 'Send a three-letter upper-case ISO 4217 code such as EUR or USD.');
        }
        break;
    }
    patch[name] = value as OutcomeValue;
  }
  return patch;
}

/** The fields whose value the patch really changes, in the order of CONTACT_WRITABLE_FIELDS. */
export function diffPatch(current: OutcomeFields, patch: ContactPatch): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of CONTACT_WRITABLE_FIELDS) {
    if (!(field in patch)) continue;
    const next = patch[field] ?? null;
    const before = current[field];
    if (sameValue(before, next)) continue;
    changes.push({ field, old_value: before, new_value: next });
  }
  return changes;
}

function sameValue(a: OutcomeValue, b: OutcomeValue): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  return a === b;
}

/** Splits changes by the message that announces them. */
export function groupChanges(changes: FieldChange[]) {
  const of = <F extends ContactWritableField>(fields: readonly F[]) => changes.filter((c): c is FieldChange & { field: F } => (fields as readonly string[]).includes(c.field));
  return { value: of(VALUE_FIELDS), stage: of(STAGE_FIELDS), descriptive: of(DESCRIPTIVE_FIELDS) };
}
