// Funnel definitions (CRUD) and their computed steps and breakdowns.
import { ATTRIBUTION_MODEL_NAMES, DEFAULT_ATTRIBUTION_MODEL, DEFAULT_LOOKBACK_DAYS, MAX_ATTRIBUTION_MODELS } from '../registry/attribution';
import { TOUCH_DIMENSIONS } from '../registry/dimensions';
import { LIMITS, MAX_WINDOW_DAYS } from '../registry/limits';
import { operation } from './operation';
import { excludeDirectParam, idempotencyKeyHeader, idParam, limitParam, listParam, windowParams } from './parameters';
import { enumOf, listOf, one, ref } from './refs';
import { MAX_FUNNELS_PER_WEBSITE } from './schemas-funnels';
import type { PathItemObject } from './types';

const STEP_RULES = 'Steps are validated, not stored as written: a matcher that can never match is 400 invalid-request naming the step (an event_type matching no recorded type, a path or URL pattern that cannot match any path or URL, a name or click-text matcher on an event type that has none, an unknown revenue_event; `allowed` lists the valid values where the set is fixed). Mixing behavioural and revenue steps under scope=user is 400 unsupported-combination (revenue is keyed by identity, web signups by anonymous id, so the funnel would collapse to zero after the first step); so are revenue steps under step_order=strict, and a session filter on a funnel whose first step is a revenue step. Each write appears in the change feed (funnel.created, funnel.updated, funnel.deleted) with source api:<key_id>.';

const STAGES_NOTE = 'Stage-to-stage conversion (the earlier meaning of /funnels) is GET /metrics?metrics=milestones&stages=<a>,<b>,...: stage counts there are not a cohort, so a step rate above 100% is possible.';

/** Which way a read was answered (the answer is the same either way). */
const COMPUTED_FROM = '`meta.computed_from` says how it was answered: `read_model` (the funnel\'s precomputed attempts) or `events` (from the raw events, while the funnel\'s read_model is building); the answer is the same.';
const COUNTING = 'A person enters at an event matching the first step inside the period (and the audience filter); each later step must be matched by a later event (events of the same millisecond count in step order), each event filling at most one step, all within window_days of the entry, possibly after the period ends. Of a person\'s attempts (one per entering event) the one reaching the furthest step counts; its step times give the medians.';

export const funnelPaths: Record<string, PathItemObject> = {
  '/funnels': {
    get: operation({
      operationId: 'listFunnels', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true,
      summary: 'List funnel definitions',
      description: `One row per funnel definition of the website (oldest first): steps, scope, ordering rule, time window (window_days) and audience filter. A website keeps at most ${MAX_FUNNELS_PER_WEBSITE} funnels. ${STAGES_NOTE}`,
      ok: { description: 'Funnels.', schema: listOf(ref('Funnel'), false) },
    }),
    post: operation({
      operationId: 'createFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:write', website: true,
      summary: 'Create a funnel',
      description: `${STEP_RULES} A website holding ${MAX_FUNNELS_PER_WEBSITE} funnels already is 409 conflict. A retry with the same Idempotency-Key returns the funnel it created and creates nothing more.`,
      parameters: [idempotencyKeyHeader('Recommended: a retried POST without one creates a second funnel.')],
      requestBody: { schema: ref('FunnelCreate') },
      ok: { description: 'The created funnel.', schema: one(ref('Funnel')) },
      errors: ['unsupported-combination', 'conflict'],
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
      description: `Send only the fields being changed. Supplying steps deliberately replaces what the funnel means; it is not merged. The funnel as it would be after the change is validated as a whole. A change that changes nothing writes nothing and emits no change. ${STEP_RULES}`,
      parameters: [idParam('funnel', true)],
      requestBody: { schema: ref('FunnelPatch') },
      ok: { description: 'The updated funnel.', schema: one(ref('Funnel')) },
      errors: ['unsupported-combination'],
    }),
    delete: operation({
      operationId: 'deleteFunnel', tag: 'Funnels', service: 'funnels', scope: 'funnels:write', website: true,
      summary: 'Delete a funnel',
      description: 'Permanent; there is no archive. Afterwards the id is 404 not-found.',
      parameters: [idParam('funnel', true)],
      ok: { description: 'Deleted.', schema: ref('Deleted') },
    }),
  },
  '/funnels/{id}/steps': {
    get: operation({
      operationId: 'getFunnelSteps', tag: 'Funnels', service: 'funnels', scope: 'funnels:read', website: true, analytics: true,
      summary: 'Compute a funnel\'s steps',
      description: `One row per step: reached (people who satisfied this and every earlier step, never increasing), conv_vs_prev, conv_vs_first and the median time from the previous step. ${COUNTING} People who entered near the end of the period may still be inside their window. ${COMPUTED_FROM} ${STAGES_NOTE}`,
      parameters: [
        idParam('funnel', true),
        ...windowParams,
        {
          name: 'compare_days', in: 'query',
          description: `previous: also compute the immediately preceding window of equal length. A number N: also compute the window shifted back N days (1 to ${MAX_WINDOW_DAYS}; more is 400 invalid-request). Lengths and shifts are local calendar days of the website timezone, so across a daylight-saving change a day still runs midnight to midnight (a window that is not whole days is compared with one of equal local wall-clock length). The comparison is returned in \`previous\`.`,
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
      description: `One row per dimension value. Credit for entering and completing is distributed across the values of the touches (sessions) a person had in the ${DEFAULT_LOOKBACK_DAYS} days up to entering the funnel, per attribution model; under linear, u_shaped (position-based) and time_decay the counts are fractional. Values beyond \`limit\` fold into one \`Other\` row, so every model's rows add up to \`totals\`. ${COUNTING} ${COMPUTED_FROM}`,
      parameters: [
        idParam('funnel', true),
        ...windowParams,
        { name: 'dimension', in: 'query', description: 'Session (touch) dimension to break down by.', schema: { ...enumOf(TOUCH_DIMENSIONS), default: 'channel' }, 'x-sightline-error-kind': 'unknown-dimension' },
        listParam('models', `One attribution model or up to ${MAX_ATTRIBUTION_MODELS} comma-separated; default ${DEFAULT_ATTRIBUTION_MODEL}. With several, each row nests one object per model. markov and shapley credit channels, so they need dimension=channel (400 unsupported-combination otherwise): each credits entering and completing as its own outcome over the entered people's journeys (completing: people who completed convert, those who entered and did not are the non-converting journeys; entering: every entered journey converts). Under markov the two are normalised separately, so a row's completed can exceed its entered and its conversion_rate exceed 1; under shapley and the rule models completed ≤ entered. A column nobody with a touch reached (no completion, say) is null on every row under markov and shapley, and meta.definitions says why. An unknown model is 400 invalid-request with \`allowed\`.`, enumOf(ATTRIBUTION_MODEL_NAMES), { minItems: 1, maxItems: MAX_ATTRIBUTION_MODELS, default: [DEFAULT_ATTRIBUTION_MODEL], errorKind: 'invalid-request' }),
        excludeDirectParam,
        limitParam(LIMITS.funnel_breakdown, 'dimension values (the rest fold into `Other`)'),
      ],
      ok: { description: 'Rows, totals and meta.', schema: ref('FunnelBreakdownResponse') },
      errors: ['unknown-dimension', 'unsupported-combination', 'invalid-window', 'window-too-large'],
    }),
  },
};
