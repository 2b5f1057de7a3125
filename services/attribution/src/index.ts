// The attribution module. It owns the ClickHouse database `attribution`: classified events and the
// sessions (touches) built from them, conversions, identity merges and each identity's person,
// outcome values written back, milestones, ad reports, store orders and CRM memberships. It answers
// every analytics read: /metrics, /paths, /attribution/coverage, /products, /ads/performance and
// the contact, company and deal journeys from a read model its consumers maintain (read-model/),
// and publishes each conversion's first and last touch (conversion.attributed). Where each
// endpoint lives: README.md.
import { join } from 'node:path';
import { defineModule, type ClickHouseStore, type ConsumerMap, type ModuleLifecycle, type RpcMap, type RunnableModule } from '@sightline/kit';
import { adsConsumers } from './ads/ads.consumers';
import { adsRpcHandlers } from './ads/ads.rpc';
import { attributionConsumers } from './core.consumers';
import { ConversionsRepo } from './conversions.repo';
import { coverageRpcHandlers } from './coverage/coverage.rpc';
import { crmJourneyConsumers } from './crm-journeys/crm-journeys.consumers';
import { crmJourneyRpcHandlers } from './crm-journeys/crm-journeys.rpc';
import { adClicksRpcHandlers } from './ad-clicks/ad-clicks.rpc';
import { dealTouchesRpcHandlers } from './deal-touches/deal-touches.rpc';
import { IdentityMergesRepo } from './identity-merges.repo';
import { journeyRpcHandlers } from './journeys.rpc';
import { metricsRpcHandlers } from './metrics/metrics.rpc';
import { milestonesConsumers } from './milestones/milestones.consumers';
import { OutcomesRepo } from './outcomes.repo';
import { pathsRpcHandlers } from './paths/paths.rpc';
import { productsConsumers } from './products/products.consumers';
import { productsRpcHandlers } from './products/products.rpc';
import type { AttributedPublisher } from './read-model/attributed';
import { ReadModel } from './read-model/read-model';
import { rebuildAdminRoutes } from './read-model/rebuild.admin';
import { TouchesRepo } from './touches.repo';

export interface AttributionHandlers {
  consumers: ConsumerMap<'attribution'>;
  rpc: RpcMap<'attribution'>;
  /** The read model the consumers maintain (rebuilds go through it). */
  readModel: ReadModel;
}

/**
 * Every consumer and RPC handler of the module over one ClickHouse store. `publish` sends the
 * conversion.attributed messages the read model produces (the module's bus; a test's recorder).
 */
export function attributionHandlers(ch: ClickHouseStore, publish: AttributedPublisher): AttributionHandlers {
  const readModel = new ReadModel(ch, publish);
  const deps = { touches: new TouchesRepo(ch), conversions: new ConversionsRepo(ch), merges: new IdentityMergesRepo(ch), outcomes: new OutcomesRepo(ch), readModel };
  return {
    readModel,
    consumers: {
      ...attributionConsumers(deps),
      ...milestonesConsumers(ch, readModel),
      ...adsConsumers(ch),
      ...productsConsumers(ch),
      ...crmJourneyConsumers(ch),
    },
    rpc: {
      ...journeyRpcHandlers(deps),
      ...crmJourneyRpcHandlers(ch, deps),
      ...metricsRpcHandlers(ch),
      ...pathsRpcHandlers(ch),
      ...coverageRpcHandlers(ch),
      ...productsRpcHandlers(ch),
      ...adsRpcHandlers(ch),
      ...dealTouchesRpcHandlers(ch),
      ...adClicksRpcHandlers(ch),
    },
  };
}

export function createAttributionModule(): RunnableModule {
  return defineModule({
    name: 'attribution',
    needs: {
      clickhouse: { database: 'attribution', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
    },
    async create(ctx) {
      const handlers = attributionHandlers(ctx.clickhouse, async (messages) => {
        await ctx.bus.publishMany(messages.map((m) => ({
          type: 'conversion.attributed', id: m.id, source: 'attribution', workspace_id: m.payload.workspace_id, website_id: m.payload.website_id, payload: m.payload,
        })));
      });
      const adminRoutes: ModuleLifecycle['adminRoutes'] = (router) =>
        rebuildAdminRoutes(router, handlers.readModel, (error, job) => ctx.logger.error({ err: error, website_id: job.website_id, job: job.id }, 'read model rebuild failed'));
      return { consumers: handlers.consumers, rpc: handlers.rpc, adminRoutes };
    },
  });
}

export { contactJourney, type ContactJourney, type JourneySession, type JourneyEvent, type JourneyConversion } from './contact-journey';
export { ConversionsRepo } from './conversions.repo';
export { IdentityMergesRepo } from './identity-merges.repo';
export { OutcomesRepo, type ConversionOutcome } from './outcomes.repo';
export { TouchesRepo } from './touches.repo';
export { ReadModel, type RebuildProgress, type RebuildResult } from './read-model/read-model';
export type { AttributedMessage, AttributedPublisher } from './read-model/attributed';
