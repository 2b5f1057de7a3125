// GET /paths: one row per distinct ordered touch sequence that led to an outcome in the window
// (conversions, or milestones with `stages`). The journey, labelling and grouping run in
// ClickHouse (paths.sql.ts); this turns the top rows into the response.
import type { ClickHouseStore } from '@sightline/kit';
import { DEFAULT_LOOKBACK_DAYS, EMPTY_STEP_LABEL, PATH_TRUNCATION_MARKER, UNATTRIBUTED_LABEL, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import { analyticsContext, metaOf, type AnalyticsMeta } from '../analytics/context';
import type { OutcomeScan } from '../analytics/outcome-rows.sql';
import { pathsOptions, type PathsOptions, type PathsQuery } from './request';
import { pathLabelParams, pathsSql, type PathRow } from './paths.sql';
import { assertKnownStages } from '../analytics/stage-vocabulary';

export interface PathEntry {
  path: string[];
  outcomes: number;
  revenue: number;
  share: number;
}

export interface PathsBody {
  data: PathEntry[];
  meta: AnalyticsMeta;
}

export function pathsRpcHandlers(ch: ClickHouseStore) {
  return {
    'attribution.getPaths': async (request: ApiRequest<PathsQuery>): Promise<ApiResponse<PathsBody>> => {
      const ctx = analyticsContext(request);
      const options = pathsOptions(ctx.request.query);
      if (options.stages.length > 0) await assertKnownStages(ch, ctx.workspaceId, options.stages);

      const { scan, params } = outcomeFilter(options);
      const rows = await ch.query<PathRow>(pathsSql(scan, options.step), {
        website: ctx.website.id, from: ctx.from, to: ctx.to,
        ...pathLabelParams(options.maxTouches, options.limit),
        ...params,
      });

      const total = Number(rows[0]?.total_outcomes ?? 0);
      const distinct = Number(rows[0]?.distinct_paths ?? 0);
      const data = rows.map((r): PathEntry => ({
        path: r.path,
        outcomes: Number(r.outcomes),
        revenue: Number(r.revenue),
        share: total === 0 ? 0 : Number(r.outcomes) / total,
      }));
      const meta = metaOf(ctx, {
        row_count: data.length,
        truncated: distinct > data.length,
        definitions: definitions(options),
        total_outcomes: total,
        distinct_paths: distinct,
        lookback_days: DEFAULT_LOOKBACK_DAYS,
      });
      return { status: 200, body: { data, meta } };
    },
  };
}

/** Which outcomes are counted: milestones of the stages, or conversions filtered by type and name. */
function outcomeFilter(o: PathsOptions): { scan: OutcomeScan; params: Record<string, unknown> } {
  if (o.stages.length > 0) return { scan: { source: 'milestones', where: ['stage IN {stages:Array(String)}'] }, params: { stages: o.stages } };
  const where: string[] = [];
  const params: Record<string, unknown> = {};
  if (o.types.length > 0) { where.push('event_type IN {types:Array(String)}'); params['types'] = o.types; }
  if (o.events.length > 0) { where.push('event_name IN {events:Array(String)}'); params['events'] = o.events; }
  return { scan: { source: 'conversions', where }, params };
}

function definitions(o: PathsOptions): Record<string, string> {
  const outcome = o.stages.length > 0
    ? `milestones reached in the window at stage ${o.stages.join(', ')}`
    : 'conversions in the window' + (o.types.length > 0 ? ` of type ${o.types.join(', ')}` : '') + (o.events.length > 0 ? ` named ${o.events.join(', ')}` : '');
  return {
    path: `The person's touches (sessions, across every merged device) that started in the ${DEFAULT_LOOKBACK_DAYS} days up to the outcome, oldest first, each labelled by its ${o.step}; an empty ${o.step} shows as ${EMPTY_STEP_LABEL}. Every touch is one step: consecutive touches with the same label are not collapsed. Journeys longer than ${o.maxTouches} touches keep their first ${o.maxTouches} steps followed by '${PATH_TRUNCATION_MARKER}', so journeys with the same start group together. An outcome with no touch at all has the path ['${UNATTRIBUTED_LABEL}'].`,
    outcomes: `Outcomes (${outcome}) whose journey is exactly this path.`,
    revenue: o.stages.length > 0 ? 'Sum of the milestone amounts of those outcomes.' : 'Sum of the revenue of those conversions; a sales value written back through PATCH /contacts replaces the tracked revenue.',
    share: 'outcomes divided by every outcome the query counts in the window (all paths, not only those returned).',
  };
}
