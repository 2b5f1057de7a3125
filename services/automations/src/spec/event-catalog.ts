// The event catalog of GET /automations meta: the change messages an event alert can be triggered
// by, and the fields of each that filters and templates can use. Each field is read from the
// message payload here, so the catalog and what a filter sees cannot drift apart.
import type { ConsumedBy, MessagePayloads } from '@sightline/proto-schemas';

/** What event alerts can trigger on: every type automations consumes but funnel.deleted (which pauses alerts). */
export type CatalogType = Exclude<ConsumedBy<'automations'>, 'funnel.deleted'>;
export type FieldType = 'string' | 'number' | 'boolean';
export type FieldValue = string | number | boolean | null;

interface FieldDef<T extends CatalogType> {
  name: string;
  type: FieldType;
  /** An amount in the event's currency (messages show it formatted in that currency). */
  money?: true;
  description: string;
  read: (payload: MessagePayloads[T]) => FieldValue | undefined;
}

interface CatalogEntry<T extends CatalogType> {
  type: T;
  description: string;
  /** The amount a message shows formatted in a currency, when the type has one. */
  amount?: { field: string; currency: string };
  fields: FieldDef<T>[];
  /** What the message links to: the API read of the object the event is about. */
  link: (payload: MessagePayloads[T]) => string;
  /** A sample payload for a manual run before any event matched. */
  sample: MessagePayloads[T];
}

type Catalog = { [T in CatalogType]: CatalogEntry<T> };

const str = (v: string | null | undefined): string | null => (v === undefined ? null : v);
const num = (v: number | null | undefined): number | null => (v === undefined ? null : v);
const domainOf = (email: string | null | undefined): string | null => (email && email.includes('@') ? (email.split('@')[1] ?? null) : null);
const newValue = (changes: { field: string; new_value: unknown }[], field: string): string | null => {
  const change = changes.find((c) => c.field === field);
  return change && change.new_value !== null ? String(change.new_value) : null;
};
const oldValue = (changes: { field: string; old_value: unknown }[], field: string): string | null => {
  const change = changes.find((c) => c.field === field);
  return change && change.old_value !== null ? String(change.old_value) : null;
};

const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
const SAMPLE_AT = '2026-01-01T12:00:00.000Z';

const dealFields = <T extends 'deal.created' | 'deal.stage_changed'>(): FieldDef<T>[] => [
  { name: 'name', type: 'string', description: 'Deal name.', read: (p) => p.name },
  { name: 'amount', type: 'number', money: true, description: 'Deal amount.', read: (p) => num(p.amount) },
  { name: 'currency', type: 'string', description: 'Currency of the amount.', read: (p) => str(p.currency) },
  { name: 'stage_name', type: 'string', description: 'Stage as the CRM names it.', read: (p) => str(p.stage_name) },
  { name: 'stage_id', type: 'string', description: 'Stage id in the CRM.', read: (p) => str(p.stage_id) },
  { name: 'pipeline_id', type: 'string', description: 'Pipeline id in the CRM.', read: (p) => str(p.pipeline_id) },
  { name: 'bucket', type: 'string', description: 'Normalized stage: open, won, lost or other.', read: (p) => p.bucket },
  { name: 'provider', type: 'string', description: 'The CRM (hubspot, import).', read: (p) => p.provider },
];

const dealSample = {
  deal_id: SAMPLE_ID, crm_id: '1001', provider: 'hubspot', website_id: SAMPLE_ID, workspace_id: SAMPLE_ID, name: 'Sample deal',
  amount: 12000, currency: 'EUR', pipeline_id: 'default', stage_id: 'closedwon', stage_name: 'Closed won', bucket: 'won' as const,
  company_id: null, contact_emails: [], occurred_at: SAMPLE_AT,
};

export const EVENT_CATALOG: Catalog = {
  'conversion.created': {
    type: 'conversion.created',
    description: 'A conversion was recorded (tracked, sent with POST /events, or imported).',
    amount: { field: 'revenue', currency: 'currency' },
    fields: [
      { name: 'event_type', type: 'string', description: 'Event type (purchase, signup, ...).', read: (p) => p.event_type },
      { name: 'event_name', type: 'string', description: 'Event name.', read: (p) => str(p.event_name) },
      { name: 'revenue', type: 'number', money: true, description: 'Revenue in major units.', read: (p) => num(p.revenue) },
      { name: 'currency', type: 'string', description: 'Currency of the revenue.', read: (p) => str(p.currency) },
      { name: 'origin', type: 'string', description: 'tracker, api or import.', read: (p) => p.origin ?? 'api' },
      { name: 'email_domain', type: 'string', description: 'Domain of the converter\'s email (the address itself is not offered).', read: (p) => domainOf(p.email) },
    ],
    link: (p) => `/v1/contacts/${p.conversion_id}`,
    sample: {
      conversion_id: SAMPLE_ID, website_id: SAMPLE_ID, workspace_id: SAMPLE_ID, identity_id: null, anonymous_id: null, email: null, phone: null,
      event_type: 'purchase', event_name: 'Sample order', occurred_at: SAMPLE_AT, revenue: 49.9, currency: null, properties: {}, origin: 'api',
    },
  },
  'conversion.value_changed': {
    type: 'conversion.value_changed',
    description: 'A conversion\'s sales value, quote value or currency was written back (PATCH /contacts).',
    amount: { field: 'sales_value', currency: 'currency' },
    fields: [
      { name: 'sales_value', type: 'number', money: true, description: 'Sales value after the change.', read: (p) => num(p.sales_value) },
      { name: 'quote_value', type: 'number', money: true, description: 'Quote value after the change.', read: (p) => num(p.quote_value) },
      { name: 'currency', type: 'string', description: 'Currency after the change.', read: (p) => str(p.currency) },
      { name: 'changed', type: 'string', description: 'The fields that changed, comma-separated.', read: (p) => p.changes.map((c) => c.field).join(',') },
    ],
    link: (p) => `/v1/contacts/${p.conversion_id}`,
    sample: {
      conversion_id: SAMPLE_ID, website_id: SAMPLE_ID, workspace_id: SAMPLE_ID, identity_id: null, changed_at: SAMPLE_AT, conversion_occurred_at: SAMPLE_AT,
      sales_value: 12000, quote_value: null, currency: null, changes: [{ field: 'sales_value', old_value: null, new_value: 12000 }],
    },
  },
  'stage.changed': {
    type: 'stage.changed',
    description: 'A contact\'s status, lead status or lifecycle stage changed (PATCH /contacts or the CRM).',
    fields: [
      { name: 'status', type: 'string', description: 'Status after the change.', read: (p) => newValue(p.changes, 'status') },
      { name: 'old_status', type: 'string', description: 'Status before the change.', read: (p) => oldValue(p.changes, 'status') },
      { name: 'lead_status_raw', type: 'string', description: 'Lead status after the change.', read: (p) => newValue(p.changes, 'lead_status_raw') },
      { name: 'lifecycle_stage_raw', type: 'string', description: 'Lifecycle stage after the change.', read: (p) => newValue(p.changes, 'lifecycle_stage_raw') },
    ],
    link: (p) => `/v1/contacts/${p.conversion_id}`,
    sample: {
      conversion_id: SAMPLE_ID, website_id: SAMPLE_ID, workspace_id: SAMPLE_ID, identity_id: null, changed_at: SAMPLE_AT, subject: 'contact',
      changes: [{ field: 'status', old_value: 'lead', new_value: 'customer' }],
    },
  },
  'milestone.reached': {
    type: 'milestone.reached',
    description: 'A CRM milestone was reached (a lifecycle stage, deal created or won, ...).',
    amount: { field: 'amount', currency: 'currency' },
    fields: [
      { name: 'stage', type: 'string', description: 'Stage key (deal_won, mql, ...).', read: (p) => p.stage },
      { name: 'stage_raw', type: 'string', description: 'Stage as the CRM names it.', read: (p) => str(p.stage_raw) },
      { name: 'subject', type: 'string', description: 'contact or deal.', read: (p) => str(p.subject) },
      { name: 'amount', type: 'number', money: true, description: 'Amount, when the milestone has one.', read: (p) => num(p.amount) },
      { name: 'currency', type: 'string', description: 'Currency of the amount.', read: (p) => str(p.currency) },
    ],
    link: (p) => (p.deal_id ? `/v1/deals/${p.deal_id}/journey` : p.conversion_id ? `/v1/contacts/${p.conversion_id}` : `/v1/metrics?metrics=milestones&stages=${encodeURIComponent(p.stage)}`),
    sample: { milestone_id: SAMPLE_ID, website_id: SAMPLE_ID, workspace_id: SAMPLE_ID, stage: 'mql', occurred_at: SAMPLE_AT, subject: 'contact' },
  },
  'deal.created': {
    type: 'deal.created',
    description: 'A deal appeared in the connected CRM (or an import).',
    amount: { field: 'amount', currency: 'currency' },
    fields: dealFields<'deal.created'>(),
    link: (p) => `/v1/deals/${p.deal_id}/journey`,
    sample: { ...dealSample, bucket: 'open', stage_name: 'Appointment scheduled', stage_id: 'appointmentscheduled' },
  },
  'deal.stage_changed': {
    type: 'deal.stage_changed',
    description: 'A deal moved to another stage (bucket won: a deal won).',
    amount: { field: 'amount', currency: 'currency' },
    fields: [
      ...dealFields<'deal.stage_changed'>(),
      { name: 'old_bucket', type: 'string', description: 'Normalized stage before the change.', read: (p) => p.old_bucket },
      { name: 'old_stage_name', type: 'string', description: 'Stage before the change.', read: (p) => str(p.old_stage_name) },
    ],
    link: (p) => `/v1/deals/${p.deal_id}/journey`,
    sample: { ...dealSample, old_bucket: 'open', old_stage_name: 'Contract sent', old_stage_id: 'contractsent' },
  },
};

export const CATALOG_TYPES = Object.keys(EVENT_CATALOG) as CatalogType[];

export function isCatalogType(value: string): value is CatalogType {
  return Object.prototype.hasOwnProperty.call(EVENT_CATALOG, value);
}

/** A field's value in a payload; `properties.<key>` reads a conversion's free-form properties. */
export function readField(type: CatalogType, payload: unknown, field: string): FieldValue | undefined {
  if (field.startsWith('properties.')) {
    const props = (payload as { properties?: Record<string, unknown> }).properties;
    const value = props?.[field.slice('properties.'.length)];
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : value === undefined ? undefined : null;
  }
  const def = (EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]).find((f) => f.name === field);
  return def ? def.read(payload as never) : undefined;
}

/** Every catalog field of an event, for templates. */
export function eventFields(type: CatalogType, payload: unknown): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const def of EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]) out[def.name] = def.read(payload as never) ?? null;
  return out;
}

export function fieldTypeOf(type: CatalogType, field: string): FieldType | 'any' | null {
  if (type === 'conversion.created' && /^properties\.[A-Za-z0-9_.-]{1,100}$/.test(field)) return 'any';
  return (EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]).find((f) => f.name === field)?.type ?? null;
}

export function fieldNames(type: CatalogType): string[] {
  return (EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]).map((f) => f.name);
}

export function linkOf(type: CatalogType, payload: unknown): string {
  return (EVENT_CATALOG[type].link as (p: unknown) => string)(payload);
}

/** The catalog as GET /automations meta.event_catalog shows it. */
export function eventCatalogView(): { type: string; description: string; fields: { name: string; type: FieldType; description: string }[] }[] {
  return CATALOG_TYPES.map((type) => ({
    type,
    description: EVENT_CATALOG[type].description,
    fields: [
      ...(EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]).map(({ name, type: t, description }) => ({ name, type: t, description })),
      ...(type === 'conversion.created' ? [{ name: 'properties.<key>', type: 'string' as const, description: 'A free-form property sent with the conversion.' }] : []),
    ],
  }));
}

/** The fields of a type that hold amounts. */
export function moneyFields(type: CatalogType): string[] {
  return (EVENT_CATALOG[type].fields as FieldDef<CatalogType>[]).filter((f) => f.money).map((f) => f.name);
}
