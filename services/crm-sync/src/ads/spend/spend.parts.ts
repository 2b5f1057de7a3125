// The spend part of crm-sync: pulls daily spend from every active ad account on a schedule
// (options.adSpendPullCron, default hourly) and on demand (spend.admin.ts). Base URLs come from
// options.adPlatformUrls (the same hosts the conversion uploads use), so tests point them at the
// local stand-ins. Windows: options.adSpendCostDays / adSpendConversionDays, overridable per
// account with the settings spend_cost_days / spend_conversion_days.
import type { ModuleInstance, Schedule } from '@sightline/kit';
import cron from 'node-cron';
import { credentialsBox } from '../../connections/credentials';
import type { CrmSyncDeps } from '../../deps';
import { googleAdsSpend, GOOGLE_ADS_BASE_URL } from './google-ads-spend';
import { linkedinAnalytics, LINKEDIN_BASE_URL } from './linkedin-analytics';
import { metaInsights, META_GRAPH_BASE_URL } from './meta-insights';
import { spendAdminRoutes } from './spend.admin';
import { SpendRunner } from './spend-runner';
import type { SpendConnector, SpendPlatform } from './spend.types';

export const DEFAULT_AD_SPEND_PULL_CRON = '7 * * * *';
export const DEFAULT_AD_SPEND_COST_DAYS = 3;
export const DEFAULT_AD_SPEND_CONVERSION_DAYS = 30;
const LEASE_MS = 15 * 60_000;

const CONNECTORS: Record<SpendPlatform, SpendConnector> = { google_ads: googleAdsSpend, meta_ads: metaInsights, linkedin_ads: linkedinAnalytics };
const BASE_URLS: Record<SpendPlatform, string> = { google_ads: GOOGLE_ADS_BASE_URL, meta_ads: META_GRAPH_BASE_URL, linkedin_ads: LINKEDIN_BASE_URL };

export const spendConnectorFor = (platform: string): SpendConnector | null => (Object.hasOwn(CONNECTORS, platform) ? CONNECTORS[platform as SpendPlatform] : null);

export interface SpendParts {
  schedules: Schedule[];
  adminRoutes: NonNullable<ModuleInstance['adminRoutes']>;
  /** One scheduled round: every due account, one after another. */
  pullDue(): Promise<void>;
  runner: SpendRunner;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function spendParts(deps: CrmSyncDeps, overrides: { now?: () => Date; maxWaitMs?: number } = {}): SpendParts {
  const pullCron = deps.options.adSpendPullCron ?? DEFAULT_AD_SPEND_PULL_CRON;
  if (!cron.validate(pullCron)) throw new Error(`crm-sync: adSpendPullCron "${pullCron}" is not a valid cron expression`);
  const box = credentialsBox(deps.options.credentialsKey ?? deps.settings.cursorSecret);
  // Never started: only asked when the schedule fires next (the next_pull_at of a good pull).
  const clock = cron.createTask(pullCron, () => undefined);
  const runner = new SpendRunner({
    sql: deps.sql,
    outbox: deps.outbox,
    box,
    logger: deps.logger.child({ part: 'ad-spend' }),
    connectorFor: spendConnectorFor,
    baseUrlFor: (platform) => deps.options.adPlatformUrls?.[platform] ?? BASE_URLS[platform],
    urls: deps.options.adPlatformUrls ?? {},
    windows: {
      costDays: deps.options.adSpendCostDays ?? DEFAULT_AD_SPEND_COST_DAYS,
      conversionDays: deps.options.adSpendConversionDays ?? DEFAULT_AD_SPEND_CONVERSION_DAYS,
    },
    now: overrides.now ?? (() => new Date()),
    leaseMs: LEASE_MS,
    maxWaitMs: overrides.maxWaitMs ?? 60_000,
    backoff: { baseMs: 5 * 60_000, maxMs: 24 * 3600_000 },
    nextScheduled: () => clock.getNextRuns(1)[0] ?? null,
  });
  let round: Promise<void> | null = null;
  const pullDue = (): Promise<void> => {
    // A round still running when the next is due is not doubled here (the lease covers other replicas).
    round ??= (async () => {
      try {
        for (const account of await runner.due()) await runner.pull(account.website_id, account.platform);
      } finally {
        round = null;
      }
    })();
    return round;
  };
  return {
    schedules: [{ name: 'crm-sync-ad-spend', cron: pullCron, run: pullDue }],
    adminRoutes: (router) => spendAdminRoutes(router, runner),
    pullDue,
    runner,
    async start() {
      // PGlite means this process is the only one: leases a killed predecessor left are stale.
      if (deps.sql.driver === 'pglite') await deps.sql.query('UPDATE ad_spend_pulls SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL');
    },
    async stop() {
      runner.stopAll();
      await round;
      await clock.destroy();
    },
  };
}
