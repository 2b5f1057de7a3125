// The sync part of crm-sync: connections (sealed credentials, admin routes), the sync runner,
// the schedule that syncs every active connection (options.syncCron, default every 15 minutes),
// and on-demand syncs from the admin API. Credentials never reach a log line: the part logs
// through a child logger that redacts credential-shaped fields as a second line of defence.
import type { ModuleInstance } from '@sightline/kit';
import cron from 'node-cron';
import { ConnectionsRepo } from '../connections/connections.repo';
import { connectionsAdminRoutes } from '../connections/connections.admin';
import { moduleCredentialsBox } from '../connections/credentials';
import { connectorFor, PROVIDERS } from '../connectors/registry';
import type { CrmSyncDeps } from '../deps';
import { DEFAULT_RETRY } from './retry';
import { SyncRunner } from './sync-runner';

export const DEFAULT_SYNC_CRON = '*/15 * * * *';
/** Connections synced at once by the schedule. */
const SCHEDULE_CONCURRENCY = 3;
const LEASE_MS = 5 * 60_000;
const OVERLAP_MS = 2 * 60_000;

const REDACT = ['credentials', 'access_token', 'refresh_token', 'client_secret', 'api_key', '*.credentials', '*.access_token', '*.refresh_token', '*.client_secret', '*.api_key'];

export function syncParts(deps: CrmSyncDeps): Pick<ModuleInstance, 'schedules' | 'adminRoutes'> & { start?: () => Promise<void>; stop?: () => Promise<void> } {
  const syncCron = deps.options.syncCron ?? DEFAULT_SYNC_CRON;
  if (!cron.validate(syncCron)) throw new Error(`crm-sync: syncCron "${syncCron}" is not a valid cron expression`);
  const logger = deps.logger.child({ part: 'sync' }, { redact: { paths: REDACT, censor: '[redacted]' } });
  const repo = new ConnectionsRepo(deps.sql);
  const box = moduleCredentialsBox(deps.options, deps.settings.cursorSecret);
  const connector = (provider: string) => connectorFor(provider, deps.options);
  const runner = new SyncRunner({
    sql: deps.sql,
    outbox: deps.outbox,
    repo,
    box,
    connectorFor: connector,
    logger,
    retry: DEFAULT_RETRY,
    leaseMs: LEASE_MS,
    overlapMs: OVERLAP_MS,
  });

  /** One scheduled round: every active connection, a few at a time; busy ones are skipped. */
  const syncAll = async (): Promise<void> => {
    const ids = await repo.activeIds();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length) {
        const id = ids[next++]!;
        await runner.syncNow(id, { full: false });
      }
    };
    await Promise.all(Array.from({ length: Math.min(SCHEDULE_CONCURRENCY, ids.length) }, worker));
  };

  return {
    schedules: [{ name: 'crm-sync-connections', cron: syncCron, run: syncAll }],
    adminRoutes(router) {
      connectionsAdminRoutes(router, {
        repo,
        runner,
        box,
        providers: PROVIDERS,
        connectorFor: connector,
        logger,
      });
    },
    async start() {
      // PGlite means this process is the only one: leases a killed predecessor left are stale.
      if (deps.sql.driver === 'pglite') await repo.releaseAllLeases();
    },
    async stop() {
      await runner.stopAll();
    },
  };
}
