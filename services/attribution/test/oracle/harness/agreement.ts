// One scenario's reads against the oracle, for the property tests: credit under all five models by
// a touch dimension, paths by it, coverage, and the plain counts of a window. Every difference is
// returned as a line (none when they agree).
import type { AttributionFixture, FixtureWebsite } from '../../fixture';
import {
  ATTRIBUTION_MODELS, creditedMetrics, expectedCoverage, expectedPaths, plainMetrics,
  type CoverageBucket, type OracleDataset, type OracleWindow, type TouchDimension,
} from '../index';
import { close } from './compare';
import { gatewayQuery } from '@sightline/kit/testing/gateway-query';

type Row = Record<string, unknown>;
export interface Body {
  data: Row[];
  totals?: Row;
  meta: Row;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const num = (v: unknown): number => Number(v ?? NaN);

/** A read as the gateway would hand it to attribution after validating `GET <path>?<raw>`. */
export async function read(fx: AttributionFixture, website: FixtureWebsite, method: string, path: string, raw: Record<string, string>): Promise<Body> {
  const reply = await fx.call<Body>(method, website, gatewayQuery(path, raw));
  if (reply.status !== 200) throw new Error(`${method} answered ${reply.status}`);
  return reply.body;
}

export async function oracleDisagreements(fx: AttributionFixture, website: FixtureWebsite, data: OracleDataset, dimension: TouchDimension, w: OracleWindow): Promise<string[]> {
  const lines: string[] = [];
  const window = { from: iso(w.fromMs), to: iso(w.toMs) };
  const body = await read(fx, website, 'attribution.getMetrics', '/v1/metrics', {
    metrics: 'conversions,revenue', group_by: dimension, attribution: ATTRIBUTION_MODELS.join(','), limit: '1000', ...window,
  });
  for (const model of ATTRIBUTION_MODELS) {
    const expected = creditedMetrics(data, w, model, dimension);
    const rows = new Map(body.data.map((r) => [String(r[dimension]), (r[model] ?? {}) as Row]));
    for (const label of new Set([...rows.keys(), ...expected.rows.keys()])) {
      for (const metric of ['conversions', 'revenue'] as const) {
        const service = num(rows.get(label)?.[metric] ?? 0);
        const oracle = expected.rows.get(label)?.[metric] ?? 0;
        if (!close(service, oracle)) lines.push(`${model} ${dimension}=${label} ${metric}: service ${service}, oracle ${oracle}`);
      }
    }
  }
  const paths = await read(fx, website, 'attribution.getPaths', '/v1/paths', { step: dimension, limit: '200', ...window });
  const served = new Map(paths.data.map((r) => [JSON.stringify(r['path']), { outcomes: num(r['outcomes']), revenue: num(r['revenue']) }]));
  const expected = expectedPaths(data, w, dimension, 5);
  for (const key of new Set([...served.keys(), ...expected.keys()])) {
    const s = served.get(key) ?? { outcomes: 0, revenue: 0 };
    const o = expected.get(key) ?? { outcomes: 0, revenue: 0 };
    if (s.outcomes !== o.outcomes || !close(s.revenue, o.revenue)) lines.push(`path ${key}: service ${s.outcomes} outcomes / ${s.revenue}, oracle ${o.outcomes} / ${o.revenue}`);
  }
  const coverage = await read(fx, website, 'attribution.getAttributionCoverage', '/v1/attribution/coverage', window);
  const buckets = expectedCoverage(data, w);
  for (const row of coverage.data) {
    const o = buckets.get(row['bucket'] as CoverageBucket) ?? { amount: NaN, facts: NaN };
    if (num(row['facts']) !== o.facts || !close(num(row['amount']), o.amount)) lines.push(`coverage ${String(row['bucket'])}: service ${num(row['facts'])} facts / ${num(row['amount'])}, oracle ${o.facts} / ${o.amount}`);
  }
  const plain = await read(fx, website, 'attribution.getMetrics', '/v1/metrics', { metrics: 'visitors,sessions,pageviews,conversions', ...window });
  for (const [name, value] of Object.entries(plainMetrics(data, w))) {
    if (num(plain.data[0]?.[name]) !== value) lines.push(`${name}: service ${num(plain.data[0]?.[name])}, oracle ${value}`);
  }
  return lines;
}
