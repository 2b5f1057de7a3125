// The two ways events arrive: POST /v1/events (ingest.postEvents, through the gateway) and tracker
// hits (ingest.collect, forwarded by the gateway's public /collect). Both answer only after the
// accepted batch is confirmed by the bus, so an acknowledged event survives a crash.
import { createHash, randomUUID } from 'node:crypto';
import { findInputFault, InvalidMessageError, MAX_JSON_DEPTH, MAX_JSON_VALUES, ProblemError, type KvStore, type RpcMap, type ServiceBus } from '@sightline/kit';
import type { ApiRequest, ApiResponse, ClassifiedEventV1, CollectRequest, EventBatchV1, IngestWebsiteV1 } from '@sightline/proto-schemas';
import type { Classifier } from './classify/classify';
import { intakeApiEvents, intakeTrackerHits, orderingKey, refusalsOf, type EventError } from './intake';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

interface EventsBody {
  website?: string;
  events: unknown[];
}

export interface EventsResult {
  accepted: number;
  rejected: number;
  errors: EventError[];
}

/**
 * The batch's depth and size, before the hash below recurses through it (JSON.stringify overflows the
 * stack a few thousand levels down). The gateway forwards nothing past these bounds (it cuts a
 * too-deep event so that it is rejected below with its index); this keeps ingest safe whoever calls.
 */
function refuseUnbounded(body: unknown): void {
  const fault = findInputFault(body, { text: false });
  if (!fault) return;
  throw new ProblemError('invalid-request', {
    detail: `The body ${fault.path === '' ? '' : `field "${fault.path.slice(0, 200)}" `}${fault.reason}.`,
    remediation: `Nest JSON at most ${MAX_JSON_DEPTH} levels deep and send at most ${MAX_JSON_VALUES.toLocaleString('en-US')} values per request.`,
  });
}

export function ingestRpcHandlers(deps: { bus: ServiceBus<'ingest'>; kv: KvStore; classifier: Classifier }): RpcMap<'ingest'> {
  /**
   * One ingest.batch_received per partition the batch's visitors fall in (partitionOf website and
   * visitor), so each visitor's events reach one pipeline reader in order. All are confirmed by the
   * bus before this resolves. Ids derive from the batch id, so a retried request republishes the same.
   */
  async function publishBatch(batchId: string, website: IngestWebsiteV1, source: string, events: readonly ClassifiedEventV1[]): Promise<void> {
    if (events.length === 0) return;
    const parts = new Map<number, ClassifiedEventV1[]>();
    for (const event of events) {
      const partition = deps.bus.partitionOf(orderingKey(website.id, event));
      const part = parts.get(partition);
      if (part) part.push(event);
      else parts.set(partition, [event]);
    }
    await deps.bus.publishMany([...parts].map(([partition, part]) => {
      const id = parts.size === 1 ? batchId : `${batchId}:p${partition}`;
      const payload: EventBatchV1 = { batch_id: id, website, events: part };
      return { type: 'ingest.batch_received' as const, id, partition, source, workspace_id: website.workspace_id, website_id: website.id, payload };
    }));
  }

  /**
   * Publishes the accepted events. The bus checks each against its schema; when it refuses the
   * batch, the events it would refuse are found one by one, rejected, and the rest published.
   */
  async function publishAccepted(batchId: string, website: IngestWebsiteV1, source: string, events: ClassifiedEventV1[]): Promise<{ published: number; refused: Map<number, string> }> {
    try {
      await publishBatch(batchId, website, source, events);
      return { published: events.length, refused: new Map() };
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      const refused = refusalsOf(events);
      if (refused.size === 0) throw error;
      const kept = events.filter((_, i) => !refused.has(i));
      await publishBatch(batchId, website, source, kept);
      return { published: kept.length, refused };
    }
  }

  return {
    'ingest.postEvents': async (request: ApiRequest<Record<string, unknown>, EventsBody>): Promise<ApiResponse<EventsResult>> => {
      const website = request.website;
      if (!website) throw new Error('ingest.postEvents needs a resolved website');
      const site: IngestWebsiteV1 = { ...website, workspace_id: request.workspace.id };
      // Idempotency records belong to the API key that made them (another key of the workspace
      // reusing the same Idempotency-Key is another request), so event ids derive from both.
      const key = request.headers.idempotency_key ?? null;
      const scopedKey = key === null ? null : `${request.key.id}:${key}`;
      refuseUnbounded(request.body);
      const bodyHash = createHash('sha256').update(JSON.stringify([site.id, request.body])).digest('hex');
      const memoKey = `idempotency:events:${request.workspace.id}:${scopedKey}`;
      if (key) {
        const memo = await deps.kv.get(memoKey);
        if (memo) {
          const stored = JSON.parse(memo) as { hash: string; result: EventsResult };
          if (stored.hash !== bodyHash) {
            throw new ProblemError('conflict', {
              detail: 'This Idempotency-Key was already used with a different request body.',
              remediation: 'Use a new Idempotency-Key for a new request; reuse a key only to retry the identical request.',
            });
          }
          return { status: 200, body: stored.result, headers: { 'Idempotent-Replayed': 'true' } };
        }
      }
      // Refused (503) before classifying when the bus is too far behind to take the batch.
      await deps.bus.admit();
      const intake = intakeApiEvents({ events: request.body.events, website: site, classifier: deps.classifier, idempotencyKey: scopedKey, receivedAt: new Date() });
      // With a key the batch id is derived from it, so a concurrent duplicate dedupes downstream too.
      const batchId = scopedKey ? `api:${createHash('sha256').update(`${request.workspace.id}:${scopedKey}`).digest('hex').slice(0, 32)}` : `api:${randomUUID()}`;
      const { published, refused } = await publishAccepted(batchId, site, `api:${request.key.id}`, intake.events);
      const errors = refused.size === 0
        ? intake.errors
        : [...intake.errors, ...[...refused].map(([i, detail]) => ({ index: intake.indexes[i] as number, detail }))].sort((a, b) => a.index - b.index);
      const result: EventsResult = { accepted: published, rejected: errors.length, errors };
      if (key) await deps.kv.set(memoKey, JSON.stringify({ hash: bodyHash, result }), { ttlMs: IDEMPOTENCY_TTL_MS });
      return { status: 200, body: result };
    },

    'ingest.collect': async (request: CollectRequest): Promise<{ accepted: number; rejected: number }> => {
      await deps.bus.admit();
      const intake = intakeTrackerHits({ body: request.body, website: request.website, ip: request.ip, userAgent: request.user_agent, classifier: deps.classifier, receivedAt: new Date() });
      const { published, refused } = await publishAccepted(`tracker:${randomUUID()}`, request.website, 'tracker', intake.events);
      return { accepted: published, rejected: intake.rejected + refused.size };
    },
  };
}
