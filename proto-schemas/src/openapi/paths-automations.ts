// Automations (alerts). The spec both lists them as usable by any valid key and says reads need
// automations:read and writes automations:write; we enforce the scopes (the stricter reading).
import { AUTOMATION_RUNS_RETURNED } from '../registry/limits';
import { operation } from './operation';
import { idParam } from './parameters';
import { listOf, one, ref } from './refs';
import { FIGURE_SCOPE_RULE } from './schemas-automations';
import type { PathItemObject } from './types';

/** What a spec that cannot work is refused with (validated as a whole, gather queries included). */
const SPEC_ERRORS = ['unknown-metric', 'unknown-dimension', 'unknown-filter-operator', 'invalid-window', 'window-too-large', 'unsupported-combination'] as const;

/** Issue 24: what an alert gathers is visible only to keys that could read it directly. */
const FIGURES_NOTE = `What an alert's runs contain needs the scopes that read it directly (output_scopes): ${FIGURE_SCOPE_RULE}`;
/** Issue 24: what alert email the operator allows. */
const EMAIL_NOTE = 'Email recipients at an IP address are refused (400 invalid-request); when the operator set SIGHTLINE_ALERT_EMAIL_DOMAINS, so are recipients outside those domains and their subdomains (400 invalid-request, allowed lists the domains). A workspace\'s alerts send at most the operator\'s email budget per UTC hour and per UTC day (default 200 and 1,000): a delivery over it is held (queued, its error says until when), and skipped once held for a day.';

const SCOPE_NOTE = 'Scope decision: the spec is ambiguous (any valid key vs. automations:read/automations:write); Sightline enforces the scopes. New keys are granted both by default, so this only limits keys deliberately narrowed.';

export const automationPaths: Record<string, PathItemObject> = {
  '/automations': {
    get: operation({
      operationId: 'listAutomations', tag: 'Automations', service: 'automations', scope: 'automations:read', website: true,
      summary: 'List alerts',
      description: `One row per alert; meta carries the event catalog (trigger event types) and the starter templates. ${FIGURES_NOTE} ${SCOPE_NOTE}`,
      ok: { description: 'Alerts; meta.event_catalog and meta.templates.', schema: ref('AutomationListResponse') },
    }),
    post: operation({
      operationId: 'createAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Create an alert',
      description: `A new alert starts active (decided) and stores the website's timezone and currency (which default to the workspace's): crons, periods and amounts are read in them. The spec is checked as a whole, gather queries included (each is run once against the current data). A chat delivery needs the Slack workspace connected to this Sightline workspace and channels it has (an unknown channel is 400 invalid-request); ai: true needs a model configured by the operator. ${FIGURES_NOTE} ${EMAIL_NOTE} ${SCOPE_NOTE}`,
      requestBody: { schema: ref('AutomationCreate') },
      errors: [...SPEC_ERRORS, 'conflict'],
      ok: { description: 'The created alert.', schema: one(ref('Automation')) },
    }),
  },
  '/automations/{id}': {
    get: operation({
      operationId: 'getAutomation', tag: 'Automations', service: 'automations', scope: 'automations:read', website: true,
      summary: 'One alert with its recent runs',
      description: `The alert with its last ${AUTOMATION_RUNS_RETURNED} runs and their deliveries. ${FIGURES_NOTE} ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      ok: { description: 'The alert.', schema: one(ref('AutomationDetail')) },
    }),
    patch: operation({
      operationId: 'patchAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Change, pause or resume an alert',
      description: `Any of name, spec (the whole spec, replacing the old one) and status (active or paused: a paused alert ignores events and its schedule; resuming restarts from the next cron time, without catching up; messages already queued still go out; setting the status clears status_reason). A threshold alert keeps its state (firing or not) through an edit of recipients, name, template or cron, so nothing is re-sent; a changed gather or condition is evaluated at the next scheduling tick against the kept state: "back to normal" when the condition no longer holds, "Alert" only when it newly holds. A changed trigger kind starts from normal. Resuming an alert whose spec names a deleted funnel is 400 invalid-request. ${FIGURES_NOTE} ${EMAIL_NOTE} ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      requestBody: { schema: ref('AutomationPatch') },
      errors: [...SPEC_ERRORS],
      ok: { description: 'The updated alert.', schema: one(ref('Automation')) },
    }),
    delete: operation({
      operationId: 'deleteAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Delete an alert',
      description: `Permanent; its runs and any deliveries not yet sent go with it. ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      ok: { description: 'Deleted.', schema: ref('Deleted') },
    }),
  },
  '/automations/{id}/run': {
    post: operation({
      operationId: 'runAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Run an alert now',
      description: `Builds the alert's message from the latest data (figures gathered now; for an event alert, the last event that matched it, or the catalog's sample event when none has yet: the message says it is a sample and links to the change feed of that event type) and queues it to every destination, whatever its status and pacing; a threshold alert's state is not changed. test=true marks the message as a test (subject and first line say so). Answers the run id, its status and where it was queued; the run shows in GET /automations/{id} and its end in the change feed (automation.ran). A message that cannot be made (a template past its 64 KiB budget) gives a failed run with a compose_note and nothing queued. Decided: when a funnel the alert gathers from was deleted, the answer is 409 conflict (the alert's spec cannot run as written; the alert is paused with status_reason); the remediation is to choose another funnel with PATCH and set status to active. It sends what the alert gathers to its recipients, so it needs every scope of the alert's output_scopes (403 insufficient-scope naming the missing one). ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      requestBody: {
        required: false,
        schema: { type: 'object', properties: { test: { type: 'boolean', default: false } }, additionalProperties: false },
      },
      errors: ['conflict'],
      ok: { description: 'Where the message was queued.', schema: ref('AutomationRunResult') },
    }),
  },
};
