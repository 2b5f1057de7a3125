// The gateway module: auth, scopes, limits, problem documents and routing for the public API,
// plus the operator API on the admin port. It owns workspaces, websites and keys (Postgres) and
// the limit counters (KV, the monthly counts also kept in Postgres). It serves the analytics slots
// to background work over the bus (gateway.acquireAnalyticsSlot / releaseAnalyticsSlot).
import { join } from 'node:path';
import { defineModule, requestIdMiddleware, type RunnableModule } from '@sightline/kit';
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
import { BACKGROUND_ANALYTICS_QUERIES, Limits } from './limits';
import { localHandlers } from './local-handlers';
import { createGatewayMetrics, registerCacheGauges } from './metrics';
import { operationsOf, type OpenApiDocumentShape } from './operations';
import { QuotaLedger } from './quota-ledger';
import { RequestValidator } from './request-validation';
import { SiteDirectory } from './site-directory';

export interface GatewayOptions {
  /** Create the demo workspace on an empty embedded instance. */
  demo: boolean;
  /**
   * Believe identify() with the old unbound signature (an HMAC of the email alone, replayable by any
   * browser), for a migration period (SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND). Default false.
   */
  identifyAcceptUnbound?: boolean;
}

export function createGatewayModule(options: GatewayOptions): RunnableModule {
  return defineModule({
    name: 'gateway',
    needs: { postgres: { schema: 'gateway', migrationsDir: join(__dirname, '..', 'migrations') }, kv: true },
    async create(ctx) {
      const repo = new AccountsRepo(ctx.postgres);
      const auth = new Authenticator(repo);
      const admin = new AccountsAdmin(repo, ctx.bus);
      const document = openApiDocument as unknown as OpenApiDocumentShape;
      const ledger = new QuotaLedger(ctx.postgres, ctx.logger);
      const limits = new Limits(ctx.kv, ctx.settings.rpcTimeoutMs * 2, { ledger });
      const metrics = createGatewayMetrics(ctx.metrics);
      const sites = new SiteDirectory(repo);
      registerCacheGauges(ctx.metrics, { sites: () => sites.size, keys: () => auth.cachedKeys });
      const publicUrl = () => ctx.settings.publicUrl;
      return {
        // Background work (alert gathering) takes the workspace's analytics slots through these, within its share.
        rpc: {
          'gateway.acquireAnalyticsSlot': async (request) => ({
            lease_id: await limits.acquireBackgroundSlot(request.workspace_id, request.lease_ms),
            background_slots: BACKGROUND_ANALYTICS_QUERIES,
          }),
          'gateway.releaseAnalyticsSlot': async (request) => ({ released: await limits.releaseAnalyticsSlot(request.workspace_id, request.lease_id) }),
        },
        publicRoutes(router) {
          router.use(requestIdMiddleware);
          mountDocsRoutes(router, openApiDocument);
          mountCollectRoutes(router, {
            sites,
            auth,
            limits,
            bus: ctx.bus,
            rpcTimeoutMs: ctx.settings.rpcTimeoutMs,
            trackerScript,
            publicUrl,
            metrics,
            logger: ctx.logger,
            identify: { acceptUnbound: options.identifyAcceptUnbound ?? false },
          });
          mountApiRoutes(router, {
            operations: operationsOf(document),
            auth,
            limits,
            validator: new RequestValidator(document),
            bus: ctx.bus,
            local: localHandlers(),
            rpcTimeoutMs: ctx.settings.rpcTimeoutMs,
            publicUrl,
            metrics,
            logger: ctx.logger,
          });
          mountFallbacks(router, { publicUrl, logger: ctx.logger, auth, limits, metrics });
        },
        adminRoutes(router) {
          mountAdminRoutes(router, { admin, repo, auth, ledger });
        },
        async start() {
          ledger.start();
          if (options.demo && ctx.settings.embedded) {
            await ensureDemoWorkspace({ repo, admin, dataDir: ctx.settings.dataDir, publicUrl: ctx.settings.publicUrl, logger: ctx.logger });
          }
        },
        async stop() {
          // Public requests have drained by now: the counts they made are written before the stores close.
          await ledger.stop();
        },
      };
    },
  });
}
