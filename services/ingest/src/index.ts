// The ingest module: validates and classifies incoming events (POST /v1/events and tracker hits),
// resolves identities and sessions, stores raw events, and publishes events.classified and
// conversion.created. It owns the identity graph (Postgres) and raw events (ClickHouse).
import { join } from 'node:path';
import { defineModule, type ServiceModule } from '@sightline/kit';
import { createClassifier } from './classify/classify';
import { EventsRepo } from './events.repo';
import { IdentityGraph } from './identity-graph';
import { batchReceivedHandler } from './pipeline.consumer';
import { ingestRpcHandlers } from './rpc.handlers';
import { Sessionizer } from './sessions';

export function createIngestModule(): ServiceModule {
  return defineModule({
    name: 'ingest',
    needs: {
      postgres: { schema: 'ingest', migrationsDir: join(__dirname, '..', 'migrations', 'postgres') },
      clickhouse: { database: 'ingest', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
      kv: true,
    },
    async create(ctx) {
      const classifier = await createClassifier();
      const repo = new EventsRepo(ctx.clickhouse!);
      return {
        rpc: ingestRpcHandlers({ bus: ctx.bus, kv: ctx.kv!, classifier }),
        adminRoutes(router) {
          // Operators (and the crash test) check what is stored: distinct events vs raw rows.
          router.get('/ingest/websites/:id/stats', (req, res, next) => {
            const id = String(req.params['id']);
            if (!/^[0-9a-f-]{36}$/i.test(id)) return void res.status(400).json({ error: 'website id must be a UUID' });
            repo.stats(id).then((stats) => res.json(stats), next);
          });
        },
        consumers: {
          'ingest.batch_received': batchReceivedHandler({
            identity: new IdentityGraph(ctx.postgres!),
            sessions: new Sessionizer(ctx.kv!),
            repo,
            bus: ctx.bus,
          }),
        },
      };
    },
  });
}

export { EventsRepo } from './events.repo';
