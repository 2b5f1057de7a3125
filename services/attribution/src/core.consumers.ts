// Consumers of attribution's own facts: classified events (and the sessions in them), conversions,
// written-back outcome values and identity merges. Deliveries that arrive together are coalesced
// into one insert (ClickHouse is limited by inserts, not rows). Each group first stores its facts,
// then asks the read model to recompute what they touch, before the messages are acked. Delivery is
// at least once: inserts carry a token derived from the message ids, and every read tolerates a
// duplicate that slipped past it (a group redelivered after a crash may be regrouped).
import { coalesce, groupToken, type ConsumerMap } from '@sightline/kit';
import type { ConversionsRepo } from './conversions.repo';
import type { IdentityMergesRepo } from './identity-merges.repo';
import type { OutcomesRepo } from './outcomes.repo';
import type { ReadModel } from './read-model/read-model';
import type { TouchesRepo } from './touches.repo';

export interface ConsumerDeps {
  touches: TouchesRepo;
  conversions: ConversionsRepo;
  merges: IdentityMergesRepo;
  outcomes: OutcomesRepo;
  readModel: ReadModel;
}

type CoreTypes = 'events.classified' | 'conversion.created' | 'conversion.value_changed' | 'identity.merged';

export function attributionConsumers(deps: ConsumerDeps): Pick<ConsumerMap<'attribution'>, CoreTypes> {
  return {
    'events.classified': coalesce({
      keyOf: (envelope) => envelope.payload.website.id,
      weightOf: (envelope) => envelope.payload.events.length,
      handle: async (group) => {
        const { website } = (group[0] as (typeof group)[number]).payload;
        const events = group.flatMap((e) => e.payload.events);
        const token = groupToken(group);
        const sessions = await deps.touches.insertEvents(token, website.workspace_id, website.id, events);
        await deps.readModel.onSessions({ websiteId: website.id, workspaceId: website.workspace_id }, sessions, token);
      },
    }),
    'conversion.created': coalesce({
      handle: async (group) => {
        const token = groupToken(group);
        await deps.conversions.insertMany(token, group.map((e) => ({ conversion: e.payload })));
        await deps.readModel.onConversions(group.map(({ payload: c }) => ({
          website_id: c.website_id,
          workspace_id: c.workspace_id,
          conversion_id: c.conversion_id,
          identity_id: c.identity_id ?? '',
          email: c.email ?? '',
          occurred_ms: Date.parse(c.occurred_at),
          began_ms: Math.min(Date.parse(c.occurred_at), c.relationship_started_at ? Date.parse(c.relationship_started_at) : Number.POSITIVE_INFINITY),
        })), `${token}:read-model`);
      },
    }),
    // Outcome values written back through the API: the conversion's value in the read model changes.
    'conversion.value_changed': coalesce({
      handle: async (group) => {
        const token = groupToken(group);
        await deps.outcomes.insertMany(token, group.map((e) => e.payload));
        await deps.readModel.onOutcomes(group.map(({ payload: v }) => ({
          website_id: v.website_id, workspace_id: v.workspace_id, kind: 'conversion', outcome_id: v.conversion_id, occurred_ms: Date.parse(v.conversion_occurred_at),
        })), `${token}:read-model`);
      },
    }),
    'identity.merged': async (envelope) => {
      const merge = envelope.payload;
      await deps.merges.insertMerge(envelope.id, merge.workspace_id, merge.from_identity_id, merge.into_identity_id, envelope.occurred_at);
      const group = await deps.merges.refreshRoots(`${envelope.id}:roots`, merge.workspace_id, merge.into_identity_id);
      await deps.readModel.onMerge(merge.workspace_id, group.members, `${envelope.id}:read-model`);
    },
  };
}
