// The crm-sync module: mirrors a connected CRM (deals, pipelines, companies, contacts) into its own
// Postgres schema `crm_sync`, imports the same records (and ad spend and store orders) from files,
// and carries outcome write-backs to the CRM and to ad platforms. It publishes, through a
// transactional outbox, what attribution and the change feed need: deal.created,
// deal.stage_changed, milestone.reached and crm.members_synced. It answers GET /deals,
// GET /pipelines and GET /companies (+ /accounts). Where each part lives: README.md.
import { join } from 'node:path';
import { createOutbox, defineModule, type RunnableModule } from '@sightline/kit';
import type { CrmSyncDeps, CrmSyncOptions } from './deps';
import { importAdminRoutes } from './imports/imports.admin';
import { registerCrmSyncMetrics } from './metrics';
import { sunsetMessage, sunsetWarnings } from './api-versions';
import { spendParts } from './ads/spend/spend.parts';
import { readRpcHandlers } from './reads/reads.rpc';
import { syncParts } from './sync/sync.parts';
import { writebackParts } from './writeback/writeback.parts';

export function createCrmSyncModule(options: CrmSyncOptions = {}): RunnableModule {
  return defineModule({
    name: 'crm-sync',
    needs: { postgres: { schema: 'crm_sync', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') } },
    async create(ctx) {
      const sql = ctx.postgres;
      const outbox = createOutbox(sql, ctx.bus, ctx.logger);
      registerCrmSyncMetrics(ctx.metrics, sql);
      const deps: CrmSyncDeps = { sql, outbox, bus: ctx.bus, logger: ctx.logger, settings: ctx.settings, options };
      const sync = syncParts(deps);
      const writeback = writebackParts(deps);
      const spend = spendParts(deps);
      return {
        rpc: readRpcHandlers(deps),
        consumers: writeback.consumers,
        schedules: [...(sync.schedules ?? []), ...writeback.schedules, ...spend.schedules],
        adminRoutes(router) {
          sync.adminRoutes?.(router);
          importAdminRoutes(router, deps);
          writeback.adminRoutes(router);
          spend.adminRoutes(router);
        },
        async start() {
          // One line per ad-platform API version within 60 days of its sunset (or past it).
          for (const warning of sunsetWarnings(new Date())) ctx.logger.warn({ api: warning.api, version: warning.version, sunset: warning.sunset, days_left: warning.daysLeft }, sunsetMessage(warning));
          outbox.start();
          await sync.start?.();
          await spend.start();
        },
        readinessDetails: () => sunsetWarnings(new Date()).map(sunsetMessage),
        async stop() {
          await sync.stop?.();
          await spend.stop();
          await writeback.stop();
          await outbox.stop();
        },
      };
    },
  });
}

export { applyRecords, companyId, dealId, recordId, type ApplyResult } from './mirror';
export type { CrmCompany, CrmContact, CrmDeal, CrmPipeline, CrmRecords, CrmStage, MirrorScope } from './records';
export { ProviderError, type Connector, type Credentials, type PullContext, type PullPage, type PushResult } from './connectors/connector';
export type { CrmSyncOptions } from './deps';
// For `sightline import`: the CLI checks each file row with the same rules as the admin route.
export { IMPORT_KINDS, IMPORT_ROW_SCHEMAS, isImportKind, type ImportKind, type ImportRows, type RowSchema } from './imports/schemas';
export { checkImportRow, orderKey, type RowCheck } from './imports/rows';
export { MAX_IMPORT_BATCH_ROWS, type ImportBatchResult } from './imports/imports.admin';
