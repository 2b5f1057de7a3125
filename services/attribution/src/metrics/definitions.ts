// meta.definitions for GET /metrics: each returned metric's registry description, the model that
// credited it, and the rules a reader needs to reproduce the numbers.
import { ATTRIBUTION_MODELS, DEFAULT_LOOKBACK_DAYS, METRICS, type MetricName } from '@sightline/proto-schemas';
import { CREDITED } from './families';
import type { MetricsQuery } from './request';

export function metricsDefinitions(q: MetricsQuery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of q.metrics) out[name] = METRICS.find((m) => m.name === name)?.description ?? name;
  const credited = q.metrics.some((m) => CREDITED.has(m as MetricName) || m === 'influenced_conversions');
  if (credited && (q.groupBy.length > 0 || q.filters.length > 0 || q.onlyPaid)) {
    const models = q.models.map((m) => `${m}: ${ATTRIBUTION_MODELS.find((d) => d.name === m)?.description ?? ''}`).join(' ');
    out['attribution_model'] = `${q.models.join(', ')}${q.modelsExplicit ? '' : ' (the default; pass attribution to choose)'}. ${models}`;
    out['journey'] = `A touch is a session. An outcome's journey is the person's sessions (every device merged through the identity graph) that started in the ${DEFAULT_LOOKBACK_DAYS} days up to and including the outcome, ordered by start. An outcome with no such session is credited whole to Unattributed.`;
    if (q.excludeDirect) out['exclude_direct'] = 'Direct touches were dropped from every journey before any model weighed it (the remaining touches renormalised); a journey of only Direct touches stayed Direct.';
    out['filters_on_credit'] = 'Touch filters (and only_paid) keep the credit of matching touches, computed over the whole journey; outcome filters (event_name, event_type, identified, company_domain, resolution, crm_stage, crm_account_stage) keep whole outcomes.';
  }
  if (q.stages.length > 0) out['stages'] = `Milestones counted: ${q.stages.join(', ')}, each credited by ${q.models.join(', ')}. Milestones are never blended with tracked conversions.`;
  if (q.models.length > 1 && q.modelsExplicit) {
    out['nested_models'] = 'Each row nests one object per model with the credited metrics. A null means that model\'s own ranking was cut by limit before reaching this row (see meta.truncated_models); it is not zero.';
  }
  if (q.groupBy.length > 0) out['totals'] = 'totals holds the window totals of every metric, computed without group_by (distinct counts are not sums of rows), so each row\'s share is visible.';
  if (q.daily) out['date'] = 'Calendar day in the website timezone. Each day is computed separately: distinct visitors are not summed across days.';
  out['labels'] = 'An empty dimension value is shown as "(none)"; Unattributed is the label of outcomes with no journey.';
  out['precision'] = 'Figures are exact sums and ratios rounded to 12 significant digits, which removes binary floating-point noise (0.1 + 0.2 answers 0.3) so the same data always answers the same bytes.';
  return out;
}
