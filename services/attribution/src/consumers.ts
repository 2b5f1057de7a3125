// Bus consumers. Deliveries that arrive together are coalesced into one insert (ClickHouse is
// limited by inserts, not rows). Delivery is at least once: the insert's deduplication token
// derives from the message ids, and every read tolerates a duplicate that slipped past it (a group
// redelivered after a crash may be regrouped).
import { createHash } from 'node:crypto';
import { coalesce, type Envelope, type MessageHandler } from '@sightline/kit';
import type { ConversionCreatedV1, ConversionValueChangedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { ConversionsRepo } from './conversions.repo';
import type { IdentityMergesRepo } from './identity-merges.repo';
import type { OutcomesRepo } from './outcomes.repo';
import type { TouchesRepo } from './touches.repo';

export interface ConsumerDeps {
  touches: TouchesRepo;
  conversions: ConversionsRepo;
  merges: IdentityMergesRepo;
  outcomes: OutcomesRepo;
}

export function attributionConsumers(deps: ConsumerDeps): Record<string, MessageHandler> {
  return {
    'events.classified': coalesce({
      keyOf: (envelope) => (envelope.payload as EventBatchV1).website.id,
      weightOf: (envelope) => (envelope.payload as EventBatchV1).events.length,
      handle: async (group) => {
        const { website } = group[0]?.payload as EventBatchV1;
        const events = group.flatMap((e) => (e.payload as EventBatchV1).events);
        await deps.touches.insertEvents(groupToken(group), website.workspace_id, website.id, events);
      },
    }),
    'conversion.created': coalesce({
      handle: async (group) => {
        await deps.conversions.insertMany(groupToken(group), group.map((e) => ({ conversion: e.payload as ConversionCreatedV1 })));
      },
    }),
    // Outcome values written back through the API: revenue metrics read the latest sales value.
    'conversion.value_changed': coalesce({
      handle: (group) => deps.outcomes.insertMany(groupToken(group), group.map((e) => e.payload as ConversionValueChangedV1)),
    }),
    'identity.merged': async (envelope: Envelope): Promise<void> => {
      const merge = envelope.payload as IdentityMergedV1;
      await deps.merges.insertMerge(envelope.id, merge.workspace_id, merge.from_identity_id, merge.into_identity_id, envelope.occurred_at);
      await deps.merges.refreshRoots(`${envelope.id}:roots`, merge.workspace_id, merge.into_identity_id);
    },
  };
}

/** The deduplication token of a group: the same messages give the same token. */
function groupToken(group: Envelope[]): string {
  return group.length === 1 ? (group[0] as Envelope).id : createHash('sha256').update(group.map((e) => e.id).sort().join(',')).digest('hex');
}
