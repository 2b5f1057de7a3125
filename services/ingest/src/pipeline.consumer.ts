// The second half of intake: an accepted batch, already durable on the bus, gets identities and
// sessions, is stored, and is announced downstream. Every step is idempotent, so a redelivered
// batch (after a crash anywhere in here) changes nothing and publishes the same message ids.
import type { Bus, Envelope, PublishInput } from '@sightline/kit';
import type { ConversionCreatedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { EventsRepo } from './events.repo';
import type { IdentityGraph } from './identity-graph';
import { derivedUuid } from './identity-keys';
import { CONVERSION_EVENT_TYPES } from './intake';
import type { Sessionizer } from './sessions';

export function batchReceivedHandler(deps: { identity: IdentityGraph; sessions: Sessionizer; repo: EventsRepo; bus: Bus }) {
  // Session state is read-modify-write per visitor, so batches of one website run one at a time.
  const queues = new Map<string, Promise<void>>();
  return async (envelope: Envelope): Promise<void> => {
    const batch = envelope.payload as EventBatchV1;
    const previous = queues.get(batch.website.id) ?? Promise.resolve();
    const run = previous.then(() => processBatch(deps, envelope.source, batch));
    const settled = run.catch(() => undefined);
    queues.set(batch.website.id, settled);
    void settled.then(() => {
      if (queues.get(batch.website.id) === settled) queues.delete(batch.website.id);
    });
    await run;
  };
}

async function processBatch(
  deps: { identity: IdentityGraph; sessions: Sessionizer; repo: EventsRepo; bus: Bus },
  source: string,
  batch: EventBatchV1,
): Promise<void> {
  const { website, events } = batch;
  const merges = await deps.identity.resolve(website.workspace_id, events);
  await deps.sessions.assign(website.id, events);
  await deps.repo.insertBatch(batch.batch_id, website.workspace_id, website.id, events);

  const scope = { workspace_id: website.workspace_id, website_id: website.id };
  const messages: PublishInput[] = [
    { ...scope, type: 'events.classified', id: derivedUuid(batch.batch_id, 'classified'), source, payload: batch },
  ];
  for (const merge of merges) {
    const payload: IdentityMergedV1 = { workspace_id: website.workspace_id, from_identity_id: merge.from, into_identity_id: merge.into };
    messages.push({ ...scope, type: 'identity.merged', id: derivedUuid(batch.batch_id, merge.from, merge.into), source, payload });
  }
  for (const event of events) {
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
    };
    messages.push({ ...scope, type: 'conversion.created', id: derivedUuid(event.event_id, 'conversion.created'), occurred_at: event.occurred_at, source, payload });
  }
  await deps.bus.publishMany(messages);
}
