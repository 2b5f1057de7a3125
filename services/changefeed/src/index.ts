// The changefeed module: the Postgres-owned change log behind GET /changes. It records every
// change-bearing message (type, source, object, time, a small payload without personal data) and
// keeps 90 days of it. See README.md for the cursor semantics.
import { join } from 'node:path';
import { Counter } from 'prom-client';
import { defineModule, type RunnableModule } from '@sightline/kit';
import { changeConsumers } from './changes.consumers';
import { ChangesRepo } from './changes.repo';
import { changefeedRpcHandlers } from './changes.rpc';
import { FeedCursors } from './feed-cursor';
import { purgeExpiredChanges, RETENTION_CRON } from './retention';

export interface ChangefeedOptions {
  /** The service clock for retention decisions (tests move it); defaults to the system clock. */
  now?: () => Date;
}

export function createChangefeedModule(options: ChangefeedOptions = {}): RunnableModule {
  const now = options.now ?? (() => new Date());
  return defineModule({
    name: 'changefeed',
    needs: {
      postgres: { schema: 'changefeed', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') },
    },
    async create(ctx) {
      const repo = new ChangesRepo(ctx.postgres);
      const recorded = new Counter({
        name: 'sightline_changefeed_changes_recorded_total',
        help: 'Changes written to the change log, by change type.',
        labelNames: ['type'],
        registers: [ctx.metrics],
      });
      return {
        rpc: changefeedRpcHandlers({ repo, cursors: new FeedCursors(ctx.settings.cursorSecret), now }),
        consumers: changeConsumers(repo, (type) => recorded.inc({ type })),
        schedules: [
          {
            name: 'changefeed.retention',
            cron: RETENTION_CRON,
            run: async () => {
              const deleted = await purgeExpiredChanges(repo, now());
              ctx.logger.info({ deleted }, 'expired changes deleted');
            },
          },
        ],
      };
    },
  });
}

export { CHANGE_TYPES, type ChangeType } from './change-types';
export { changeFromEnvelope, type NewChange, type ObjectType } from './change-record';
export { ChangesRepo, type PageQuery, type StoredChange } from './changes.repo';
export { listChangesHandler, RETENTION_DAYS, type ChangeItem, type ChangesBody, type ChangesQuery } from './changes.rpc';
export { FeedCursors, type FeedPosition } from './feed-cursor';
export { purgeExpiredChanges, DELETE_GRACE_DAYS } from './retention';
