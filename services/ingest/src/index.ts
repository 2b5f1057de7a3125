// The ingest module: validates and classifies incoming events (POST /v1/events and tracker hits),
// resolves identities and sessions, stores raw events, and publishes events.classified and
// conversion.created. It owns the identity graph (Postgres) and raw events (ClickHouse).
import { join } from 'node:path';
import { defineModule, ProblemError, registerCacheSize, type RunnableModule } from '@sightline/kit';
import { createClassifier } from './classify/classify';
import { EventsRepo } from './events.repo';
import { IdentityGraph } from './identity-graph';
import { batchReceivedHandler } from './pipeline.consumers';
import { countIngested } from './metrics';
import { ingestRpcHandlers } from './ingest.rpc';
import { Sessionizer } from './sessions';

export function createIngestModule(): RunnableModule {
  return defineModule({
    name: 'ingest',
    needs: {
      postgres: { schema: 'ingest', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') },
      clickhouse: { database: 'ingest', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
      kv: true,
    },
    async create(ctx) {
      const classifier = await createClassifier();
      const repo = new EventsRepo(ctx.clickhouse);
      const identity = new IdentityGraph(ctx.postgres);
      // Every in-process cache is bounded in size and age; its size is a gauge.
      registerCacheSize(ctx.metrics, { service: 'ingest', cache: 'identity_keys', size: () => identity.cacheSize });
      for (const cache of Object.keys(classifier.cacheSizes())) {
        registerCacheSize(ctx.metrics, { service: 'ingest', cache, size: () => classifier.cacheSizes()[cache] ?? 0 });
      }
      return {
        rpc: countIngested(ingestRpcHandlers({ bus: ctx.bus, kv: ctx.kv, classifier }), ctx.metrics),
        adminRoutes(router) {
          // Operators (and the crash test) check what is stored: distinct events vs raw rows.
          router.get('/ingest/websites/:id/stats', (req, res, next) => {
            const id = String(req.params['id']);
            if (!/^[0-9a-f-]{36}$/i.test(id)) return next(new ProblemError('invalid-request', { detail: 'The website id must be a UUID.', remediation: 'Use the id GET /admin/workspaces/<id>/websites lists.' }));
            repo.stats(id).then((stats) => res.json(stats), next);
          });
        },
        consumers: {
          'ingest.batch_received': batchReceivedHandler({
            identity,
            sessions: new Sessionizer(ctx.kv),
            repo,
            bus: ctx.bus,
          }),
        },
      };
    },
  });
}

export { EventsRepo } from './events.repo';
