// Component schemas of automations (alerts), their runs and deliveries.
import { AUTOMATION_RUNS_RETURNED } from '../registry/limits';
import { OPERATOR_NAMES } from '../registry/operators';
import { AUTOMATION_STATUSES, AUTOMATION_TRIGGER_KINDS, DELIVERY_CHANNELS, PACING_MODES } from '../registry/vocabulary';
import { dateTime, enumOf, nullable, ref } from './refs';
import type { Schema } from './types';

const str = { type: 'string' } as const;

const delivery: Schema = {
  type: 'object',
  required: ['channel', 'to'],
  properties: {
    channel: { ...enumOf(DELIVERY_CHANNELS), description: 'email, or chat: a channel of a chat workspace connected in the app.' },
    to: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', minLength: 1 }, description: 'Email addresses, or chat channel ids.' },
  },
  additionalProperties: false,
};

export const automationSchemas: Record<string, Schema> = {
  AutomationSpec: {
    type: 'object',
    required: ['version', 'trigger', 'deliver'],
    properties: {
      version: { type: 'integer', minimum: 1 },
      trigger: {
        type: 'object',
        required: ['kind'],
        properties: {
          kind: enumOf(AUTOMATION_TRIGGER_KINDS),
          events: { type: 'array', minItems: 1, items: str, description: 'kind=event: event types from the catalog in GET /automations meta.' },
          cron: { type: 'string', description: 'kind=schedule or threshold: when to run or evaluate, a 5-field cron expression in the workspace timezone.' },
        },
        allOf: [
          { if: { properties: { kind: { const: 'event' } } }, then: { required: ['events'] } },
          { if: { properties: { kind: { enum: ['schedule', 'threshold'] } } }, then: { required: ['cron'] } },
        ],
        additionalProperties: true,
      },
      filters: {
        type: 'array',
        items: {
          type: 'object',
          required: ['field', 'op', 'values'],
          properties: { field: str, op: enumOf(OPERATOR_NAMES), values: { type: 'array', items: str } },
          additionalProperties: false,
        },
      },
      gather: { type: 'object', additionalProperties: true, description: 'Numbers to gather (metric queries); shape owned by the automations service.' },
      condition: { type: 'object', additionalProperties: true, description: 'Numeric condition over gathered numbers; required for kind=threshold.' },
      compose: {
        type: 'object',
        properties: { template: str, ai: { type: 'boolean', default: false } },
        additionalProperties: false,
      },
      deliver: { type: 'array', minItems: 1, items: delivery },
      pacing: {
        type: 'object',
        required: ['mode'],
        properties: { mode: { ...enumOf(PACING_MODES), description: 'each: one message per trigger. hourly, daily: at most one digest per hour or day.' } },
        additionalProperties: true,
      },
    },
    additionalProperties: false,
  },
  Automation: {
    type: 'object',
    required: ['id', 'name', 'template_id', 'status', 'spec'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: str,
      template_id: nullable(str),
      status: enumOf(AUTOMATION_STATUSES),
      spec: ref('AutomationSpec'),
      created_at: dateTime,
      updated_at: dateTime,
    },
    additionalProperties: true,
  },
  AutomationRun: {
    type: 'object',
    required: ['id', 'started_at', 'status', 'test', 'deliveries'],
    properties: {
      id: str,
      started_at: dateTime,
      finished_at: nullable(dateTime),
      status: enumOf(['queued', 'running', 'sent', 'skipped', 'failed']),
      test: { type: 'boolean' },
      trigger: { type: 'string', description: 'What started it: an event type, schedule, or manual.' },
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['channel', 'to', 'status'],
          properties: {
            channel: enumOf(DELIVERY_CHANNELS),
            to: str,
            status: enumOf(['queued', 'sent', 'failed']),
            error: nullable(str),
            sent_at: nullable(dateTime),
          },
          additionalProperties: true,
        },
      },
    },
    additionalProperties: true,
  },
  AutomationDetail: {
    allOf: [ref('Automation')],
    type: 'object',
    required: ['runs'],
    properties: { runs: { type: 'array', maxItems: AUTOMATION_RUNS_RETURNED, items: ref('AutomationRun'), description: `The last ${AUTOMATION_RUNS_RETURNED} runs, newest first.` } },
    additionalProperties: true,
  },
  AutomationCreate: {
    type: 'object',
    description: 'name plus a template_id, a spec, or both (a spec given with a template replaces the template\'s starter spec). A new alert starts active (decided).',
    required: ['name'],
    anyOf: [{ required: ['template_id'] }, { required: ['spec'] }],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      template_id: { type: 'string', minLength: 1 },
      spec: ref('AutomationSpec'),
    },
    additionalProperties: false,
  },
  AutomationPatch: {
    type: 'object',
    minProperties: 1,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      spec: { ...ref('AutomationSpec'), description: 'The whole spec, replacing the old one.' },
      status: enumOf(AUTOMATION_STATUSES),
    },
    additionalProperties: false,
  },
  AutomationListResponse: {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: ref('Automation') },
      meta: {
        allOf: [ref('Meta')],
        type: 'object',
        properties: {
          event_catalog: {
            type: 'array',
            items: { type: 'object', required: ['type', 'description'], properties: { type: str, description: str }, additionalProperties: true },
          },
          templates: {
            type: 'array',
            items: { type: 'object', required: ['id', 'name'], properties: { id: str, name: str, description: str, spec: ref('AutomationSpec') }, additionalProperties: true },
          },
        },
        required: ['event_catalog', 'templates'],
      },
    },
    additionalProperties: true,
  },
  AutomationRunResult: {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        type: 'object',
        required: ['run_id', 'test', 'queued'],
        properties: {
          run_id: str,
          test: { type: 'boolean' },
          queued: { type: 'array', items: delivery, description: 'Where the message was queued.' },
        },
        additionalProperties: true,
      },
    },
    additionalProperties: true,
  },
};
