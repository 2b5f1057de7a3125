// Funnel definitions (CRUD) and their computed steps and breakdowns.
import { ATTRIBUTION_MODEL_NAMES, DEFAULT_ATTRIBUTION_MODEL, MAX_ATTRIBUTION_MODELS } from '../registry/attribution';
import { TOUCH_DIMENSIONS } from '../registry/dimensions';
import { LIMITS, MAX_WINDOW_DAYS } from '../registry/limits';
import { operation } from './operation';
import { idParam, limitParam, listParam, windowParams } from './parameters';
import { enumOf, listOf, one, ref } from './refs';
import type { PathItemObject } from './types';

const STEP_RULES = 'Steps are validated, not stored as written: a matcher that can never match is 400 invalid-request naming the step. Mixing behavioural and revenue steps under scope=user is 400 unsupported-combination (revenue is keyed by identity, web signups by anonymous id, so the funnel would collapse to zero after the first step).';

export const funnelPaths: Record<string, PathItemObject> = {
  '/funnels': {
    get: operation({
      operationId: 'listFunnels', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true,
      summary: 'List funnel definitions',
      description: 'One row per funnel definition of the website: steps, scope, ordering rule, time window (window_days) and audience filter. Stage-to-stage conversion, the earlier meaning of this path, is GET /metrics?metrics=milestones&stages=...',
      ok: { description: 'Funnels.', schema: listOf(ref('Funnel'), false) },
    }),
    post: operation({
      operationId: 'createFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:write', website: true,
      summary: 'Create a funnel',
      description: STEP_RULES,
      requestBody: { schema: ref('FunnelCreate') },
      ok: { description: 'The created funnel.', schema: one(ref('Funnel')) },
      errors: ['unsupported-combination'],
    }),
  },
  '/funnels/{id}': {
    get: operation({
      operationId: 'getFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true,
      summary: 'One funnel definition',
      description: 'The funnel definition.',
      parameters: [idParam('funnel', true)],
      ok: { description: 'The funnel.', schema: one(ref('Funnel')) },
    }),
    patch: operation({
      operationId: 'patchFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:write', website: true,
      summary: 'Change a funnel',
      description: `Send only the fields being changed. Supplying steps deliberately replaces what the funnel means; it is not merged. ${STEP_RULES}`,
      parameters: [idParam('funnel', true)],
      requestBody: { schema: ref('FunnelPatch') },
      ok: { description: 'The updated funnel.', schema: one(ref('Funnel')) },
      errors: ['unsupported-combination'],
    }),
    delete: operation({
      operationId: 'deleteFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:write', website: true,
      summary: 'Delete a funnel',
      description: 'Permanent; there is no archive.',
      parameters: [idParam('funnel', true)],
      ok: { description: 'Deleted.', schema: ref('Deleted') },
    }),
  },
  '/funnels/{id}/steps': {
    get: operation({
      operationId: 'getFunnelSteps', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true, analytics: true,
      summary: 'Compute a funnel\'s steps',
      description: 'One row per step: reached (people who satisfied this and every earlier step, never increasing), conv_vs_prev, conv_vs_first and the median time from the previous step.',
      parameters: [
        idParam('funnel', true),
        ...windowParams,
        {
          name: 'compare_days', in: 'query',
          description: `previous: also compute the immediately preceding window of equal length. A number N: also compute the window shifted back N days (1 to ${MAX_WINDOW_DAYS}). The comparison is returned in \`previous\`.`,
          schema: { type: 'string', pattern: '^(previous|[1-9][0-9]{0,2})$' },
          'x-sightline-error-kind': 'invalid-request',
        },
      ],
      ok: { description: 'Step rows, optional comparison, and meta.', schema: ref('FunnelStepsResponse') },
      errors: ['invalid-window', 'window-too-large'],
    }),
  },
  '/funnels/{id}/breakdown': {
    get: operation({
      operationId: 'getFunnelBreakdown', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true, analytics: true,
      summary: 'Break a funnel down by a touch dimension',
      description: 'One row per dimension value. Credit for entering and completing is distributed across the values a person touched per the attribution model; under linear, u_shaped (position-based) and time_decay the counts are fractional.',
      parameters: [
        idParam('funnel', true),
        ...windowParams,
        { name: 'dimension', in: 'query', description: 'Session (touch) dimension to break down by.', schema: { ...enumOf(TOUCH_DIMENSIONS), default: 'channel' }, 'x-sightline-error-kind': 'unknown-dimension' },
        listParam('models', `One attribution model or up to ${MAX_ATTRIBUTION_MODELS} comma-separated; default ${DEFAULT_ATTRIBUTION_MODEL}. With several, each row nests one object per model.`, enumOf(ATTRIBUTION_MODEL_NAMES), { minItems: 1, maxItems: MAX_ATTRIBUTION_MODELS, default: [DEFAULT_ATTRIBUTION_MODEL], errorKind: 'invalid-request' }),
        limitParam(LIMITS.funnel_breakdown, 'dimension values'),
      ],
      ok: { description: 'Rows and meta.', schema: ref('FunnelBreakdownResponse') },
      errors: ['unknown-dimension', 'invalid-window', 'window-too-large'],
    }),
  },
};
