// Bus consumers: each stores its facts, then brings the read model up to date with them (in that
// order, so a computation sees every fact stored before it started). Deliveries that arrive
// together are coalesced into one insert per table (ClickHouse is limited by inserts, not rows); the
// insert's deduplication token derives from the message ids, so at-least-once delivery stays exact,
// and recomputing an attempt twice stores the same answer.
import { coalesce, groupToken, type ConsumerMap } from '@sightline/kit';
import type { MessageType } from '@sightline/proto-schemas';
import type { IdentityMergesRepo } from './identity-merges.repo';
import type { ProjectionRepo } from './projection.repo';
import type { ReadModel } from './read-model';

/** Called after a group of messages is fully handled (tests wait on it). */
export type HandledHook = (type: MessageType, messages: number) => void;

export function projectionConsumers(projection: ProjectionRepo, merges: IdentityMergesRepo, readModel: ReadModel, handled: HandledHook = () => undefined): ConsumerMap<'funnels'> {
  return {
    'events.classified': coalesce({
      keyOf: (envelope) => envelope.payload.website.id,
      weightOf: (envelope) => envelope.payload.events.length,
      handle: async (group) => {
        const { website } = (group[0] as (typeof group)[number]).payload;
        const events = group.flatMap((e) => e.payload.events);
        await projection.insertEvents(groupToken(group), website.workspace_id, website.id, events);
        await readModel.eventsStored(website.workspace_id, website.id, events);
        handled('events.classified', group.length);
      },
    }),
    'identity.merged': async (envelope) => {
      const merge = envelope.payload;
      await merges.insertMerge(envelope.id, merge.workspace_id, merge.from_identity_id, merge.into_identity_id);
      await merges.refreshRoots(`${envelope.id}:roots`, merge.workspace_id, merge.into_identity_id);
      await readModel.identitiesMerged(merge.workspace_id, [merge.from_identity_id, merge.into_identity_id]);
      handled('identity.merged', 1);
    },
    // Subscription lifecycle facts reach Sightline as milestones (crm-sync: CRM lifecycle stages,
    // deals and file imports); funnels keeps those whose stage is a revenue event.
    'milestone.reached': coalesce({
      handle: async (group) => {
        const stored = await projection.insertMilestones(groupToken(group), group.map((e) => e.payload));
        await readModel.milestonesStored(stored);
        handled('milestone.reached', group.length);
      },
    }),
  };
}
