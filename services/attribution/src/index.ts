// The attribution module. It owns the ClickHouse database `attribution`: classified events and the
// sessions (touches) built from them, conversions, identity merges and each identity's person,
// outcome values written back, milestones, ad reports, store orders and CRM memberships. It answers
// every analytics read: /metrics, /paths, /attribution/coverage, /products, /ads/performance and
// the contact, company and deal journeys. Where each endpoint lives: README.md.
import { join } from 'node:path';
import { defineModule, type ClickHouseStore, type MessageHandler, type RpcHandler, type ServiceModule } from '@sightline/kit';
import { adsConsumers } from './ads/ads.consumers';
import { adsRpcHandlers } from './ads/ads.rpc';
import { attributionConsumers } from './consumers';
import { ConversionsRepo } from './conversions.repo';
import { coverageRpcHandlers } from './coverage/coverage.rpc';
import { crmJourneyConsumers, crmJourneyRpcHandlers } from './crm-journeys/crm-journeys';
import { dealTouchesRpcHandlers } from './deal-touches/deal-touches.rpc';
import { IdentityMergesRepo } from './identity-merges.repo';
import { journeyRpcHandlers } from './journeys.rpc';
import { metricsRpcHandlers } from './metrics/metrics.rpc';
import { milestonesConsumers } from './milestones/milestones.consumers';
import { OutcomesRepo } from './outcomes.repo';
import { pathsRpcHandlers } from './paths/paths.rpc';
import { productsConsumers } from './products/products.consumers';
import { productsRpcHandlers } from './products/products.rpc';
import { TouchesRepo } from './touches.repo';

export interface AttributionHandlers {
  consumers: Record<string, MessageHandler>;
  /** Public operations reply an ApiResponse; internal methods (attribution.getDealTouches) their own shape. */
  rpc: Record<string, RpcHandler>;
}

/** Every consumer and RPC handler of the module over one ClickHouse store. */
export function attributionHandlers(ch: ClickHouseStore): AttributionHandlers {
  const deps = { touches: new TouchesRepo(ch), conversions: new ConversionsRepo(ch), merges: new IdentityMergesRepo(ch), outcomes: new OutcomesRepo(ch) };
  return {
    consumers: {
      ...attributionConsumers(deps),
      ...milestonesConsumers(ch),
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
    },
  };
}

export function createAttributionModule(): ServiceModule {
  return defineModule({
    name: 'attribution',
    needs: {
      clickhouse: { database: 'attribution', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
    },
    async create(ctx) {
      return attributionHandlers(ctx.clickhouse!);
    },
  });
}

export { contactJourney, type ContactJourney, type JourneySession, type JourneyEvent, type JourneyConversion } from './contact-journey';
export { ConversionsRepo } from './conversions.repo';
export { IdentityMergesRepo } from './identity-merges.repo';
export { OutcomesRepo, type ConversionOutcome } from './outcomes.repo';
export { TouchesRepo } from './touches.repo';
