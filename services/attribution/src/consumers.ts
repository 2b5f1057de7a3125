// Bus consumers. Delivery is at least once: each handler writes one insert whose deduplication
// token is the message id, and every read tolerates a duplicate that slipped past it.
import type { Envelope, MessageHandler } from '@sightline/kit';
import type { ConversionCreatedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { ConversionsRepo } from './conversions.repo';
import type { IdentityMergesRepo } from './identity-merges.repo';
import type { TouchesRepo } from './touches.repo';

export interface ConsumerDeps {
  touches: TouchesRepo;
  conversions: ConversionsRepo;
  merges: IdentityMergesRepo;
}

export function attributionConsumers(deps: ConsumerDeps): Record<string, MessageHandler> {
  return {
    'events.classified': async (envelope: Envelope): Promise<void> => {
      const batch = envelope.payload as EventBatchV1;
      await deps.touches.insertEvents(envelope.id, batch.website.workspace_id, batch.website.id, batch.events);
    },
    'conversion.created': async (envelope: Envelope): Promise<void> => {
      await deps.conversions.insert(envelope.id, envelope.payload as ConversionCreatedV1);
    },
    'identity.merged': async (envelope: Envelope): Promise<void> => {
      const merge = envelope.payload as IdentityMergedV1;
      await deps.merges.insertMerge(envelope.id, merge.workspace_id, merge.from_identity_id, merge.into_identity_id, envelope.occurred_at);
    },
  };
}
