// GET /metrics: the request read into a MetricsQuery and checked against the spec's rules before
// any SQL is built. The gateway has already checked each value against the OpenAPI document
// (names, list sizes, limit clamped); what is left are filters and rules across parameters.
import { ProblemError, readSwitch } from '@sightline/kit';
import {
  ATTRIBUTION_MODEL_NAMES, DATA_DRIVEN_MODEL_NAMES, DEFAULT_ATTRIBUTION_MODEL, DIMENSIONS, MAX_ATTRIBUTION_MODELS, FILTER_DIMENSIONS, LIMITS, LIST_SEPARATOR, METRICS, OPERATORS,
  type AttributionModelName, type DimensionDefinition, type FilterDimension, type GroupByDimension, type MetricName, type OperatorName,
} from '@sightline/proto-schemas';
import { METRIC_FAMILY } from './families';

export interface MetricsRawQuery {
  period?: string;
  from?: string;
  to?: string;
  metrics?: string[];
  group_by?: string[];
  filter?: string[];
  granularity?: string;
  attribution?: string[];
  stages?: string[];
  conjunction?: 'and' | 'or';
  only_paid?: boolean | string;
  exclude_direct?: boolean | string;
  limit?: number;
}

export interface MetricFilter {
  dimension: FilterDimension;
  operator: OperatorName;
  values: string[];
}

export interface MetricsQuery {
  metrics: MetricName[];
  groupBy: GroupByDimension[];
  filters: MetricFilter[];
  conjunction: 'and' | 'or';
  daily: boolean;
  /** The models credited metrics use; one unless several were asked for. */
  models: AttributionModelName[];
  /** True when the request named the models (rows nest per model when it named several). */
  modelsExplicit: boolean;
  stages: string[];
  onlyPaid: boolean;
  /** Direct touches dropped from journeys before weighting (a journey of only Direct stays Direct). */
  excludeDirect: boolean;
  limit: number;
}

const DIMENSION_BY_NAME = new Map<string, DimensionDefinition>(DIMENSIONS.map((d) => [d.name, d]));
const SPEND_DIMENSIONS: readonly string[] = ['platform', 'ad_campaign'];

function unsupported(detail: string, remediation: string): ProblemError {
  return new ProblemError('unsupported-combination', { detail, remediation });
}

function parseFilter(raw: string): MetricFilter {
  const first = raw.indexOf(':');
  const second = first < 0 ? -1 : raw.indexOf(':', first + 1);
  if (first < 0 || second < 0) {
    throw new ProblemError('invalid-request', {
      detail: `The filter ${JSON.stringify(raw)} is not of the form dimension:operator:value.`,
      remediation: 'Write each filter as dimension:operator:value, for example filter=country:eq:DE; list operators take a|b|c.',
    });
  }
  const dimension = raw.slice(0, first);
  const operator = raw.slice(first + 1, second);
  const value = raw.slice(second + 1);
  const definition = DIMENSION_BY_NAME.get(dimension);
  if (!definition || !definition.filterable) {
    throw new ProblemError('unknown-dimension', {
      detail: `The filter dimension ${JSON.stringify(dimension)} does not exist or cannot be filtered.`,
      remediation: 'Use one of the filterable dimensions listed in allowed (GET /schema describes each).',
      allowed: FILTER_DIMENSIONS,
    });
  }
  if (!(definition.operators as readonly string[]).includes(operator)) {
    throw new ProblemError('unknown-filter-operator', {
      detail: `The operator ${JSON.stringify(operator)} is not supported for ${dimension}.`,
      remediation: `Use one of the operators allowed for ${dimension}.`,
      allowed: definition.operators,
    });
  }
  const list = OPERATORS.find((o) => o.name === operator)?.list ?? false;
  const values = list ? value.split(LIST_SEPARATOR) : [value];
  if (definition.values) {
    const bad = values.find((v) => !(definition.values as readonly string[]).includes(v));
    if (bad !== undefined) {
      throw new ProblemError('invalid-request', {
        detail: `${JSON.stringify(bad)} is not a value of ${dimension}.`,
        remediation: `Filter ${dimension} by one of the values listed in allowed.`,
        allowed: definition.values,
      });
    }
  }
  return { dimension: dimension as FilterDimension, operator: operator as OperatorName, values };
}

function truthy(value: boolean | string | undefined): boolean {
  return value === true || value === 'true';
}

const DATA_DRIVEN: readonly string[] = DATA_DRIVEN_MODEL_NAMES;

/** The requested models: known names, at most MAX_ATTRIBUTION_MODELS (the gateway checks both too; RPC callers reach here directly). */
function readModels(raw: readonly string[]): AttributionModelName[] {
  const unknown = raw.find((m) => !(ATTRIBUTION_MODEL_NAMES as readonly string[]).includes(m));
  if (unknown !== undefined) {
    throw new ProblemError('invalid-request', {
      detail: `${JSON.stringify(unknown)} is not an attribution model.`,
      remediation: 'Use one of the models listed in allowed.',
      allowed: ATTRIBUTION_MODEL_NAMES,
    });
  }
  if (raw.length > MAX_ATTRIBUTION_MODELS) {
    throw new ProblemError('invalid-request', {
      detail: `attribution names ${raw.length} models; at most ${MAX_ATTRIBUTION_MODELS} per request.`,
      remediation: `Ask for at most ${MAX_ATTRIBUTION_MODELS} models, and the rest in another request.`,
    });
  }
  return raw as AttributionModelName[];
}

export function readMetricsQuery(q: MetricsRawQuery): MetricsQuery {
  const metrics = (q.metrics ?? []) as MetricName[];
  if (metrics.length === 0) {
    throw new ProblemError('invalid-request', {
      detail: 'metrics is required.',
      remediation: 'Name at least one metric, for example metrics=visitors,conversions (GET /schema lists them).',
      allowed: METRICS.map((m) => m.name),
    });
  }
  const groupBy = (q.group_by ?? []) as GroupByDimension[];
  const filters = (q.filter ?? []).map(parseFilter);
  const requestedModels = readModels(q.attribution ?? []);
  const excludeDirect = readSwitch('exclude_direct', q.exclude_direct);
  const stages = q.stages ?? [];
  const families = new Set(metrics.map((m) => METRIC_FAMILY[m]));

  if (q.granularity !== undefined && q.granularity !== 'day') {
    throw new ProblemError('invalid-request', {
      detail: `granularity=${q.granularity} is not supported.`,
      remediation: 'Use granularity=day, or omit it for window totals.',
      allowed: ['day'],
    });
  }
  if (requestedModels.length > 0 && groupBy.length === 0) {
    throw unsupported('attribution needs group_by: a model decides which dimension value gets the credit.', 'Add group_by (for example group_by=channel), or drop attribution for plain totals.');
  }
  if (requestedModels.length > 0 && !metrics.some((m) => m === 'conversions' || m === 'revenue' || m === 'milestones')) {
    throw unsupported('Only conversions and revenue (and milestones with stages) can be attributed.', 'Add metrics=conversions or revenue, or drop attribution.');
  }
  for (const metric of metrics) {
    const requirement = METRICS.find((m) => m.name === metric)?.requires;
    if (!requirement) continue;
    if (requirement.parameter === 'stages' && stages.length === 0) throw unsupported(`${metric} needs the stages parameter.`, requirement.note);
    if (requirement.group_by && !(groupBy.length === 1 && (requirement.group_by as readonly string[]).includes(groupBy[0] as string))) {
      throw unsupported(`${metric} needs group_by=${requirement.group_by.join(' or group_by=')} alone.`, requirement.note);
    }
  }
  if (stages.length > 0 && metrics.some((m) => m === 'conversions' || m === 'revenue' || m === 'influenced_conversions' || m === 'unique_converters')) {
    throw unsupported('stages counts milestones, which are never blended with tracked conversions.', 'Ask for metrics=milestones with stages, and for conversions in a separate request.');
  }
  if (groupBy.some((d) => SPEND_DIMENSIONS.includes(d)) && groupBy.length > 1) {
    throw unsupported(`group_by=${groupBy.join(',')}: platform and ad_campaign join ad spend and take no other dimension.`, 'Group by platform or ad_campaign alone.');
  }
  if (groupBy.includes('cohort')) {
    if (groupBy.length > 1) throw unsupported('group_by=cohort returns a retention curve and takes no other dimension.', 'Group by cohort alone.');
    const bad = metrics.filter((m) => m !== 'cohort_mrr' && m !== 'customers');
    if (bad.length > 0) throw unsupported(`group_by=cohort answers cohort_mrr and customers, not ${bad.join(', ')}.`, 'Ask for metrics=cohort_mrr,customers with group_by=cohort.');
    if (q.granularity === 'day') throw unsupported('A retention curve is monthly by construction; granularity=day does not apply.', 'Drop granularity with group_by=cohort.');
  }
  if (q.granularity === 'day' && families.has('customer')) {
    throw unsupported('Customer metrics look at every payment of the window\'s customers; they have no daily series.', 'Drop granularity=day, or ask for customer metrics in a separate request.');
  }
  const usesResolution = groupBy.includes('resolution') || filters.some((f) => f.dimension === 'resolution');
  if (usesResolution && [...families].some((f) => f !== 'credit')) {
    throw unsupported('resolution splits credited outcomes by why they had no journey; it applies to conversions, revenue, influenced_conversions, unique_converters and milestones only.', 'Ask for credited metrics alone with resolution.');
  }
  const dataDriven = requestedModels.filter((m) => DATA_DRIVEN.includes(m));
  if (dataDriven.length > 0) {
    // Their credit is a property of every journey of the window together, by channel: a subset of
    // touches, outcomes or days would be a different chain or game, not a slice of this one.
    const named = dataDriven.join(' and ');
    if (!(groupBy.length === 1 && groupBy[0] === 'channel')) throw unsupported(`${named} credit channels: they need group_by=channel alone.`, 'Group by channel, or use a rule model for other dimensions.');
    if (filters.length > 0 || truthy(q.only_paid)) throw unsupported(`${named} model every journey of the window; filters and only_paid do not apply to them.`, 'Drop filter and only_paid, or use a rule model.');
    if (stages.length > 0) throw unsupported(`${named} credit tracked conversions, not milestones.`, 'Drop stages, or use a rule model for milestones.');
    if (q.granularity === 'day') throw unsupported(`${named} answer a window as a whole; they have no daily series.`, 'Drop granularity=day for these models.');
  }
  const models = requestedModels.length > 0 ? requestedModels : [DEFAULT_ATTRIBUTION_MODEL];
  return {
    metrics,
    groupBy,
    filters,
    conjunction: q.conjunction ?? 'and',
    daily: q.granularity === 'day',
    models,
    modelsExplicit: requestedModels.length > 0,
    stages,
    onlyPaid: truthy(q.only_paid),
    excludeDirect,
    limit: Math.min(q.limit ?? LIMITS.metrics.default, LIMITS.metrics.maximum),
  };
}
