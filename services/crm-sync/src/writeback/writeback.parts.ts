// Outcome write-back: consumes outcome.writeback_requested (from contacts), queues one row per
// destination (the website's CRM through its connection's connector, Google Ads and Meta offline
// conversion uploads), works the queue with retries and a dead-letter state, and publishes every
// status change as outcome.writeback_updated (shown on the contact detail). See README "Write-back".
import type { ConsumerMap, ModuleInstance, Schedule } from '@sightline/kit';
import { credentialsBox, type CredentialsBox } from '../connections/credentials';
import { connectorFor } from '../connectors/registry';
import type { CrmSyncDeps } from '../deps';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './backoff';
import { enqueueWriteback } from './enqueue';
import { DATA_MANAGER_URL, DATA_MANAGER_URL_KEY } from './google-data-manager';
import { checkRequestStatuses, REQUEST_STATUS_CRON, REQUEST_STATUS_DEFAULTS } from './google-request-status';
import { writebackAdminRoutes } from './writeback.admin';
import { createWorker, type ConnectorLookup } from './worker';

/** Seams for tests and for the lead's wiring; production passes none. */
export interface WritebackOverrides {
  /** Provider → connector; default the registry's connectorFor. */
  connectorFor?: ConnectorLookup;
  /** Default: the box the connections are sealed with (same key). */
  box?: CredentialsBox;
  now?: () => Date;
  policy?: Partial<RetryPolicy>;
  /** Cron of the queue poll (node-cron, seconds allowed); default every 15 seconds. */
  pollCron?: string;
  /** Work the queue right after a request is queued; default true. */
  runOnArrival?: boolean;
  callTimeoutMs?: number;
  /** Cron of the Google request-status follow-up (google-request-status.ts); default every 5 minutes. */
  requestStatusCron?: string;
  /** Its bounds: rows per round, wait before asking again, and when to stop asking. */
  requestStatus?: Partial<typeof REQUEST_STATUS_DEFAULTS>;
}

export type WritebackDeps = CrmSyncDeps & { writeback?: WritebackOverrides };

export interface WritebackParts {
  consumers: ConsumerMap<'crm-sync'>;
  schedules: Schedule[];
  adminRoutes: NonNullable<ModuleInstance['adminRoutes']>;
  /** Works every due row now (tests, the admin retry). */
  runDue(): Promise<number>;
  /** One round of the Google request-status follow-up now (tests); answers how many rows were checked. */
  checkRequestStatuses(): Promise<number>;
  stop(): Promise<void>;
}

export const WRITEBACK_POLL_CRON = '*/15 * * * * *';
/** Deadline of the earlier-clicks question to attribution (one indexed range read of one person). */
export const EARLIER_CLICKS_TIMEOUT_MS = 10_000;

export function writebackParts(deps: WritebackDeps): WritebackParts {
  const overrides = deps.writeback ?? {};
  const now = overrides.now ?? (() => new Date());
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...overrides.policy };
  const box = overrides.box ?? credentialsBox(deps.options.credentialsKey ?? deps.settings.cursorSecret);
  const worker = createWorker({
    sql: deps.sql,
    outbox: deps.outbox,
    logger: deps.logger,
    options: deps.options,
    box,
    connectorFor: overrides.connectorFor ?? connectorFor,
    policy,
    now,
    leaseMs: deps.options.writebackLeaseMs ?? 5 * 60_000,
    batchSize: 20,
    callTimeoutMs: overrides.callTimeoutMs ?? deps.options.writebackCallTimeoutMs ?? 30_000,
  });
  const runOnArrival = overrides.runOnArrival ?? true;
  const checkStatuses = (): Promise<number> => checkRequestStatuses({
    sql: deps.sql,
    outbox: deps.outbox,
    box,
    logger: deps.logger,
    baseUrl: deps.options.adPlatformUrls?.[DATA_MANAGER_URL_KEY] ?? DATA_MANAGER_URL,
    policy,
    now,
    callTimeoutMs: overrides.callTimeoutMs ?? deps.options.writebackCallTimeoutMs ?? 30_000,
    ...REQUEST_STATUS_DEFAULTS,
    ...overrides.requestStatus,
  });

  return {
    consumers: {
      'outcome.writeback_requested': async (envelope) => {
        const clicks = { bus: deps.bus, timeoutMs: EARLIER_CLICKS_TIMEOUT_MS };
        const queued = await enqueueWriteback({ sql: deps.sql, outbox: deps.outbox, maxAttempts: policy.maxAttempts, now, clicks }, envelope);
        deps.outbox.wake();
        if (queued > 0 && runOnArrival) worker.kick();
      },
    },
    schedules: [
      { name: 'crm-sync-writeback-queue', cron: overrides.pollCron ?? WRITEBACK_POLL_CRON, run: async () => void (await worker.runDue()) },
      { name: 'crm-sync-google-request-status', cron: overrides.requestStatusCron ?? REQUEST_STATUS_CRON, run: async () => void (await checkStatuses()) },
    ],
    adminRoutes(router) {
      writebackAdminRoutes(router, { sql: deps.sql, outbox: deps.outbox, box, now, kick: () => worker.kick() });
    },
    runDue: () => worker.runDue(),
    checkRequestStatuses: checkStatuses,
    stop: () => worker.stop(),
  };
}
