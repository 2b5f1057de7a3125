// Component schemas of automations (alerts), their runs and deliveries. The shapes the spec leaves
// open (gather, condition, run and delivery fields) are decided here; the automations service checks
// the rest of a spec as a whole (catalog event types, metric names, filter dimensions, a cron that
// fires, connected chat channels, a configured model) and answers each fault with its own kind.
import { AUTOMATION_RUNS_RETURNED } from '../registry/limits';
import {
  AUTOMATION_FILTER_OPS, AUTOMATION_STATUSES, AUTOMATION_TRIGGER_KINDS, CONDITION_CHANGES, CONDITION_COMPARES, CONDITION_OPS,
  DELIVERY_CHANNELS, DELIVERY_STATUSES, PACING_MODES, RUN_STATUSES, RUN_TRIGGERS,
} from '../registry/vocabulary';
import { dateTime, enumOf, nullable, ref } from './refs';
import type { Schema } from './types';

/** What an alert's output needs, said once for the alert schema and the operations. */
export const FIGURE_SCOPE_RULE = 'analytics:read for /metrics figures in gather, funnels:read for a funnel\'s conversion, conversions:read for contact events (conversion.*, stage.changed, milestone.reached), deals:read for deal events, and pii:read when events show contacts\' email, phone and name unmasked (only when the spec was written by a key with pii:read; otherwise they are masked as GET /contacts masks them). Writing such a spec and POST /run need these scopes (403 insufficient-scope naming the missing one); reading the alert without them answers it with those figures redacted.';

const str = { type: 'string' } as const;

const delivery: Schema = {
  type: 'object',
  required: ['channel', 'to'],
  properties: {
    channel: {
      ...enumOf(DELIVERY_CHANNELS),
      description: 'email: one message per address over SMTP. chat: one chat.postMessage per channel of the Slack workspace connected to this Sightline workspace (operators connect it with `sightline automations chat add`).',
    },
    to: {
      type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 254 },
      description: 'Email addresses, or Slack channel ids (C…, G…; the id, not the #name: a channel keeps its id when renamed). A chat channel must exist in the connected workspace; an unknown one is 400 invalid-request.',
    },
  },
  additionalProperties: false,
};

const filter: Schema = {
  type: 'object',
  required: ['field', 'op', 'values'],
  properties: {
    field: { ...str, description: 'A field of the event type, as GET /automations meta.event_catalog lists it (`properties.<key>` reaches a conversion\'s free-form properties).' },
    op: { ...enumOf(AUTOMATION_FILTER_OPS), description: 'eq, ne, contains, not_contains, gt, gte, lt, lte take one value; in and nin one or more. gt..lte compare numeric fields. Text comparisons of eq/ne/in/nin are exact; contains ignores case.' },
    values: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', maxLength: 500 } },
  },
  additionalProperties: false,
};

const gatherQuery: Schema = {
  type: 'object',
  anyOf: [{ required: ['metric'] }, { required: ['funnel'] }],
  description: 'One number: a metric read as GET /metrics would answer it (window totals, no group_by) over the period with the filters; or, with funnel, a funnel\'s conversion over the period (the share of the people who entered it that reached its last step, as GET /funnels/{id}/steps counts them). Its name (the key in gather) is how condition and templates refer to it.',
  properties: {
    metric: { ...str, description: 'A metric of GET /schema that needs no group_by or stages (unknown: 400 unknown-metric listing allowed).' },
    funnel: { type: 'string', format: 'uuid', description: 'Instead of metric: the id of a funnel of the website (an unknown one is 400 invalid-request). Takes no filters. Deleting the funnel pauses the alert (see status_reason).' },
    period: { ...str, description: 'Plain-language period as /metrics takes it, resolved in the website timezone each time the alert runs. Default "last 30 days".' },
    filters: {
      type: 'array', maxItems: 10,
      items: {
        type: 'object',
        required: ['field', 'op', 'values'],
        properties: { field: { ...str, description: 'A filterable dimension of GET /schema.' }, op: str, values: { type: 'array', minItems: 1, items: str } },
        additionalProperties: false,
      },
      description: 'Combined with `and`, as /metrics filter=field:op:value.',
    },
  },
  additionalProperties: false,
};

export const automationSchemas: Record<string, Schema> = {
  AutomationSpec: {
    type: 'object',
    description: 'Validated as a whole: a spec that cannot work is refused with the kind of its fault (invalid-request, unknown-metric, unknown-dimension, unknown-filter-operator, invalid-window, window-too-large, unsupported-combination), with `allowed` for fixed sets.',
    required: ['version', 'trigger', 'deliver'],
    properties: {
      version: { type: 'integer', const: 1 },
      trigger: {
        type: 'object',
        required: ['kind'],
        description: 'event: runs per matching change message (events; see max_age to skip backfills). schedule: runs at each cron time and sends what it gathered. threshold: evaluates the condition at each cron time; sends when it starts to hold and once more ("back to normal") when it stops.',
        properties: {
          kind: enumOf(AUTOMATION_TRIGGER_KINDS),
          events: { type: 'array', minItems: 1, maxItems: 10, items: str, description: 'kind=event: event types from the catalog in GET /automations meta.event_catalog.' },
          cron: {
            ...str,
            description: 'kind=schedule or threshold: 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, in the website timezone (which defaults to the workspace\'s). A cron that never fires is refused. Alerts are evaluated on the scheduler\'s tick (every minute by default), so finer crons are coalesced to it.',
          },
        },
        additionalProperties: false,
      },
      filters: { type: 'array', maxItems: 20, items: filter, description: 'kind=event only: every filter must hold (and).' },
      max_age: {
        type: 'string', pattern: '^[0-9]{1,6}[mhd]$', examples: ['90m', '24h', '7d'],
        description: 'kind=event only: skip events that happened longer ago than this when they arrive (backfilled or imported conversions), as a whole number of minutes (m), hours (h) or days (d), from 1m to 365d. Age is the time since the event\'s occurred_at (changed_at for changes). Default: no limit.',
      },
      gather: {
        type: 'object',
        maxProperties: 10,
        propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
        additionalProperties: gatherQuery,
        description: 'Named numbers to gather, e.g. {"revenue": {"metric": "revenue", "period": "last 7 days"}}. Required for threshold; optional for schedule and event alerts (their message shows them).',
      },
      condition: {
        type: 'object',
        required: ['figure', 'op', 'value'],
        description: 'kind=threshold only. compare=value: holds when the figure op value. compare=previous_period: the figure is also read for the window just before, as long in local calendar days of the website timezone (or local wall-clock time for windows that do not start at midnight), so a daylight-saving change does not shift it by an hour; holds when the change (absolute, or percent of the previous value) op value, e.g. {"figure": "revenue", "compare": "previous_period", "change": "percent", "op": "lte", "value": -20} for revenue down 20% or more. A percent change against a previous value of 0 does not hold (no baseline).',
        properties: {
          figure: { ...str, description: 'A name in gather.' },
          op: enumOf(CONDITION_OPS),
          value: { type: 'number' },
          compare: { ...enumOf(CONDITION_COMPARES), default: 'value' },
          change: { ...enumOf(CONDITION_CHANGES), description: 'compare=previous_period only; default percent.' },
        },
        additionalProperties: false,
      },
      compose: {
        type: 'object',
        properties: {
          template: {
            type: 'string', maxLength: 4000,
            description: 'Mustache template of the message body. Values are escaped for each channel (HTML for email, Slack mrkdwn for chat). It sees alert, website (domain, timezone), trigger, test, event (event alerts: its catalog fields, amount formatted, when it happened in the website timezone as when, title, details), events, count and more (digests: the first 100 events are listed, more counts the rest), figures.<name> (value: formatted in the website currency and timezone; raw; previous; change; comparison; window), condition (threshold: text, holds) and link (the API query behind the message, also appended when the template leaves it out). Sections may nest at most 4 deep (deeper is 400 invalid-request: each repeats once per list item); a rendering stops at 64 KiB of text, and a run whose message would be longer fails with a compose_note saying what to change. Default: a template per trigger kind.',
          },
          subject: { type: 'string', maxLength: 200, description: 'Mustache template of the email subject (the same nesting limit). Default "[Sightline] <alert name>".' },
          ai: { type: 'boolean', default: false, description: 'Write the message with the language model the operator configured (400 when none is). The model gets the alert\'s data as delimited JSON, to be read as data only, and must state every gathered figure verbatim, no other number and no link, in at most 1,000 characters; its text is escaped like any value. Otherwise the template is used and compose_note says why (for a failing model, only "model unavailable (HTTP <status>)": the model\'s own error text is not shown).' },
        },
        additionalProperties: false,
      },
      deliver: { type: 'array', minItems: 1, maxItems: 10, items: delivery },
      pacing: {
        type: 'object',
        required: ['mode'],
        properties: {
          mode: {
            ...enumOf(PACING_MODES),
            description: 'each (default): one message per trigger. hourly, daily: event alerts collect matching events and send one digest per hour or day (website timezone) after the period ends; schedule alerts send at most one message per period. Threshold alerts take each only (their messages are already bounded to the condition starting and stopping to hold).',
          },
        },
        additionalProperties: false,
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
      status: { ...enumOf(AUTOMATION_STATUSES), description: 'active, or paused (by a PATCH, or by the service: see status_reason).' },
      status_reason: nullable({
        ...str,
        description: 'Why the service paused the alert, and what to do; null when the status was set through the API (setting it clears the reason). Decided: deleting a funnel pauses every alert that gathers from it ("funnel <id> was deleted on <date>; choose another funnel in spec.gather and set status to active"); so does a run that finds the funnel gone. Resuming with the deleted funnel still in spec is 400 invalid-request.',
      }),
      spec: ref('AutomationSpec'),
      website_id: str,
      timezone: { ...str, description: 'The website timezone stored at creation: crons and periods are read in it.' },
      currency: { ...str, description: 'The website currency stored at creation: amounts are formatted in it.' },
      state: {
        type: 'object',
        description: 'Threshold alerts: whether the condition holds (firing) and the last evaluation. Schedule and threshold alerts: next_run_at.',
        properties: {
          firing: { type: 'boolean' },
          last_evaluated_at: nullable(dateTime),
          last_value: nullable({ type: 'number', description: 'The figure the condition measured at the last evaluation; null when the key lacks a scope in output_scopes (see redacted).' }),
          next_run_at: nullable(dateTime),
        },
        additionalProperties: true,
      },
      created_at: dateTime,
      updated_at: dateTime,
      output_scopes: {
        type: 'array',
        items: str,
        description: `The scopes a key needs to see what the alert's runs contain, each the scope that reads it directly: ${FIGURE_SCOPE_RULE}`,
      },
      redacted: nullable({
        type: 'object',
        description: 'Set when the key reading the alert lacks one of output_scopes: the fields that could show what it gathered are null here. null when nothing is withheld.',
        required: ['missing_scopes', 'fields'],
        properties: {
          missing_scopes: { type: 'array', items: str, description: 'The scopes of output_scopes the key lacks.' },
          fields: { type: 'array', items: str, description: 'The fields set to null: state.last_value; with runs, runs[].subject, runs[].compose_note and runs[].deliveries[].error.' },
        },
        additionalProperties: false,
      }),
    },
    additionalProperties: true,
  },
  AutomationDelivery: {
    type: 'object',
    required: ['id', 'channel', 'to', 'status'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      channel: enumOf(DELIVERY_CHANNELS),
      to: str,
      status: {
        ...enumOf(DELIVERY_STATUSES),
        description: 'queued (waiting, or waiting to retry after a failure: see attempts, error, next_attempt_at), sending, sent, failed (given up: a permanent error or attempts used up; an operator can retry it), skipped.',
      },
      attempts: { type: 'integer', minimum: 0 },
      error: nullable({
        ...str,
        description: 'Why the last attempt failed, or why the delivery waits (held: over the workspace\'s email budget, until the time it names; skipped: held longer than a day), in Sightline\'s words: a server\'s own text (hosts, addresses) is not shown. null when the key lacks a scope of the alert\'s output_scopes.',
      }),
      next_attempt_at: nullable(dateTime),
      sent_at: nullable(dateTime),
    },
    additionalProperties: true,
  },
  AutomationRun: {
    type: 'object',
    required: ['id', 'started_at', 'status', 'test', 'trigger', 'deliveries'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      started_at: dateTime,
      finished_at: nullable(dateTime),
      status: { ...enumOf(RUN_STATUSES), description: 'queued while a delivery is queued or sending; sent when every delivery was sent; failed when one failed.' },
      test: { type: 'boolean' },
      trigger: { ...enumOf(RUN_TRIGGERS), description: 'What started it: an event, a digest of events, the schedule, the threshold starting (threshold) or stopping (recovery) to hold, or POST /run (manual).' },
      subject: nullable({ ...str, description: 'The subject of the message (it can show gathered figures): null when the key lacks a scope of the alert\'s output_scopes.' }),
      composed_by: { ...enumOf(['template', 'ai']), description: 'Who wrote the message.' },
      compose_note: nullable({ ...str, description: 'Why the template was used although ai was asked for (the model was unavailable, omitted a figure, stated a number not gathered, wrote a link or too much); or, on a failed run with no deliveries, why the message could not be made (its template repeats past the 64 KiB budget) and what to change.' }),
      link: { ...str, description: 'The API query the message was built from.' },
      deliveries: { type: 'array', items: ref('AutomationDelivery') },
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
    description: 'name plus a template_id, a spec, or both. A template_id alone takes the template\'s starter spec with `deliver` from the body (required then); a spec given with a template replaces the starter spec. A new alert starts active (decided). At most 2,000 alerts per website (decided; more is 409 conflict).',
    required: ['name'],
    anyOf: [{ required: ['template_id'] }, { required: ['spec'] }],
    examples: [{ name: 'Every new conversion', spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['team@example.com'] }] } }],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      template_id: { type: 'string', minLength: 1 },
      spec: ref('AutomationSpec'),
      deliver: { type: 'array', minItems: 1, maxItems: 10, items: delivery, description: 'With template_id and no spec: where the starter spec delivers.' },
    },
    additionalProperties: false,
  },
  AutomationPatch: {
    type: 'object',
    minProperties: 1,
    examples: [{ status: 'paused' }],
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
            items: {
              type: 'object',
              required: ['type', 'description', 'fields'],
              properties: {
                type: str,
                description: str,
                fields: {
                  type: 'array',
                  items: { type: 'object', required: ['name', 'type'], properties: { name: str, type: enumOf(['string', 'number', 'boolean']), description: str }, additionalProperties: true },
                },
              },
              additionalProperties: true,
            },
          },
          templates: {
            type: 'array',
            items: { type: 'object', required: ['id', 'name', 'spec'], properties: { id: str, name: str, description: str, spec: ref('AutomationSpec') }, additionalProperties: true },
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
          run_id: { type: 'string', format: 'uuid' },
          test: { type: 'boolean' },
          status: { ...enumOf(RUN_STATUSES), description: 'queued; or failed when the message could not be made (compose_note says why; nothing was queued).' },
          queued: { type: 'array', items: delivery, description: 'Where the message was queued: one delivery per recipient, grouped by channel (empty when the run failed).' },
          composed_by: enumOf(['template', 'ai']),
          compose_note: nullable(str),
        },
        additionalProperties: true,
      },
    },
    additionalProperties: true,
  },
};
