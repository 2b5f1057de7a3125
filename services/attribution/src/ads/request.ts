// GET /ads/performance: the query read and checked. The gateway has already validated it against
// the OpenAPI document; the checks here keep a direct RPC caller from reaching SQL with a bad value.
import { ProblemError } from '@sightline/kit';
import { AD_LEVEL_NAMES, AD_METRIC_NAMES, DEFAULT_AD_METRICS, type AdLevelName, type AdMetricName } from '@sightline/proto-schemas';

export interface AdsRawQuery {
  period?: string;
  from?: string;
  to?: string;
  level?: string;
  metrics?: string[] | string;
  breakdown?: boolean | string;
  platform?: string;
}

export interface AdsQuery {
  level: AdLevelName;
  metrics: AdMetricName[];
  breakdown: boolean;
  platform: string | null;
}

const PLATFORM_PATTERN = /^[a-z][a-z0-9_]*$/;

export function adsQuery(raw: AdsRawQuery): AdsQuery {
  return { level: levelOf(raw.level), metrics: metricsOf(raw.metrics), breakdown: breakdownOf(raw.breakdown), platform: platformOf(raw.platform) };
}

function levelOf(value: string | undefined): AdLevelName {
  if (value === undefined || value === '') {
    throw new ProblemError('invalid-request', { detail: 'level is required: a query pins exactly one grain.', remediation: 'Add level, for example level=campaign.', allowed: AD_LEVEL_NAMES });
  }
  if (!(AD_LEVEL_NAMES as readonly string[]).includes(value)) {
    throw new ProblemError('invalid-request', { detail: `level ${JSON.stringify(value)} is not an ad level.`, remediation: 'Use one of the allowed levels.', allowed: AD_LEVEL_NAMES });
  }
  return value as AdLevelName;
}

function metricsOf(value: string[] | string | undefined): AdMetricName[] {
  const names = (typeof value === 'string' ? value.split(',') : value ?? []).map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) return [...DEFAULT_AD_METRICS];
  const unknown = names.filter((n) => !(AD_METRIC_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new ProblemError('unknown-metric', { detail: `Unknown ad metric ${unknown.map((n) => JSON.stringify(n)).join(', ')}.`, remediation: 'Use ad metrics from the allowed list (GET /schema lists each one under ad_metrics).', allowed: AD_METRIC_NAMES });
  }
  return [...new Set(names)] as AdMetricName[];
}

function breakdownOf(value: boolean | string | undefined): boolean {
  if (value === undefined || value === '' || value === false || value === 'false' || value === '0') return false;
  if (value === true || value === 'true' || value === '1') return true;
  throw new ProblemError('invalid-request', { detail: `breakdown ${JSON.stringify(value)} is not a boolean.`, remediation: 'Send breakdown=true or breakdown=false.', allowed: ['true', 'false'] });
}

function platformOf(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  if (!PLATFORM_PATTERN.test(value) || value.length > 50) {
    throw new ProblemError('invalid-request', { detail: `platform ${JSON.stringify(value)} is not a platform identifier.`, remediation: 'Send a platform identifier such as google_ads or meta_ads.' });
  }
  return value;
}
