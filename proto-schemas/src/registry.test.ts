import {
  AD_LEVELS, AD_METRICS, ATTRIBUTION_MODELS, DIMENSIONS, FILTER_DIMENSIONS, GROUP_BY_DIMENSIONS, METRICS,
  OPERATORS, PATH_STEPS, PLANS, SCOPES, metricDefinitions, schemaDocument,
} from './registry';

const names = (list: readonly { name: string }[]) => list.map((x) => x.name);

describe('registry', () => {
  it('has every metric, dimension and operator of the spec, once each', () => {
    expect(METRICS).toHaveLength(25);
    expect(GROUP_BY_DIMENSIONS).toHaveLength(23);
    expect(FILTER_DIMENSIONS).toHaveLength(30);
    expect(names(OPERATORS)).toEqual(['eq', 'ne', 'in', 'nin', 'contains', 'not_contains']);
    // The spec's five, then the models Sightline adds (issue 17): last_non_direct, markov, shapley.
    expect(names(ATTRIBUTION_MODELS)).toEqual(['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay', 'last_non_direct', 'markov', 'shapley']);
    expect(AD_LEVELS).toHaveLength(16);
    expect(AD_METRICS).toHaveLength(10);
    expect(names(PATH_STEPS)).toEqual(['channel', 'source', 'medium', 'campaign']);
    for (const list of [METRICS, DIMENSIONS, OPERATORS, AD_LEVELS, AD_METRICS, SCOPES, PLANS]) {
      expect(new Set(names(list)).size).toBe(list.length);
    }
  });

  it('flags each dimension by where the spec allows it', () => {
    const groupable = DIMENSIONS.filter((d) => d.groupable).map((d) => d.name);
    const filterable = DIMENSIONS.filter((d) => d.filterable).map((d) => d.name);
    expect(new Set(groupable)).toEqual(new Set(GROUP_BY_DIMENSIONS));
    expect(new Set(filterable)).toEqual(new Set(FILTER_DIMENSIONS));
    expect(DIMENSIONS).toHaveLength(new Set([...GROUP_BY_DIMENSIONS, ...FILTER_DIMENSIONS]).size);
    for (const d of DIMENSIONS) {
      expect(d.description.length).toBeGreaterThan(10);
      expect(d.operators.length > 0).toBe(d.filterable);
    }
  });

  it('restricts fixed-value dimensions to equality operators', () => {
    const identified = DIMENSIONS.find((d) => d.name === 'identified');
    expect(identified?.operators).toEqual(['eq', 'ne']);
    expect(identified?.values).toEqual(['true', 'false']);
    for (const d of DIMENSIONS.filter((x) => x.values !== null)) {
      expect(d.operators).not.toContain('contains');
    }
  });

  it('attributes only conversions and revenue, and states what other metrics need', () => {
    expect(METRICS.filter((m) => m.attributable).map((m) => m.name)).toEqual(['conversions', 'revenue']);
    const needsSpend = METRICS.filter((m) => m.requires?.group_by?.includes('platform')).map((m) => m.name);
    expect(needsSpend.sort()).toEqual(['cac', 'clicks', 'impressions', 'ltv_cac', 'roas', 'spend']);
    for (const m of METRICS) {
      for (const g of m.requires?.group_by ?? []) expect(GROUP_BY_DIMENSIONS).toContain(g);
      expect(m.description.length).toBeGreaterThan(20);
    }
  });

  it('has the scopes and plan limits decided for the gateway', () => {
    expect(names(SCOPES)).toEqual([
      'analytics:read', 'conversions:read', 'conversions:write', 'deals:read', 'events:write', 'funnels:read',
      'funnels:write', 'automations:read', 'automations:write', 'pii:read',
    ]);
    expect(PLANS.map((p) => [p.name, p.requests_per_minute, p.monthly_quota])).toEqual([
      ['free', 60, 100000], ['pro', 120, 1000000], ['business', 600, 5000000], ['agency', 1200, 10000000],
      ['internal', null, null],
    ]);
  });

  it('serves a detached, JSON-safe schema document', () => {
    const doc = schemaDocument();
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
    expect(doc.metrics).toHaveLength(25);
    (doc.metrics[0] as { description: string }).description = 'changed';
    expect(schemaDocument().metrics[0]?.description).not.toBe('changed');
  });

  it('gives definitions for known metric names only', () => {
    expect(Object.keys(metricDefinitions(['visitors', 'nope', 'revenue']))).toEqual(['visitors', 'revenue']);
  });
});
