// Component schemas of CRM mirrors (deals, pipelines, companies) and of the change feed.
import { CHANGE_TYPES, DEAL_ATTRIBUTION_BASES, STAGE_BUCKETS } from '../registry/vocabulary';
import { currencyCode, dateTime, enumOf, money, nullable, ref } from './refs';
import type { Schema } from './types';

const str = { type: 'string' } as const;

const stage: Schema = {
  type: 'object',
  required: ['name', 'normalized_bucket'],
  properties: {
    id: str,
    name: { type: 'string', description: 'Customer-chosen stage name; rely on normalized_bucket instead.' },
    normalized_bucket: enumOf(STAGE_BUCKETS),
  },
  additionalProperties: true,
};

export const crmSchemas: Record<string, Schema> = {
  Deal: {
    type: 'object',
    required: ['id', 'name', 'stage'],
    properties: {
      id: { type: 'string', format: 'uuid', description: 'Stable Sightline id of the deal (the same in deal.* changes and GET /deals/{id}/journey).' },
      crm_id: { type: 'string', description: 'Id of the deal in the CRM.' },
      provider: { type: 'string', description: 'Where the deal comes from: the CRM (e.g. hubspot), or import.' },
      name: str,
      amount: nullable(money),
      currency: nullable(currencyCode),
      stage,
      pipeline: nullable({ type: 'string', description: 'Id of the pipeline (as in GET /pipelines).' }),
      pipeline_name: nullable(str),
      company_id: nullable({ type: 'string', format: 'uuid', description: 'Id of the deal\'s company (as in GET /companies).' }),
      crm_contact_ids: { type: 'array', items: str, description: 'Ids of the deal\'s contacts in the CRM.' },
      contact_ids: {
        ...nullable({ type: 'array', items: { type: 'string', format: 'uuid' } }),
        description: 'Ids of Sightline contacts (GET /contacts/{id}; one per conversion) whose email is the email of one of the deal\'s CRM contacts, newest first, at most 100. Null when attribution could not be reached.',
      },
      first_touch: { ...nullable(ref('Touch')), description: 'Computed: the earliest session of the deal\'s people at or before the deal was created.' },
      last_touch: { ...nullable(ref('Touch')), description: 'Computed: the latest session of the deal\'s people at or before the deal was created.' },
      attribution_basis: {
        ...nullable(enumOf(DEAL_ATTRIBUTION_BASES)),
        description: 'sessions: touches from browsing history; stored_touches: from the touches stored with imported contacts (no browsing history); no_touch_before_deal: people found, none with a touch before the deal; no_matching_contact: no Sightline contact has the deal contacts\' emails; no_contacts: the deal has no contact with an email. Null when attribution could not be reached.',
      },
      created_at: dateTime,
      closed_at: nullable(dateTime),
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  DealsResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: ref('Deal') },
      next_cursor: { type: 'string', description: 'Cursor of the next page; absent on the last page.' },
      meta: {
        allOf: [ref('Meta')],
        type: 'object',
        required: ['has_more', 'attribution_available'],
        properties: {
          has_more: { type: 'boolean' },
          attribution_available: { type: 'boolean', description: 'False when attribution could not be reached: the rows are listed without their computed fields (null), and meta.note says so.' },
          note: { type: 'string' },
        },
      },
    },
    additionalProperties: true,
  },
  Pipeline: {
    type: 'object',
    required: ['id', 'name', 'stages'],
    properties: {
      id: str,
      name: str,
      provider: { type: 'string', description: 'The CRM (e.g. hubspot), or import.' },
      stages: {
        type: 'array',
        description: 'In pipeline order.',
        items: { ...stage, properties: { ...(stage['properties'] as Record<string, Schema>), position: { type: 'integer', minimum: 0 } } },
      },
    },
    additionalProperties: true,
  },
  PipelinesResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: ref('Pipeline') },
      meta: {
        allOf: [ref('Meta')],
        type: 'object',
        required: ['stage_vocabulary'],
        properties: {
          stage_vocabulary: {
            type: 'array',
            items: { type: 'string' },
            description: 'Stage keys this CRM data gives to stages= on /metrics and /paths: deal_created, deal_won, deal_lost and the contact lifecycle stages in use (keyed: lower case, non-alphanumerics as _), sorted.',
          },
        },
      },
    },
    additionalProperties: true,
  },
  Company: {
    type: 'object',
    required: ['id', 'name'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      crm_id: str,
      provider: { type: 'string', description: 'The CRM (e.g. hubspot), or import.' },
      name: str,
      domain: nullable(str),
      lifecycle_stage: nullable(str),
      people_count: { type: 'integer', minimum: 0, description: 'CRM contacts of the company in the mirror.' },
      created_at: dateTime,
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  Change: {
    type: 'object',
    required: ['id', 'type', 'source', 'occurred_at', 'recorded_at', 'data'],
    properties: {
      id: { type: 'string', description: 'Unique per change; a redelivered write never appears twice.' },
      type: { type: 'string', description: `Change type, for example ${CHANGE_TYPES.slice(0, 4).join(', ')}. Clients ignore types they do not know.` },
      source: { type: 'string', description: 'api:<key_id> for writes made with an API key; skip those you made yourself.' },
      occurred_at: dateTime,
      recorded_at: { type: 'string', format: 'date-time', description: 'When the change entered the feed; the feed is ordered by it, and since filters on it.' },
      object_type: enumOf(['contact', 'deal', 'funnel', 'automation']),
      object_id: str,
      data: { type: 'object', additionalProperties: true, description: 'Type-specific details, e.g. old and new value.' },
    },
    additionalProperties: true,
  },
  ChangesResponse: {
    type: 'object',
    required: ['changes', 'next_cursor', 'meta'],
    properties: {
      changes: { type: 'array', items: ref('Change'), description: 'Newest first.' },
      next_cursor: { type: 'string', description: 'Always present: while meta.has_more is true it fetches the next page; when false, it is the cursor the next run starts from (only newer changes).' },
      meta: { allOf: [ref('Meta')], type: 'object', required: ['has_more'], properties: { has_more: { type: 'boolean' } } },
    },
    additionalProperties: true,
  },
};
