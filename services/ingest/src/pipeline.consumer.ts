// The second half of intake: accepted batches, already durable on the bus, get identities and
// sessions, are stored, and are announced downstream. Batches of one website that arrive together
// are processed as one group (one identity round trip, one session pass, one ClickHouse insert):
// small inserts are what limits ClickHouse, and session state needs one writer per website anyway.
// Every step is idempotent, so a redelivered batch changes nothing and republishes the same ids.
import { coalesce, type Bus, type MessageHandler, type PublishInput } from '@sightline/kit';
import type { ConversionCreatedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { EventsRepo } from './events.repo';
import type { IdentityGraph } from './identity-graph';
import { derivedUuid } from './identity-keys';
import { CONVERSION_EVENT_TYPES } from './intake';
import type { Sessionizer } from './sessions';

interface PipelineDeps {
  identity: IdentityGraph;
  sessions: Sessionizer;
  repo: EventsRepo;
  bus: Bus;
}

export function batchReceivedHandler(deps: PipelineDeps): MessageHandler {
  return coalesce({
    keyOf: (envelope) => (envelope.payload as EventBatchV1).website.id,
    weightOf: (envelope) => (envelope.payload as EventBatchV1).events.length,
    maxWeight: 10_000,
    handle: (group) => processGroup(deps, group.map((e) => ({ source: e.source, batch: e.payload as EventBatchV1 }))),
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
  const messages: PublishInput[] = [];
  for (const { source, batch } of group) {
    messages.push({ ...scope, type: 'events.classified', id: derivedUuid(batch.batch_id, 'classified'), source, payload: batch });
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
