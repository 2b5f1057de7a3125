// Turns a bus envelope into the row the feed stores: who made the change (the envelope's source,
// e.g. api:<key_id>), which object it is about, and a small payload subset. Personal data (email,
// phone, names, free-form properties and notes) is never stored in the feed.

import type { Envelope } from '@sightline/proto-schemas';
import { dealChangeData, dealOccurredAt, isDealChange } from './deal-change';

export type ObjectType = 'contact' | 'deal' | 'funnel' | 'automation';

export interface NewChange {
  message_id: string;
  workspace_id: string | null;
  website_id: string;
  type: string;
  source: string;
  object_type: ObjectType | null;
  object_id: string | null;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** Id fields that name a public object, in the order they are preferred. */
const OBJECT_ID_FIELDS: readonly (readonly [field: string, objectType: ObjectType])[] = [
  ['conversion_id', 'contact'], // a contact is one conversion: its id is the conversion id
  ['contact_id', 'contact'],
  ['deal_id', 'deal'],
  ['funnel_id', 'funnel'],
  ['automation_id', 'automation'],
];

/** Ids that are context (already on the envelope) rather than the object a change is about. */
const CONTEXT_IDS = new Set(['workspace_id', 'website_id', 'key_id', 'identity_id']);

const PERSONAL_KEYS = new Set([
  'email', 'phone', 'name', 'first_name', 'last_name', 'full_name', 'address', 'ip', 'user_agent',
  'notes', 'note', 'properties', 'anonymous_id', 'email_hash', 'phone_hash',
]);
const MAX_FIELDS = 24;
const MAX_TEXT = 256;
const MAX_ITEMS = 16;

function isPersonalKey(key: string): boolean {
  const k = key.toLowerCase();
  return PERSONAL_KEYS.has(k) || /(^|_)(email|phone)(_|$)/.test(k) || /(^|_)(first|last|full)_name$/.test(k);
}

function looksLikeEmail(value: string): boolean {
  return /[^\s@]+@[^\s@]+\.[^\s@]+/.test(value);
}

/** A scalar safe to keep, or undefined to drop it. */
function keepScalar(value: unknown): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return looksLikeEmail(value) ? undefined : value.slice(0, MAX_TEXT);
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function keepList(item: unknown): unknown[] {
  const kept = keepScalar(item);
  return kept === undefined ? [] : [kept];
}

/**
 * Scalars, and one level of objects or lists of flat objects (old/new values), minus personal
 * fields and values.
 */
function subset(payload: Record<string, unknown>, skip: ReadonlySet<string>, nested: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A change to a personal field (e.g. { field: 'email', old, new }) keeps only its name.
  const field = payload['field'];
  const personalField = typeof field === 'string' && isPersonalKey(field);
  for (const [key, value] of Object.entries(payload)) {
    if (Object.keys(out).length >= MAX_FIELDS) break;
    if (skip.has(key) || isPersonalKey(key)) continue;
    if (personalField && key !== 'field' && key !== 'reason') continue; // keep only which field changed
    if (Array.isArray(value)) {
      // e.g. `changes: [{ field, old_value, new_value }]`: each item filtered the same way.
      if (nested) out[key] = value.slice(0, MAX_ITEMS).flatMap((item) => (isPlainObject(item) ? [subset(item, new Set(), false)] : keepList(item)));
      continue;
    }
    if (isPlainObject(value)) {
      if (nested) out[key] = subset(value, new Set(), false);
      continue;
    }
    const kept = keepScalar(value);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}

export function objectOf(payload: Record<string, unknown>): { object_type: ObjectType | null; object_id: string | null; field: string | null } {
  for (const [field, objectType] of OBJECT_ID_FIELDS) {
    const value = payload[field];
    if (typeof value === 'string' && value !== '') return { object_type: objectType, object_id: value, field };
  }
  // Generic fallback: the first *_id the payload carries, with no public object type.
  for (const [field, value] of Object.entries(payload)) {
    if (field.endsWith('_id') && !CONTEXT_IDS.has(field) && typeof value === 'string' && value !== '') {
      return { object_type: null, object_id: value, field };
    }
  }
  return { object_type: null, object_id: null, field: null };
}

/** The stored form of a change message; null when it names no website (the feed is per website). */
export function changeFromEnvelope(envelope: Envelope): NewChange | null {
  const payload = envelope.payload !== null && typeof envelope.payload === 'object' ? (envelope.payload as Record<string, unknown>) : {};
  const payloadWebsite = typeof payload['website_id'] === 'string' ? payload['website_id'] : null;
  const websiteId = envelope.website_id ?? payloadWebsite;
  if (!websiteId) return null;
  const object = objectOf(payload);
  const skip = new Set(['workspace_id', 'website_id', ...(object.field ? [object.field] : [])]);
  return {
    message_id: envelope.id,
    workspace_id: envelope.workspace_id,
    website_id: websiteId,
    type: envelope.type,
    source: envelope.source,
    object_type: object.object_type,
    object_id: object.object_id,
    // Deal changes have a shape of their own (deal-change.ts); the rest keep a filtered subset.
    occurred_at: isDealChange(envelope.type) ? dealOccurredAt(payload, envelope.occurred_at) : envelope.occurred_at,
    data: isDealChange(envelope.type) ? dealChangeData(payload) : subset(payload, skip, true),
  };
}
