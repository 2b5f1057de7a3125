// Automations (alerts). The spec both lists them as usable by any valid key and says reads need
// automations:read and writes automations:write; we enforce the scopes (the stricter reading).
import { AUTOMATION_RUNS_RETURNED } from '../registry/limits';
import { operation } from './operation';
import { idParam } from './parameters';
import { listOf, one, ref } from './refs';
import type { PathItemObject } from './types';

const SCOPE_NOTE = 'Scope decision: the spec is ambiguous (any valid key vs. automations:read/automations:write); Sightline enforces the scopes. New keys are granted both by default, so this only limits keys deliberately narrowed.';

export const automationPaths: Record<string, PathItemObject> = {
  '/automations': {
    get: operation({
      operationId: 'listAutomations', tag: 'Automations', service: 'automations', scope: 'automations:read', website: true,
      summary: 'List alerts',
      description: `One row per alert; meta carries the event catalog (trigger event types) and the starter templates. ${SCOPE_NOTE}`,
      ok: { description: 'Alerts; meta.event_catalog and meta.templates.', schema: ref('AutomationListResponse') },
    }),
    post: operation({
      operationId: 'createAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Create an alert',
      description: `A new alert starts active (decided). A chat delivery needs a channel of a chat workspace connected in the app; an unknown one is 400 invalid-request. ${SCOPE_NOTE}`,
      requestBody: { schema: ref('AutomationCreate') },
      ok: { description: 'The created alert.', schema: one(ref('Automation')) },
    }),
  },
  '/automations/{id}': {
    get: operation({
      operationId: 'getAutomation', tag: 'Automations', service: 'automations', scope: 'automations:read', website: true,
      summary: 'One alert with its recent runs',
      description: `The alert with its last ${AUTOMATION_RUNS_RETURNED} runs and their deliveries. ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      ok: { description: 'The alert.', schema: one(ref('AutomationDetail')) },
    }),
    patch: operation({
      operationId: 'patchAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Change, pause or resume an alert',
      description: `Any of name, spec (the whole spec, replacing the old one) and status (active or paused: pausing stops triggers, resuming restarts them). ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      requestBody: { schema: ref('AutomationPatch') },
      ok: { description: 'The updated alert.', schema: one(ref('Automation')) },
    }),
    delete: operation({
      operationId: 'deleteAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Delete an alert',
      description: `Permanent; its runs go with it. ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      ok: { description: 'Deleted.', schema: ref('Deleted') },
    }),
  },
  '/automations/{id}/run': {
    post: operation({
      operationId: 'runAutomation', tag: 'Automations', service: 'automations', scope: 'automations:write', website: true,
      summary: 'Run an alert now',
      description: `Builds the alert from the latest data and queues it to its destinations, whatever its status and pacing. test=true marks the message as a test. ${SCOPE_NOTE}`,
      parameters: [idParam('alert', true)],
      requestBody: {
        required: false,
        schema: { type: 'object', properties: { test: { type: 'boolean', default: false } }, additionalProperties: false },
      },
      ok: { description: 'Where the message was queued.', schema: ref('AutomationRunResult') },
    }),
  },
};
