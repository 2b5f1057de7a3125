// The funnels module: saved funnel definitions (Postgres schema `funnels`), the facts funnels count
// (ClickHouse database `funnels`: events and sessions by identity, revenue facts, identity merges)
// kept from events.classified, identity.merged and the revenue facts among milestone.reached, and
// a read model of every funnel's attempts kept current from them (README "Read model"). It answers
// /funnels CRUD, /funnels/{id}/steps and /funnels/{id}/breakdown, and announces every definition
// change (funnel.created|updated|deleted) through a transactional outbox.
import { join } from 'node:path';
import { createOutbox, defineModule, type Outbox, type OutboxOptions, type RunnableModule } from '@sightline/kit';
import { FunnelsRepo } from './funnels.repo';
import { funnelsRpcHandlers } from './funnels.rpc';
import { IdentityMergesRepo } from './identity-merges.repo';
import { projectionConsumers, type HandledHook } from './projection.consumers';
import { ProjectionRepo } from './projection.repo';
import { ReadModel, type ReadModelOptions } from './read-model';
import { Builder, type BuilderOptions } from './read-model.builder';
import { rebuildAdminRoutes } from './rebuild.admin';

export interface FunnelsModuleOptions {
  outbox?: OutboxOptions;
  /** The clock analytics windows resolve against (tests pin it). */
  now?: () => Date;
  readModel?: ReadModelOptions;
  builder?: BuilderOptions & {
    /** Build nothing (tests of the answers while a read model is building). */
    paused?: boolean;
  };
  /** Called after each group of bus messages is fully handled, read model included (tests wait on it). */
  onHandled?: HandledHook;
}

export function createFunnelsModule(options: FunnelsModuleOptions = {}): RunnableModule {
  return defineModule({
    name: 'funnels',
    needs: {
      postgres: { schema: 'funnels', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') },
      clickhouse: { database: 'funnels', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
    },
    async create(ctx) {
      const repo = new FunnelsRepo(ctx.postgres);
      const projection = new ProjectionRepo(ctx.clickhouse);
      const merges = new IdentityMergesRepo(ctx.clickhouse);
      const readModel = new ReadModel(ctx.clickhouse, repo, options.readModel);
      const builder = new Builder(readModel, repo, ctx.logger, options.builder);
      const paused = options.builder?.paused === true;
      const wake = () => {
        if (!paused) builder.wake();
      };
      const purge = () => {
        readModel.purge(() => repo.generations()).catch((error: unknown) => ctx.logger.error({ err: error }, 'funnels read model: purge failed'));
      };
      const outbox: Outbox<'funnels'> = createOutbox(ctx.postgres, ctx.bus, ctx.logger, options.outbox);
      return {
        rpc: funnelsRpcHandlers({
          sql: ctx.postgres, ch: ctx.clickhouse, repo, projection, outbox, buildWaiting: wake, deleted: purge, ...(options.now ? { now: options.now } : {}),
        }),
        consumers: projectionConsumers(projection, merges, readModel, options.onHandled),
        schedules: [
          { name: 'funnels-idempotency-expiry', cron: '23 * * * *', run: () => repo.deleteExpiredReplies() },
          // Attempts of replaced generations and deleted funnels (normally removed right away).
          { name: 'funnels-read-model-purge', cron: '41 * * * *', run: async () => void (await readModel.purge(() => repo.generations())) },
        ],
        adminRoutes(router) {
          router.get('/funnels/outbox', (_req, res, next) => {
            outbox.pendingCount().then((pending) => res.json({ pending, paused: outbox.isPaused() }), next);
          });
          rebuildAdminRoutes(router, repo, readModel, wake);
        },
        async start() {
          outbox.start();
          if (!paused) builder.start();
        },
        async stop() {
          await builder.stop();
          await outbox.stop();
        },
      };
    },
  });
}

export { attemptsOf, compareHits, type Attempt, type Hit } from './attempts';
export { checkDefinition, readFields, withDefaults, type FunnelDefinition, type FunnelStep } from './definition';
export { attemptsBreakdownQueries, breakdownQueries } from './breakdown.sql';
export { attemptsStepsQuery, profileQueries, stepsQuery } from './funnel.sql';
export { funnelsRpcHandlers } from './funnels.rpc';
export { FunnelsRepo } from './funnels.repo';
export { ProjectionRepo, sessionKey } from './projection.repo';
export { ReadModel } from './read-model';
export { Builder } from './read-model.builder';
