// One check per endpoint: call the service for a site and window, compute the oracle's answer, and
// return every difference as a line (empty when they agree).
import {
  COVERAGE_BUCKETS, creditedMetrics, expectedCoverage, expectedPaths, plainMetrics,
  type AttributionModel, type TouchDimension,
} from '../index';
import { compareKeyed, Differences } from './compare';
import type { DifferentialHarness } from './process';
import type { NamedWindow, OracleSite } from './sites';

type Row = Record<string, unknown>;
interface Body {
  data: Row[];
  totals?: Row;
  meta: Row;
}

function context(s: OracleSite, w: NamedWindow, what: string): string {
  return `seed ${s.site.spec.seed} (${s.site.website.domain}) ${w.name} [${w.from}, ${w.to}) ${what}:`;
}

async function read(h: DifferentialHarness, method: string, path: string, s: OracleSite, query: Record<string, string>, diff: Differences): Promise<Body | null> {
  try {
    const reply = await h.call<Body>(method, path, s.site, query);
    if (reply.status !== 200) {
      diff.note(`status ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
      return null;
    }
    return reply.body;
  } catch (error) {
    diff.note(`failed: ${String(error).slice(0, 300)}`);
    return null;
  }
}

const credit = (v: unknown): Record<string, number> => {
  const o = (v ?? {}) as Row;
  return { conversions: Number(o['conversions'] ?? NaN), revenue: Number(o['revenue'] ?? NaN) };
};

/** GET /metrics?metrics=conversions,revenue&group_by=<dim>&attribution=<models>. */
export async function checkCredited(h: DifferentialHarness, s: OracleSite, w: NamedWindow, models: readonly AttributionModel[], dimension: TouchDimension): Promise<string[]> {
  const diff = new Differences(context(s, w, `/metrics group_by=${dimension} attribution=${models.join(',')}`));
  const body = await read(h, 'attribution.getMetrics', '/v1/metrics', s, {
    metrics: 'conversions,revenue', group_by: dimension, attribution: models.join(','), from: w.from, to: w.to, limit: '1000',
  }, diff);
  if (!body) return diff.lines;
  diff.same('meta.truncated', body.meta['truncated'], false);
  const single = models.length === 1;
  for (const model of models) {
    const expected = creditedMetrics(s.data, w, model, dimension);
    const rows = new Map(body.data.map((r) => [String(r[dimension]), single ? credit(r) : credit(r[model])]));
    compareKeyed(diff, model, rows, new Map([...expected.rows].map(([k, v]) => [k, { ...v }])), ['conversions', 'revenue']);
    const totals = credit(single ? body.totals : body.totals?.[model]);
    diff.number(`${model} totals.conversions`, totals.conversions, expected.totals.conversions);
    diff.number(`${model} totals.revenue`, totals.revenue, expected.totals.revenue);
  }
  return diff.lines;
}

/** GET /metrics?metrics=visitors,sessions,pageviews,conversions (no group_by, no model). */
export async function checkPlain(h: DifferentialHarness, s: OracleSite, w: NamedWindow): Promise<string[]> {
  const diff = new Differences(context(s, w, '/metrics visitors,sessions,pageviews,conversions'));
  const body = await read(h, 'attribution.getMetrics', '/v1/metrics', s, { metrics: 'visitors,sessions,pageviews,conversions', from: w.from, to: w.to }, diff);
  if (!body) return diff.lines;
  const expected = plainMetrics(s.data, w);
  const row = body.data[0] ?? {};
  for (const [name, value] of Object.entries(expected)) diff.number(name, row[name], value);
  return diff.lines;
}

/** GET /paths?step=<step>&max_touches=<n> (max_touches omitted: the default, 5). */
export async function checkPaths(h: DifferentialHarness, s: OracleSite, w: NamedWindow, step: TouchDimension, maxTouches?: number): Promise<string[]> {
  const diff = new Differences(context(s, w, `/paths step=${step} max_touches=${maxTouches ?? 'default'}`));
  const query: Record<string, string> = { step, from: w.from, to: w.to, limit: '200' };
  if (maxTouches !== undefined) query['max_touches'] = String(maxTouches);
  const body = await read(h, 'attribution.getPaths', '/v1/paths', s, query, diff);
  if (!body) return diff.lines;
  const expected = expectedPaths(s.data, w, step, maxTouches ?? 5);
  diff.same('meta.truncated', body.meta['truncated'], expected.size > 200);
  const total = [...expected.values()].reduce((sum, r) => sum + r.outcomes, 0);
  diff.number('meta.total_outcomes', body.meta['total_outcomes'], total);
  const rows = new Map(body.data.map((r) => [JSON.stringify(r['path']), { outcomes: Number(r['outcomes']), revenue: Number(r['revenue']), share: Number(r['share']) }]));
  if (rows.size !== body.data.length) diff.note(`the same path is listed more than once: ${JSON.stringify(body.data.map((r) => r['path']))}`);
  compareKeyed(diff, 'path', rows, new Map([...expected].map(([k, v]) => [k, { outcomes: v.outcomes, revenue: v.revenue, share: v.share }])), ['outcomes', 'revenue', 'share']);
  return diff.lines;
}

/** GET /attribution/coverage. */
export async function checkCoverage(h: DifferentialHarness, s: OracleSite, w: NamedWindow): Promise<string[]> {
  const diff = new Differences(context(s, w, '/attribution/coverage'));
  const body = await read(h, 'attribution.getAttributionCoverage', '/v1/attribution/coverage', s, { from: w.from, to: w.to }, diff);
  if (!body) return diff.lines;
  const expected = expectedCoverage(s.data, w);
  const totalAmount = [...expected.values()].reduce((sum, r) => sum + r.amount, 0);
  diff.same('buckets', body.data.map((r) => r['bucket']), [...COVERAGE_BUCKETS]);
  const rows = new Map(body.data.map((r) => [String(r['bucket']), { amount: Number(r['amount']), facts: Number(r['facts']), share: Number(r['share']) }]));
  const oracleRows = new Map([...expected].map(([b, r]) => [b as string, { ...r, share: totalAmount > 0 ? r.amount / totalAmount : 0 }]));
  compareKeyed(diff, 'bucket', rows, oracleRows, ['amount', 'facts', 'share']);
  const amount = (b: string) => expected.get(b as never)?.amount ?? 0;
  diff.number('meta.expected_gap_amount', body.meta['expected_gap_amount'], amount('predates_tracking') + amount('imported_contact'));
  diff.number('meta.worth_investigating_amount', body.meta['worth_investigating_amount'], amount('no_visitor') + amount('no_sessions'));
  return diff.lines;
}

/**
 * ingest's sessions against the oracle's: the same hits grouped together. Not a check of
 * attribution, but every other comparison assumes it (touches are sessions).
 */
export function checkSessions(s: OracleSite): string[] {
  const ingest = new Map<string, string[]>();
  for (const e of s.site.events) if (e.session_id) ingest.set(e.session_id, [...(ingest.get(e.session_id) ?? []), e.event_id]);
  const key = (ids: string[]) => [...ids].sort().join(',');
  const ingestGroups = new Set([...ingest.values()].map(key));
  const oracleGroups = new Set(s.data.sessions.map((x) => key(x.eventIds)));
  const lines: string[] = [];
  for (const g of oracleGroups) if (!ingestGroups.has(g)) lines.push(`seed ${s.site.spec.seed}: oracle session of events ${g} is not an ingest session`);
  for (const g of ingestGroups) if (!oracleGroups.has(g)) lines.push(`seed ${s.site.spec.seed}: ingest session of events ${g} is not an oracle session`);
  return lines;
}
