// The seven public operations. Writes change the definition, record the change message in the
// outbox and (for POST with an Idempotency-Key) keep the reply, all in one transaction: a crash or
// a broker outage can neither half-apply a write nor lose the change it announces. A new funnel, or
// a change to what its attempts depend on, starts a new generation of its read model, built in the
// background; reads answer from the read model once it is ready, from the events until then.
import { createHash, randomUUID } from 'node:crypto';
import { ProblemError, readSwitch, type ClickHouseStore, type Outbox, type RpcMap, type SqlStore } from '@sightline/kit';
import {
  ATTRIBUTION_MODEL_NAMES,
  DATA_DRIVEN_MODEL_NAMES,
  DEFAULT_ATTRIBUTION_MODEL,
  LIMITS,
  MAX_ATTRIBUTION_MODELS,
  MAX_FUNNELS_PER_WEBSITE,
  TOUCH_DIMENSIONS,
  type ApiRequest,
  type ApiResponse,
  type AttributionModelName,
  type FunnelField,
} from '@sightline/proto-schemas';
import { checkDefinition, eventTypeCatalog, FIELDS, readFields, withDefaults, type FunnelDefinition } from './definition';
import { breakdownDefinitions, computeBreakdown } from './breakdown.reads';
import { comparisonWindow, computeSteps, msWindow, stepDefinitions, windowOf, type StepRow, type WindowQuery } from './funnel.reads';
import type { AttemptsRef } from './funnel.sql';
import type { FunnelRow, FunnelsRepo } from './funnels.repo';
import type { ProjectionRepo } from './projection.repo';

export interface FunnelsRpcDeps {
  sql: SqlStore;
  ch: ClickHouseStore;
  repo: FunnelsRepo;
  projection: ProjectionRepo;
  outbox: Outbox<'funnels'>;
  /** The clock of window resolution (tests pin it). */
  now?: () => Date;
  /** A read model generation is waiting to be built. */
  buildWaiting?: () => void;
  /** A funnel was deleted: its attempts may go. */
  deleted?: () => void;
}

type StepsQuery = WindowQuery & { compare_days?: string };
type BreakdownQuery = WindowQuery & { dimension?: string; models?: string[] | string; limit?: number | string; exclude_direct?: boolean | string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function website(request: ApiRequest<unknown>): NonNullable<ApiRequest['website']> {
  if (!request.website) throw new Error(`funnels.${request.operation} needs a resolved website`);
  return request.website;
}

function present(row: FunnelRow) {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    step_order: row.step_order,
    window_days: row.window_days,
    filters: row.filters,
    steps: row.steps,
    read_model: row.read_model,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The stored attempts to read, when the funnel's current generation is built. */
const attemptsOf = (row: FunnelRow): AttemptsRef | null => (row.read_model === 'ready' ? { funnelId: row.id, generation: row.generation } : null);

/** What a funnel's attempts depend on (name, scope and the identified filter are applied when reading). */
const attemptInputs = (d: FunnelDefinition) => ({
  steps: d.steps, step_order: d.step_order, window_days: d.window_days,
  filters: Object.fromEntries(Object.entries(d.filters).filter(([k]) => k !== 'identified')),
});

const definitionOf = (row: FunnelRow): FunnelDefinition => ({
  name: row.name, scope: row.scope, step_order: row.step_order, window_days: row.window_days, filters: row.filters, steps: row.steps,
});

function notFound(id: string): ProblemError {
  return new ProblemError('not-found', {
    detail: `No funnel ${id} on this website.`,
    remediation: 'Check the id (GET /v1/funnels lists the website\'s funnels) and the website it belongs to.',
  });
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  return value;
}

export function funnelsRpcHandlers(deps: FunnelsRpcDeps): RpcMap<'funnels'> {
  const { sql, ch, repo, projection, outbox } = deps;
  const now = deps.now ?? (() => new Date());
  const buildWaiting = deps.buildWaiting ?? (() => undefined);

  const load = async (request: ApiRequest<unknown>): Promise<FunnelRow> => {
    const id = request.params['id'] ?? '';
    const row = UUID.test(id) ? await repo.get(website(request).id, id.toLowerCase()) : null;
    if (!row) throw notFound(id);
    return row;
  };

  const change = (request: ApiRequest<unknown>, type: 'funnel.created' | 'funnel.updated' | 'funnel.deleted', row: FunnelRow, fields: FunnelField[]) => ({
    type,
    source: `api:${request.key.id}`,
    workspace_id: request.workspace.id,
    website_id: row.website_id,
    payload: { funnel_id: row.id, website_id: row.website_id, workspace_id: request.workspace.id, name: row.name, fields, changed_at: row.updated_at.toISOString() },
  });

  const checked = async (definition: FunnelDefinition, websiteId: string): Promise<void> => {
    checkDefinition(definition, eventTypeCatalog(await projection.eventTypes(websiteId)));
  };

  const analyticsMeta = (request: ApiRequest<unknown>, row: FunnelRow, window: ReturnType<typeof windowOf>, extra: Record<string, unknown>) => {
    const site = website(request);
    return {
      website_id: site.id,
      website: site.domain,
      timezone: site.timezone,
      currency: site.currency,
      window,
      funnel: { id: row.id, name: row.name, scope: row.scope, step_order: row.step_order, window_days: row.window_days, filters: row.filters },
      ...extra,
    };
  };

  return {
    'funnels.listFunnels': async (request: ApiRequest): Promise<ApiResponse> => {
      const site = website(request);
      const rows = await repo.list(site.id);
      return {
        status: 200,
        body: { data: rows.map(present), meta: { website_id: site.id, website: site.domain, timezone: site.timezone, currency: site.currency, row_count: rows.length, has_more: false } },
      };
    },

    'funnels.createFunnel': async (request: ApiRequest): Promise<ApiResponse> => {
      const site = website(request);
      const fields = readFields(request.body, false);
      if (!fields.steps) throw new ProblemError('invalid-request', { detail: 'Body field "steps" is required.', remediation: 'Add "steps": 2 to 10 steps, each {"name", "conditions"}.' });
      const definition = withDefaults(fields);
      await checked(definition, site.id);
      const key = request.headers.idempotency_key ?? null;
      const requestHash = createHash('sha256').update(JSON.stringify(canonical(request.body))).digest('hex');
      const reply = await sql.transaction(async (tx): Promise<ApiResponse> => {
        if (key !== null) {
          const stored = await repo.lockIdempotencyKey(tx, request.workspace.id, request.key.id, key);
          if (stored) {
            if (stored.request_hash !== requestHash) {
              throw new ProblemError('conflict', {
                detail: 'This Idempotency-Key was already used with a different request.',
                remediation: 'Use a new Idempotency-Key for a new request; reuse a key only to retry the identical request.',
              });
            }
            return { status: stored.status, body: stored.response, headers: { 'Idempotent-Replayed': 'true' } };
          }
        }
        // Serialise creates of one website so the count check holds under concurrency.
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`funnels.create:${site.id}`]);
        if ((await repo.count(tx, site.id)) >= MAX_FUNNELS_PER_WEBSITE) {
          throw new ProblemError('conflict', {
            detail: `This website already has ${MAX_FUNNELS_PER_WEBSITE} funnels, the most one website keeps.`,
            remediation: 'Delete funnels that are no longer used (DELETE /v1/funnels/{id}), then create this one.',
          });
        }
        const row = await repo.insert(tx, { id: randomUUID(), workspace_id: request.workspace.id, website_id: site.id, ...definition });
        await outbox.add(tx, change(request, 'funnel.created', row, [...FIELDS]));
        const response: ApiResponse = { status: 200, body: { data: present(row) } };
        if (key !== null) await repo.storeReply(tx, request.workspace.id, request.key.id, key, requestHash, response.status, response.body);
        return response;
      });
      outbox.wake();
      buildWaiting();
      return reply;
    },

    'funnels.getFunnel': async (request: ApiRequest): Promise<ApiResponse> => ({ status: 200, body: { data: present(await load(request)) } }),

    'funnels.patchFunnel': async (request: ApiRequest): Promise<ApiResponse> => {
      const site = website(request);
      const existing = await load(request);
      const fields = readFields(request.body, true);
      const proposed: FunnelDefinition = { ...definitionOf(existing), ...fields };
      await checked(proposed, site.id);
      const result = await sql.transaction(async (tx) => {
        const row = await repo.lock(tx, site.id, existing.id);
        if (!row) throw notFound(existing.id);
        const next: FunnelDefinition = { ...definitionOf(row), ...fields };
        const changed = FIELDS.filter((f) => !sameJson(next[f], definitionOf(row)[f]));
        // A change that changes nothing writes nothing and announces nothing.
        if (changed.length === 0) return row;
        const rebuild = !sameJson(attemptInputs(next), attemptInputs(definitionOf(row)));
        const updated = await repo.update(tx, site.id, row.id, next, rebuild);
        await outbox.add(tx, change(request, 'funnel.updated', updated, changed));
        return updated;
      });
      outbox.wake();
      if (result.read_model === 'building') buildWaiting();
      return { status: 200, body: { data: present(result) } };
    },

    'funnels.deleteFunnel': async (request: ApiRequest): Promise<ApiResponse> => {
      const site = website(request);
      const existing = await load(request);
      await sql.transaction(async (tx) => {
        const row = await repo.lock(tx, site.id, existing.id);
        if (!row) throw notFound(existing.id);
        await repo.delete(tx, site.id, row.id);
        await outbox.add(tx, change(request, 'funnel.deleted', { ...row, updated_at: new Date() }, []));
      });
      outbox.wake();
      deps.deleted?.();
      return { status: 200, body: { data: { id: existing.id, deleted: true } } };
    },

    'funnels.getFunnelSteps': async (request: ApiRequest<StepsQuery>): Promise<ApiResponse> => {
      const row = await load(request);
      const resolved = windowOf(request, now());
      const window = msWindow(resolved);
      const scope = { websiteId: row.website_id, workspaceId: request.workspace.id };
      const definition = definitionOf(row);
      const compare = request.query.compare_days !== undefined ? comparisonWindow(resolved, String(request.query.compare_days), website(request).timezone) : null;
      const ref = attemptsOf(row);
      const [data, previous] = await computeSteps(ch, definition, compare ? [window, compare] : [window], scope, ref) as [StepRow[], StepRow[] | undefined];
      const body: Record<string, unknown> = {
        data,
        meta: analyticsMeta(request, row, resolved, { row_count: data.length, truncated: false, computed_from: ref ? 'read_model' : 'events', definitions: stepDefinitions(definition) }),
      };
      if (previous && compare) {
        body['previous'] = { window: { from: new Date(compare.fromMs).toISOString(), to: new Date(compare.toMs).toISOString(), expression: null }, data: previous };
      }
      return { status: 200, body };
    },

    'funnels.getFunnelBreakdown': async (request: ApiRequest<BreakdownQuery>): Promise<ApiResponse> => {
      const row = await load(request);
      const query = request.query;
      const dimension = query.dimension ?? 'channel';
      if (!(TOUCH_DIMENSIONS as readonly string[]).includes(dimension)) {
        throw new ProblemError('unknown-dimension', {
          detail: `A funnel breaks down by a session (touch) dimension; "${dimension}" is not one.`,
          remediation: 'Use one of the allowed dimensions.',
          allowed: TOUCH_DIMENSIONS,
        });
      }
      const asked = Array.isArray(query.models) ? query.models : typeof query.models === 'string' ? query.models.split(',').map((m) => m.trim()).filter(Boolean) : [DEFAULT_ATTRIBUTION_MODEL];
      const models = [...new Set(asked)];
      const badModel = models.find((m) => !(ATTRIBUTION_MODEL_NAMES as readonly string[]).includes(m));
      if (badModel !== undefined || models.length === 0 || models.length > MAX_ATTRIBUTION_MODELS) {
        throw new ProblemError('invalid-request', {
          detail: badModel !== undefined ? `"${badModel}" is not an attribution model.` : `models takes 1 to ${MAX_ATTRIBUTION_MODELS} models.`,
          remediation: `Send one model or up to ${MAX_ATTRIBUTION_MODELS}, comma-separated.`,
          allowed: ATTRIBUTION_MODEL_NAMES,
        });
      }
      const dataDriven = models.find((m) => (DATA_DRIVEN_MODEL_NAMES as readonly string[]).includes(m));
      if (dataDriven !== undefined && dimension !== 'channel') {
        // Their credit is a game or a chain over channels; other dimensions have too many values for either.
        throw new ProblemError('unsupported-combination', {
          detail: `${dataDriven} credits channels: it needs dimension=channel, not ${dimension}.`,
          remediation: 'Break down by channel, or use a rule model for other dimensions.',
          allowed: ['channel'],
        });
      }
      const excludeDirect = readSwitch('exclude_direct', query.exclude_direct);
      const limitRaw = Number(query.limit ?? LIMITS.funnel_breakdown.default);
      if (!Number.isInteger(limitRaw) || limitRaw < 1) {
        throw new ProblemError('invalid-request', { detail: 'limit must be a whole number of at least 1.', remediation: `Send limit between 1 and ${LIMITS.funnel_breakdown.maximum}.` });
      }
      const limit = Math.min(limitRaw, LIMITS.funnel_breakdown.maximum);
      const resolved = windowOf(request, now());
      const definition = definitionOf(row);
      const ref = attemptsOf(row);
      const result = await computeBreakdown(ch, definition, msWindow(resolved), { websiteId: row.website_id, workspaceId: request.workspace.id }, { dimension, models: models as AttributionModelName[], excludeDirect, limit }, ref);
      const single = models.length === 1 ? (models[0] as AttributionModelName) : null;
      const data = result.rows.map((r) => ({
        value: r.value,
        ...(r.other ? { other: true } : {}),
        ...(single ? r.models[single] : r.models),
      }));
      return {
        status: 200,
        body: {
          data,
          totals: result.totals,
          meta: analyticsMeta(request, row, resolved, {
            row_count: data.length,
            truncated: result.truncated,
            computed_from: ref ? 'read_model' : 'events',
            dimension,
            models,
            definitions: breakdownDefinitions(models as AttributionModelName[], dimension, excludeDirect, result.dataDriven),
          }),
        },
      };
    },
  };
}
