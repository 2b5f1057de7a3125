// THE registry: metrics, dimensions, operators and the other fixed sets. GET /schema, the OpenAPI
// document and the SQL compiler all read these, so a name cannot exist in one and not the others.
import { AD_LEVELS, AD_METRICS, type AdLevelDefinition, type AdMetricDefinition } from './registry/ads';
import { ATTRIBUTION_MODELS, DEFAULT_ATTRIBUTION_MODEL, DEFAULT_LOOKBACK_DAYS, type AttributionModelDefinition } from './registry/attribution';
import { DIMENSIONS, type DimensionDefinition } from './registry/dimensions';
import { LIMITS, MAX_WINDOW_DAYS, MAX_GROUP_BY_DIMENSIONS, type PagingLimit } from './registry/limits';
import { METRICS, type MetricDefinition } from './registry/metrics';
import { LIST_SEPARATOR, OPERATORS, type OperatorDefinition } from './registry/operators';
import { DEFAULT_PATH_STEP, PATH_STEPS, type PathStepDefinition } from './registry/paths';
import { PLANS, type PlanDefinition } from './registry/plans';
import { SCOPES, type ScopeDefinition } from './registry/scopes';
import { CONJUNCTIONS, GRANULARITIES } from './registry/vocabulary';

export * from './registry/ads';
export * from './registry/attribution';
export * from './registry/dimensions';
export * from './registry/limits';
export * from './registry/metrics';
export * from './registry/operators';
export * from './registry/paths';
export * from './registry/plans';
export * from './registry/scopes';
export * from './registry/vocabulary';

/** The body of GET /schema. */
export interface SchemaDocument {
  metrics: readonly MetricDefinition[];
  dimensions: readonly DimensionDefinition[];
  operators: readonly OperatorDefinition[];
  filter_syntax: { form: string; list_separator: string };
  attribution_models: readonly AttributionModelDefinition[];
  default_attribution_model: string;
  attribution_lookback_days: number;
  granularities: readonly string[];
  conjunctions: readonly string[];
  ad_levels: readonly AdLevelDefinition[];
  ad_metrics: readonly AdMetricDefinition[];
  path_steps: readonly PathStepDefinition[];
  default_path_step: string;
  scopes: readonly ScopeDefinition[];
  plans: readonly PlanDefinition[];
  limits: Record<string, PagingLimit>;
  max_group_by_dimensions: number;
  max_window_days: number;
}

export function schemaDocument(): SchemaDocument {
  // structuredClone: callers may decorate the answer without touching the registry.
  return structuredClone({
    metrics: METRICS,
    dimensions: DIMENSIONS,
    operators: OPERATORS,
    filter_syntax: { form: 'dimension:operator:value', list_separator: LIST_SEPARATOR },
    attribution_models: ATTRIBUTION_MODELS,
    default_attribution_model: DEFAULT_ATTRIBUTION_MODEL,
    attribution_lookback_days: DEFAULT_LOOKBACK_DAYS,
    granularities: GRANULARITIES,
    conjunctions: CONJUNCTIONS,
    ad_levels: AD_LEVELS,
    ad_metrics: AD_METRICS,
    path_steps: PATH_STEPS,
    default_path_step: DEFAULT_PATH_STEP,
    scopes: SCOPES,
    plans: PLANS,
    limits: LIMITS,
    max_group_by_dimensions: MAX_GROUP_BY_DIMENSIONS,
    max_window_days: MAX_WINDOW_DAYS,
  });
}

/** `meta.definitions` for the given metric names: name to description. */
export function metricDefinitions(names: readonly string[]): Record<string, string> {
  const byName = new Map(METRICS.map((m) => [m.name as string, m.description]));
  const out: Record<string, string> = {};
  for (const name of names) {
    const text = byName.get(name);
    if (text !== undefined) out[name] = text;
  }
  return out;
}
