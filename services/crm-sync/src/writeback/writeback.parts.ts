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
}

export type WritebackDeps = CrmSyncDeps & { writeback?: WritebackOverrides };

export interface WritebackParts {
  consumers: ConsumerMap<'crm-sync'>;
  schedules: Schedule[];
  adminRoutes: NonNullable<ModuleInstance['adminRoutes']>;
  /** Works every due row now (tests, the admin retry). */
  runDue(): Promise<number>;
  stop(): Promise<void>;
}

export const WRITEBACK_POLL_CRON = '*/15 * * * * *';

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
    leaseMs: 5 * 60_000,
    batchSize: 20,
    callTimeoutMs: overrides.callTimeoutMs ?? 30_000,
  });
  const runOnArrival = overrides.runOnArrival ?? true;

  return {
    consumers: {
      'outcome.writeback_requested': async (envelope) => {
        const queued = await enqueueWriteback({ sql: deps.sql, outbox: deps.outbox, maxAttempts: policy.maxAttempts, now }, envelope);
        deps.outbox.wake();
        if (queued > 0 && runOnArrival) worker.kick();
      },
    },
    schedules: [{ name: 'crm-sync-writeback-queue', cron: overrides.pollCron ?? WRITEBACK_POLL_CRON, run: async () => void (await worker.runDue()) }],
    adminRoutes(router) {
      writebackAdminRoutes(router, { sql: deps.sql, outbox: deps.outbox, box, now, kick: () => worker.kick() });
    },
    runDue: () => worker.runDue(),
    stop: () => worker.stop(),
  };
}
