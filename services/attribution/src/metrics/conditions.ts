// Filters and group keys as SQL for one place of a /metrics query. Values are bound parameters.
import { ProblemError } from '@sightline/kit';
import type { DimensionName } from '@sightline/proto-schemas';
import { dimensionSql, type Place } from './dimensions';
import type { MetricFilter, MetricsQuery } from './request';

const PLACE_NAMES: Record<Place, string> = {
  traffic: 'traffic metrics (visitors, sessions, pageviews, events)',
  credit: 'credited metrics (conversions, revenue, influenced_conversions, unique_converters, milestones)',
  customer: 'customer metrics (customers, lifetime_value, avg_ltv, repeat_rate, avg_orders, revenue_per_customer, cac, ltv_cac)',
};

/** The expression of a dimension in a place, or unsupported-combination naming why. */
export function requireDimension(name: DimensionName, place: Place, use: 'group_by' | 'filter'): string {
  const sql = dimensionSql(name, place);
  if (sql === null) {
    throw new ProblemError('unsupported-combination', {
      detail: `${use} on ${name} does not apply to ${PLACE_NAMES[place]}.`,
      remediation: place === 'credit'
        ? `Credit goes to touches (sessions): use a touch dimension such as landing_page instead of ${name}, or ask for traffic metrics in a separate request.`
        : `Ask for the metrics that ${name} describes in a separate request (GET /schema gives each dimension's entity).`,
    });
  }
  return sql;
}

export interface Conditions {
  sql: string;
  params: Record<string, unknown>;
}

function filterSql(f: MetricFilter, expr: string, param: string): Conditions {
  const one = { [param]: f.values[0] ?? '' };
  switch (f.operator) {
    case 'eq': return { sql: `${expr} = {${param}:String}`, params: one };
    case 'ne': return { sql: `${expr} != {${param}:String}`, params: one };
    case 'in': return { sql: `${expr} IN {${param}:Array(String)}`, params: { [param]: f.values } };
    case 'nin': return { sql: `${expr} NOT IN {${param}:Array(String)}`, params: { [param]: f.values } };
    case 'contains': return { sql: `positionCaseInsensitiveUTF8(${expr}, {${param}:String}) > 0`, params: one };
    case 'not_contains': return { sql: `positionCaseInsensitiveUTF8(${expr}, {${param}:String}) = 0`, params: one };
  }
}

/** The WHERE condition of the query's filters (and only_paid) in one place; `1` when none. */
export function whereSql(q: MetricsQuery, place: Place, paidExpr: string): Conditions {
  const parts: string[] = [];
  const params: Record<string, unknown> = {};
  q.filters.forEach((f, i) => {
    const c = filterSql(f, requireDimension(f.dimension, place, 'filter'), `f${i}`);
    parts.push(`(${c.sql})`);
    Object.assign(params, c.params);
  });
  const filters = parts.length === 0 ? '1' : parts.join(q.conjunction === 'or' ? ' OR ' : ' AND ');
  return { sql: q.onlyPaid ? `(${filters}) AND ${paidExpr} = 1` : filters, params };
}

/** `expr AS k0, ...` and the key names, for the dimensions (and the day, with granularity=day). */
export function groupKeys(dimensions: readonly DimensionName[], place: Place, dateExpr: string | null): { select: string[]; names: string[] } {
  const select: string[] = [];
  const names: string[] = [];
  if (dateExpr) {
    select.push(`${dateExpr} AS k_date`);
    names.push('k_date');
  }
  dimensions.forEach((d, i) => {
    select.push(`${requireDimension(d, place, 'group_by')} AS k${i}`);
    names.push(`k${i}`);
  });
  return { select, names };
}
