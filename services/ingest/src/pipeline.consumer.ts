// The second half of intake: accepted batches, already durable on the bus, get identities and
// sessions, are stored, and are announced downstream. Batches of one website that arrive together
// are processed as one group (one identity round trip, one session pass, one ClickHouse insert):
// small inserts are what limits ClickHouse, and session state needs one writer per website anyway.
// Every step is idempotent, so a redelivered batch changes nothing and republishes the same ids.
import type { Bus, Envelope, PublishInput } from '@sightline/kit';
import type { ConversionCreatedV1, EventBatchV1, IdentityMergedV1 } from '@sightline/proto-schemas';
import type { EventsRepo } from './events.repo';
import type { IdentityGraph } from './identity-graph';
import { derivedUuid } from './identity-keys';
import { CONVERSION_EVENT_TYPES } from './intake';
import type { Sessionizer } from './sessions';

/** A group stops growing at this many events (one ClickHouse insert). */
const MAX_GROUP_EVENTS = 10_000;

interface Pending {
  source: string;
  batch: EventBatchV1;
  done: (error?: unknown) => void;
}

interface PipelineDeps {
  identity: IdentityGraph;
  sessions: Sessionizer;
  repo: EventsRepo;
  bus: Bus;
}

export function batchReceivedHandler(deps: PipelineDeps) {
  const waiting = new Map<string, Pending[]>();
  const running = new Set<string>();

  const drain = async (websiteId: string): Promise<void> => {
    running.add(websiteId);
    for (;;) {
      const queue = waiting.get(websiteId) ?? [];
      if (queue.length === 0) break;
      const group: Pending[] = [];
      let size = 0;
      while (queue.length > 0 && (group.length === 0 || size + (queue[0] as Pending).batch.events.length <= MAX_GROUP_EVENTS)) {
        const next = queue.shift() as Pending;
        size += next.batch.events.length;
        group.push(next);
      }
      try {
        await processGroup(deps, group);
        for (const p of group) p.done();
      } catch (error) {
        // Every batch of the group is nacked and retried by the bus on its own.
        for (const p of group) p.done(error);
      }
    }
    running.delete(websiteId);
  };

  return (envelope: Envelope): Promise<void> =>
    new Promise((resolve, reject) => {
      const batch = envelope.payload as EventBatchV1;
      const queue = waiting.get(batch.website.id) ?? [];
      queue.push({ source: envelope.source, batch, done: (error) => (error === undefined ? resolve() : reject(error)) });
      waiting.set(batch.website.id, queue);
      if (!running.has(batch.website.id)) void drain(batch.website.id);
    });
}

async function processGroup(deps: PipelineDeps, group: Pending[]): Promise<void> {
  const website = (group[0] as Pending).batch.website;
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
