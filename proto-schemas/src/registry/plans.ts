// Plans and their limits. Limits are per workspace, across all of its keys.

export const PLAN_NAMES = ['free', 'pro', 'business', 'agency', 'internal'] as const;

export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlanDefinition {
  name: PlanName;
  description: string;
  /** Sustained requests per minute; null means unlimited. */
  requests_per_minute: number | null;
  /** Requests per calendar month (UTC); null means unlimited. */
  monthly_quota: number | null;
  /** Analytics queries running at once. */
  concurrent_analytics_queries: number;
}

/** Analytics reads running at once per workspace (API-SPEC "Limits"). */
export const CONCURRENT_ANALYTICS_QUERIES = 4;
/**
 * Decided: of those, what background work (alert gathering, through gateway.acquireAnalyticsSlot)
 * may hold at once, so people's own queries always keep the rest.
 */
export const BACKGROUND_ANALYTICS_QUERIES = 2;

export const PLANS: readonly PlanDefinition[] = [
  { name: 'free', requests_per_minute: 60, monthly_quota: 100_000, concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
    description: 'For trying Sightline on one small site: 60 requests a minute, 100,000 a month.' },
  { name: 'pro', requests_per_minute: 120, monthly_quota: 1_000_000, concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
    description: 'For a business with a few sites: 120 requests a minute, 1,000,000 a month.' },
  { name: 'business', requests_per_minute: 600, monthly_quota: 5_000_000, concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
    description: 'For teams syncing to a CRM and warehouse: 600 requests a minute, 5,000,000 a month.' },
  { name: 'agency', requests_per_minute: 1200, monthly_quota: 10_000_000, concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
    description: 'For agencies serving many client workspaces: 1,200 requests a minute, 10,000,000 a month.' },
  { name: 'internal', requests_per_minute: null, monthly_quota: null, concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
    description: 'For the operator\'s own tooling and tests on a self-hosted install: no rate or monthly limit (the concurrency cap still applies).' },
];
