// The second half of intake: accepted batches, already durable on the bus, get identities and
// sessions, are stored, and are announced downstream. Batches of one website that arrive together
// are processed as one group (one identity round trip, one session pass, one ClickHouse insert):
// small inserts are what limits ClickHouse, and session state needs one writer per website anyway.
// Every step is idempotent, so a redelivered batch changes nothing and republishes the same ids.
import { coalesce, type MessageHandlerOf, type PublishInputOf, type ServiceBus } from '@sightline/kit';
import type { ConversionCreatedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { EventsRepo } from './events.repo';
import type { IdentityGraph } from './identity-graph';
import { derivedUuid } from './identity-keys';
import { CONVERSION_EVENT_TYPES } from './intake';
import type { Sessionizer } from './sessions';

/** Most events one events.classified message carries (about 1 kB each on the wire). */
export const CLASSIFIED_CHUNK = 2_000;

interface PipelineDeps {
  identity: IdentityGraph;
  sessions: Sessionizer;
  repo: EventsRepo;
  bus: ServiceBus<'ingest'>;
}

export function batchReceivedHandler(deps: PipelineDeps): MessageHandlerOf<'ingest.batch_received'> {
  return coalesce({
    keyOf: (envelope) => envelope.payload.website.id,
    weightOf: (envelope) => envelope.payload.events.length,
    maxWeight: 10_000,
    handle: (group) => processGroup(deps, group.map((e) => ({ source: e.source, batch: e.payload }))),
  });
}

async function processGroup(deps: PipelineDeps, group: { source: string; batch: EventBatchV1 }[]): Promise<void> {
  const website = (group[0] as { batch: EventBatchV1 }).batch.website;
  const events = group.flatMap((p) => p.batch.events);
  const merges = await deps.identity.resolve(website.workspace_id, events);
  await deps.sessions.assign(website.id, events);
  const token = derivedUuid(...group.map((p) => p.batch.batch_id).sort());
  await deps.repo.insertNew(token, website.workspace_id, website.id, events);

  const scope = { workspace_id: website.workspace_id, website_id: website.id };
  const messages: PublishInputOf<'events.classified' | 'conversion.created' | 'identity.merged'>[] = [];
  // The group goes downstream as few large messages rather than one per intake batch: consumers
  // store what one message (or one coalesced group) brings in one insert, and ClickHouse costs per
  // insert far more than per row. Ids derive from the group, so a retried group republishes the same.
  for (let at = 0, part = 0; at < events.length; at += CLASSIFIED_CHUNK, part += 1) {
    const chunk = events.slice(at, at + CLASSIFIED_CHUNK);
    const batchId = `group:${token}:${part}`;
    messages.push({ ...scope, type: 'events.classified', id: derivedUuid(token, 'classified', String(part)), source: sourceOf(group), payload: { batch_id: batchId, website, events: chunk } });
  }
  for (const { source, batch } of group) {
    for (const event of batch.events) {
      if (!CONVERSION_EVENT_TYPES.has(event.event_type)) continue;
      const payload: ConversionCreatedV1 = {
        conversion_id: event.event_id,
        website_id: website.id,
        workspace_id: website.workspace_id,
        identity_id: event.identity_id,
        anonymous_id: event.anonymous_id,
        email: event.email,
        phone: event.phone,
        event_type: event.event_type,
        event_name: event.event_name,
        occurred_at: event.occurred_at,
        revenue: event.revenue,
        currency: event.currency,
        properties: event.properties,
        origin: event.origin,
      };
      messages.push({ ...scope, type: 'conversion.created', id: derivedUuid(event.event_id, 'conversion.created'), occurred_at: event.occurred_at, source, payload });
    }
  }
  for (const merge of merges) {
    const payload: IdentityMergedV1 = { workspace_id: website.workspace_id, from_identity_id: merge.from, into_identity_id: merge.into };
    messages.push({ ...scope, type: 'identity.merged', id: derivedUuid(website.workspace_id, merge.from, merge.into), source: 'ingest', payload });
  }
  await deps.bus.publishMany(messages);
}

/** The group's source when all its batches share one (api:<key>, tracker), else `ingest`. */
function sourceOf(group: { source: string }[]): string {
  const first = group[0]?.source ?? 'ingest';
  return group.every((p) => p.source === first) ? first : 'ingest';
}
