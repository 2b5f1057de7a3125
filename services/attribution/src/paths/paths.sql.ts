// The SQL of GET /paths: every outcome's journey (the read model's outcome rows) turned into a
// path of step labels inside ClickHouse, then grouped by path. Node only receives the top rows.
import { EMPTY_STEP_LABEL, PATH_TRUNCATION_MARKER, UNATTRIBUTED_LABEL, type PathStepName } from '@sightline/proto-schemas';
import { outcomeRowsSql, type OutcomeScan } from '../analytics/outcome-rows.sql';

export interface PathRow {
  path: string[];
  outcomes: string | number;
  revenue: number;
  total_outcomes: string | number;
  distinct_paths: string | number;
}

/**
 * Paths of the outcomes `scan` selects, most frequent first (params: website, from, to plus
 * max_touches, limit, empty_label, marker, unattributed). `step` picks the touch field that labels
 * each step; it comes from the fixed PATH_STEP_NAMES, never from request text.
 *
 * Every touch is a step: consecutive touches with the same label are not collapsed, because a
 * path is the sequence of touches (sessions), and "Organic Search x3" is a different journey from
 * one visit. total_outcomes and distinct_paths are window functions, computed over every path
 * before LIMIT.
 */
export function pathsSql(scan: OutcomeScan, step: PathStepName): string {
  const label = `if(toString(v) = '', {empty_label:String}, toString(v))`;
  return `SELECT path,
         count() AS outcomes,
         round(sum(value), 6) AS revenue,
         sum(count()) OVER () AS total_outcomes,
         count() OVER () AS distinct_paths
    FROM (
      SELECT value,
             arrayMap(v -> ${label}, j_${step}) AS labels,
             multiIf(
               empty(labels), [{unattributed:String}],
               length(labels) > {max_touches:UInt32}, arrayPushBack(arraySlice(labels, 1, {max_touches:UInt32}), {marker:String}),
               labels
             ) AS path
        FROM (${outcomeRowsSql({ ...scan, fields: [step] })})
    )
   GROUP BY path
   ORDER BY outcomes DESC, revenue DESC, path ASC
   LIMIT {limit:UInt32}`;
}

export function pathLabelParams(maxTouches: number, limit: number): Record<string, unknown> {
  return { max_touches: maxTouches, limit, empty_label: EMPTY_STEP_LABEL, marker: PATH_TRUNCATION_MARKER, unattributed: UNATTRIBUTED_LABEL };
}
