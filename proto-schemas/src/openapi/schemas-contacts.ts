// Component schemas of contacts, journeys and inbound events.
import { MAX_EVENTS_PER_BATCH } from '../registry/limits';
import { STAGE_BUCKETS } from '../registry/vocabulary';
import { currencyCode, dateTime, enumOf, money, nullable, ref } from './refs';
import type { Schema } from './types';

const str = { type: 'string' } as const;

const INBOUND_EVENT_EXAMPLE = {
  event_type: 'purchase',
  event_name: 'order_completed',
  occurred_at: '2026-03-02T14:05:00Z',
  email: 'ada@example.com',
  anonymous_id: '5f1c2a9e-6d1b-4c57-9a0e-2b7d8c3e4f10',
  revenue: 129.9,
  currency: 'EUR',
  properties: { order_id: 'A-1042' },
};

/** Fields PATCH accepts; everything else on a contact is read-only. */
export const CONTACT_WRITABLE_FIELDS = [
  'status', 'sales_value', 'quote_value', 'currency', 'notes', 'lead_status_raw', 'lifecycle_stage_raw', 'is_spam',
] as const;

const contactProperties: Record<string, Schema> = {
  id: { type: 'string', format: 'uuid' },
  identity_id: { type: 'string', description: 'The person; group by it to count people rather than conversions.' },
  type: str,
  event_name: nullable(str),
  occurred_at: dateTime,
  email: nullable({ type: 'string', description: 'Masked (`j***@example.com`) without pii:read.' }),
  phone: nullable({ type: 'string', description: 'Masked without pii:read.' }),
  name: nullable({ type: 'string', description: 'Masked without pii:read.' }),
  status: nullable(str),
  sales_value: nullable(money),
  quote_value: nullable(money),
  currency: nullable(currencyCode),
  notes: nullable(str),
  lead_status_raw: nullable(str),
  lifecycle_stage_raw: nullable(str),
  is_spam: { type: 'boolean' },
  first_touch: { ...nullable(ref('Touch')), description: 'Computed; read-only.' },
  last_touch: { ...nullable(ref('Touch')), description: 'Computed; read-only.' },
  created_at: dateTime,
  updated_at: dateTime,
};

export const contactSchemas: Record<string, Schema> = {
  Contact: {
    type: 'object',
    description: 'One conversion (not one person).',
    required: ['id', 'identity_id', 'type', 'occurred_at', 'is_spam'],
    properties: contactProperties,
    additionalProperties: true,
  },
  ContactDetail: {
    allOf: [ref('Contact')],
    type: 'object',
    properties: {
      deals: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'name', 'stage'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            name: str,
            amount: nullable(money),
            currency: nullable(currencyCode),
            stage: { type: 'object', required: ['name', 'normalized_bucket'], properties: { name: str, normalized_bucket: enumOf(STAGE_BUCKETS) }, additionalProperties: true },
          },
          additionalProperties: true,
        },
      },
      value_history: {
        type: 'array',
        description: 'Every change of sales_value or quote_value, oldest first.',
        items: {
          type: 'object',
          required: ['field', 'old_value', 'new_value', 'reason', 'source', 'changed_at'],
          properties: {
            field: enumOf(['sales_value', 'quote_value', 'currency']),
            old_value: nullable({ type: ['number', 'string'] }),
            new_value: nullable({ type: ['number', 'string'] }),
            reason: str,
            source: { type: 'string', description: 'System that made the change, e.g. api:<key_id>, crm:hubspot, import.' },
            changed_at: dateTime,
          },
          additionalProperties: true,
        },
      },
      writeback: {
        type: 'array',
        description: 'Where the write-back of the latest outcome change stands at each destination: the connected CRM, and the Google Ads / Meta offline conversion uploads (only those the change concerned). One entry per destination, latest request first wins; empty until a change was written through PATCH. Updated asynchronously: the PATCH answer still shows the previous state.',
        items: {
          type: 'object',
          required: ['target', 'status', 'detail', 'attempts', 'request_id', 'requested_at', 'updated_at'],
          properties: {
            target: enumOf(['crm', 'google_ads', 'meta_ads', 'linkedin_ads'], 'crm: the website\'s connected CRM; google_ads / meta_ads / linkedin_ads: offline conversion upload.'),
            status: enumOf(
              ['pending', 'done', 'failed', 'dead', 'skipped'],
              'pending: queued; done: written; failed: the last attempt failed and another is scheduled (next_attempt_at); dead: given up (an operator can retry it); skipped: deliberately not written, `detail` says why (for example "no CRM connected").',
            ),
            detail: { ...nullable(str), description: 'What was written, the last error, or why it was skipped.' },
            attempts: { type: 'integer', minimum: 0 },
            external_id: { ...nullable(str), description: 'The destination\'s id of what was written (the CRM record id), when known.' },
            next_attempt_at: nullable(dateTime),
            request_id: { type: 'string', format: 'uuid' },
            requested_at: { ...dateTime, description: 'When the outcome change was made.' },
            updated_at: dateTime,
          },
          additionalProperties: true,
        },
      },
    },
    required: ['deals', 'value_history', 'writeback'],
    additionalProperties: true,
  },
  ContactPatch: {
    type: 'object',
    description: 'Outcome fields to set. Only these fields are accepted: sending a computed field (attribution, identity, email, ...) is 400 invalid-request listing the writable fields in `allowed`, and nothing is written. null clears a value. An empty object changes nothing.',
    properties: {
      status: { type: 'string', maxLength: 100, description: 'Free string chosen by the client.' },
      sales_value: nullable({ ...money, minimum: 0 }),
      quote_value: nullable({ ...money, minimum: 0 }),
      currency: currencyCode,
      notes: nullable({ type: 'string', maxLength: 10000 }),
      lead_status_raw: nullable({ type: 'string', maxLength: 200 }),
      lifecycle_stage_raw: nullable({ type: 'string', maxLength: 200 }),
      is_spam: { type: 'boolean' },
    },
    // propertyNames fails first, as an enum, so the problem lists the writable fields in `allowed`.
    propertyNames: { enum: [...CONTACT_WRITABLE_FIELDS] },
    additionalProperties: false,
    examples: [{ status: 'won', sales_value: 12000, currency: 'EUR', notes: null }],
  },
  JourneySession: {
    type: 'object',
    description: 'One session of the timeline, devices already merged through the identity graph.',
    required: ['started_at', 'channel'],
    properties: {
      session_id: nullable(str),
      started_at: dateTime,
      ended_at: nullable(dateTime),
      identity_id: { ...nullable(str), description: 'The person the session belongs to; null in a synthetic timeline of a conversion without an identity.' },
      channel: str,
      source: nullable(str),
      medium: nullable(str),
      campaign: nullable(str),
      referrer_domain: nullable(str),
      landing_page: nullable(str),
      device_type: nullable(str),
      country: nullable(str),
      events: {
        type: 'array',
        description: 'What happened in the session, in order (empty in a synthetic timeline).',
        items: {
          type: 'object',
          required: ['occurred_at', 'event_type'],
          properties: { occurred_at: dateTime, event_type: str, event_name: nullable(str), page: nullable(str), revenue: nullable(money) },
          additionalProperties: true,
        },
      },
    },
    additionalProperties: true,
  },
  JourneyResponse: {
    type: 'object',
    required: ['data', 'meta', 'synthetic'],
    properties: {
      data: { type: 'array', items: ref('JourneySession'), description: 'Sessions, oldest first.' },
      synthetic: { type: 'boolean', description: 'True when no raw events existed and the timeline was rebuilt from stored first and last touch; not a complete history.' },
      people_count: { type: 'integer', minimum: 0, description: 'Company and deal journeys: how many people were merged.' },
      meta: ref('Meta'),
    },
    additionalProperties: true,
  },
  InboundEvent: {
    type: 'object',
    description: 'A server-side event. Needs email, phone or anonymous_id to be attributable; one with none of them is still accepted and recorded, credited to Unattributed (decided: the spec leaves it open, and refusing it would lose a real outcome). An event is rejected (with its index in `errors`, the rest of the batch accepted) when any of its strings, property names included, holds a NUL character or a lone UTF-16 surrogate, when a string given is empty, or when a date is outside what the stores hold: so every accepted event is stored.',
    properties: {
      event_type: { type: 'string', minLength: 1, maxLength: 100, description: '`custom` when omitted. `conversion` and `purchase` record a conversion (a contact row, attributed to the journey of its identity); any other value is behaviour. The tracker sends `pageview`, `outbound`, `form_submit`, `custom` and `identify`.' },
      event_name: { type: 'string', minLength: 1, maxLength: 200 },
      occurred_at: { ...dateTime, description: 'Time of the source event; defaults to receipt time. Historical times are accepted (backfill), from 2000-01-01T00:00:00Z up to 2099-12-31T23:59:59.999Z and at most 10 minutes ahead of the server clock; seconds run 00-59 (a leap second 23:59:60 is refused).' },
      email: { type: 'string', format: 'email', maxLength: 320 },
      phone: { type: 'string', minLength: 1, maxLength: 40 },
      anonymous_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Value of the visitor\'s _sl_aid cookie.' },
      revenue: { type: 'number', description: 'Major currency units.' },
      currency: currencyCode,
      properties: { type: 'object', additionalProperties: true, description: 'Free-form; nested at most 15 levels (the event at most 16): a deeper event is rejected with its index in `errors`, the rest of the batch accepted.' },
    },
    additionalProperties: false,
    examples: [INBOUND_EVENT_EXAMPLE],
  },
  EventsRequest: {
    type: 'object',
    required: ['events'],
    properties: {
      website: { type: 'string', description: 'Domain; same meaning as the website query parameter. Both given and different is 400 invalid-request.' },
      events: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_EVENTS_PER_BATCH,
        description: 'Items are checked one by one by the ingest service (x-sightline-checked-per-item): an item that is not a valid InboundEvent is reported in `errors` with its index, and the rest are accepted. A batch over the maximum is refused whole (400).',
        items: ref('InboundEvent'),
        'x-sightline-checked-per-item': true,
      },
    },
    additionalProperties: false,
    examples: [{ events: [INBOUND_EVENT_EXAMPLE] }],
  },
  EventsResponse: {
    type: 'object',
    required: ['accepted', 'rejected', 'errors'],
    properties: {
      accepted: { type: 'integer', minimum: 0 },
      rejected: { type: 'integer', minimum: 0 },
      errors: {
        type: 'array',
        items: { type: 'object', required: ['index', 'detail'], properties: { index: { type: 'integer', minimum: 0 }, detail: str }, additionalProperties: true },
      },
    },
    additionalProperties: true,
  },
};
