// The gateway module: auth, scopes, limits, problem documents and routing for the public API,
// plus the operator API on the admin port. It owns workspaces, websites and keys (Postgres) and
// the limit counters (KV).
import { join } from 'node:path';
import { defineModule, requestIdMiddleware, type ServiceModule } from '@sightline/kit';
import { openApiDocument } from '@sightline/proto-schemas';
import { trackerScript } from '@sightline/tracker';
import { AccountsAdmin } from './accounts-admin';
import { AccountsRepo } from './accounts.repo';
import { mountAdminRoutes } from './admin.routes';
import { mountApiRoutes, mountFallbacks } from './api.routes';
import { Authenticator } from './auth';
import { mountCollectRoutes } from './collect.routes';
import { ensureDemoWorkspace } from './demo';

export { DEMO_WEBSITES } from './demo';
import { mountDocsRoutes } from './docs.routes';
import { Limits } from './limits';
import { localHandlers } from './local-handlers';
import { createGatewayMetrics } from './metrics';
import { operationsOf, type OpenApiDocumentShape } from './operations';
import { RequestValidator } from './request-validation';

export interface GatewayOptions {
  /** Every service of this build (the module registry), wherever it runs; others answer 501. */
  availableServices: readonly string[];
  /** Create the demo workspace on an empty embedded instance. */
  demo: boolean;
}

export function createGatewayModule(options: GatewayOptions): ServiceModule {
  return defineModule({
    name: 'gateway',
    needs: { postgres: { schema: 'gateway', migrationsDir: join(__dirname, '..', 'migrations') }, kv: true },
    async create(ctx) {
      const repo = new AccountsRepo(ctx.postgres!);
      const auth = new Authenticator(repo);
      const admin = new AccountsAdmin(repo, ctx.bus);
      const document = openApiDocument as unknown as OpenApiDocumentShape;
      const limits = new Limits(ctx.kv!, ctx.settings.rpcTimeoutMs * 2);
      const metrics = createGatewayMetrics(ctx.metrics);
      const publicUrl = () => ctx.settings.publicUrl;
      return {
        publicRoutes(router) {
          router.use(requestIdMiddleware);
          mountDocsRoutes(router, openApiDocument);
          mountCollectRoutes(router, {
            repo,
            bus: ctx.bus,
            rpcTimeoutMs: ctx.settings.rpcTimeoutMs,
            ingestAvailable: options.availableServices.includes('ingest'),
            trackerScript,
            logger: ctx.logger,
          });
          mountApiRoutes(router, {
            operations: operationsOf(document),
            auth,
            limits,
            validator: new RequestValidator(document),
            bus: ctx.bus,
            local: localHandlers(),
            availableServices: new Set(options.availableServices),
            rpcTimeoutMs: ctx.settings.rpcTimeoutMs,
            publicUrl,
            metrics,
            logger: ctx.logger,
          });
          mountFallbacks(router, { publicUrl, logger: ctx.logger });
        },
        adminRoutes(router) {
          mountAdminRoutes(router, { admin, repo, auth, publicUrl, logger: ctx.logger });
        },
        async start() {
          if (options.demo && ctx.settings.embedded) {
            await ensureDemoWorkspace({ repo, admin, dataDir: ctx.settings.dataDir, publicUrl: ctx.settings.publicUrl, logger: ctx.logger });
          }
        },
      };
    },
  });
}
