// Component schemas of CRM mirrors (deals, pipelines, companies) and of the change feed.
import { CHANGE_TYPES, STAGE_BUCKETS } from '../registry/vocabulary';
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
      id: { type: 'string', format: 'uuid' },
      crm_id: { type: 'string', description: 'Id of the deal in the CRM.' },
      name: str,
      amount: nullable(money),
      currency: nullable(currencyCode),
      stage,
      pipeline: nullable(str),
      company_id: nullable({ type: 'string', format: 'uuid' }),
      contact_ids: { type: 'array', items: { type: 'string', format: 'uuid' } },
      first_touch: nullable(ref('Touch')),
      last_touch: nullable(ref('Touch')),
      created_at: dateTime,
      closed_at: nullable(dateTime),
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  Pipeline: {
    type: 'object',
    required: ['id', 'name', 'stages'],
    properties: {
      id: str,
      name: str,
      stages: {
        type: 'array',
        description: 'In pipeline order.',
        items: { ...stage, properties: { ...(stage['properties'] as Record<string, Schema>), position: { type: 'integer', minimum: 0 } } },
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
      name: str,
      domain: nullable(str),
      lifecycle_stage: nullable(str),
      people_count: { type: 'integer', minimum: 0 },
      created_at: dateTime,
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  Change: {
    type: 'object',
    required: ['id', 'type', 'source', 'occurred_at'],
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
    required: ['changes', 'meta'],
    properties: {
      changes: { type: 'array', items: ref('Change'), description: 'Newest first.' },
      next_cursor: { type: 'string', description: 'Always present: while meta.has_more is true it fetches the next page; when false, it is the cursor the next run starts from (only newer changes).' },
      meta: { allOf: [ref('Meta')], type: 'object', required: ['has_more'], properties: { has_more: { type: 'boolean' } } },
    },
    additionalProperties: true,
  },
};
