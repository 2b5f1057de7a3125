// The attribution module: turns classified events into sessions (touches), keeps conversions and
// identity merges and outcome values written back (PATCH /contacts), and answers the journeys. It owns the ClickHouse database `attribution`.
// Metrics, paths, coverage, products, ads performance and conversion.attributed come later.
import { join } from 'node:path';
import { defineModule, type ServiceModule } from '@sightline/kit';
import { attributionConsumers } from './consumers';
import { ConversionsRepo } from './conversions.repo';
import { IdentityMergesRepo } from './identity-merges.repo';
import { journeyRpcHandlers } from './journeys.rpc';
import { OutcomesRepo } from './outcomes.repo';
import { TouchesRepo } from './touches.repo';

export function createAttributionModule(): ServiceModule {
  return defineModule({
    name: 'attribution',
    needs: {
      clickhouse: { database: 'attribution', migrationsDir: join(__dirname, '..', 'migrations', 'clickhouse') },
    },
    async create(ctx) {
      const ch = ctx.clickhouse!;
      const deps = { touches: new TouchesRepo(ch), conversions: new ConversionsRepo(ch), merges: new IdentityMergesRepo(ch), outcomes: new OutcomesRepo(ch) };
      return {
        rpc: journeyRpcHandlers(deps),
        consumers: attributionConsumers(deps),
      };
    },
  });
}

export { contactJourney, type ContactJourney, type JourneySession, type JourneyEvent, type JourneyConversion } from './contact-journey';
export { ConversionsRepo } from './conversions.repo';
export { IdentityMergesRepo } from './identity-merges.repo';
export { OutcomesRepo, type ConversionOutcome } from './outcomes.repo';
export { TouchesRepo } from './touches.repo';
