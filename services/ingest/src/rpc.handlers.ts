// The two ways events arrive: POST /v1/events (ingest.postEvents, through the gateway) and tracker
// hits (ingest.collect, forwarded by the gateway's public /collect). Both answer only after the
// accepted batch is confirmed by the bus, so an acknowledged event survives a crash.
import { createHash, randomUUID } from 'node:crypto';
import { ProblemError, type Bus, type KvStore } from '@sightline/kit';
import type { ApiRequest, ApiResponse, ClassifiedEventV1, EventBatchV1, IngestWebsiteV1 } from '@sightline/proto-schemas';
import type { Classifier } from './classify/classify';
import { intakeApiEvents, intakeTrackerHits, type EventError } from './intake';

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

export interface CollectRequest {
  website: IngestWebsiteV1;
  ip: string | null;
  user_agent: string | null;
  body: unknown;
}

export function ingestRpcHandlers(deps: { bus: Bus; kv: KvStore; classifier: Classifier }) {
  async function publishBatch(batchId: string, website: IngestWebsiteV1, source: string, events: ClassifiedEventV1[]): Promise<void> {
    if (events.length === 0) return;
    const payload: EventBatchV1 = { batch_id: batchId, website, events };
    await deps.bus.publish({ type: 'ingest.batch_received', id: batchId, source, workspace_id: website.workspace_id, website_id: website.id, payload });
  }

  return {
    'ingest.postEvents': async (raw: unknown): Promise<ApiResponse<EventsResult>> => {
      const request = raw as ApiRequest<Record<string, unknown>, EventsBody>;
      const website = request.website;
      if (!website) throw new Error('ingest.postEvents needs a resolved website');
      const site: IngestWebsiteV1 = { ...website, workspace_id: request.workspace.id };
      const key = request.headers.idempotency_key ?? null;
      const bodyHash = createHash('sha256').update(JSON.stringify([site.id, request.body])).digest('hex');
      const memoKey = `idempotency:events:${request.workspace.id}:${key}`;
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
      const intake = intakeApiEvents({ events: request.body.events, website: site, classifier: deps.classifier, idempotencyKey: key, receivedAt: new Date() });
      // With a key the batch id is derived from it, so a concurrent duplicate dedupes downstream too.
      const batchId = key ? `api:${createHash('sha256').update(`${request.workspace.id}:${key}`).digest('hex').slice(0, 32)}` : `api:${randomUUID()}`;
      await publishBatch(batchId, site, `api:${request.key.id}`, intake.events);
      const result: EventsResult = { accepted: intake.events.length, rejected: intake.errors.length, errors: intake.errors };
      if (key) await deps.kv.set(memoKey, JSON.stringify({ hash: bodyHash, result }), { ttlMs: IDEMPOTENCY_TTL_MS });
      return { status: 200, body: result };
    },

    'ingest.collect': async (raw: unknown): Promise<{ accepted: number; rejected: number }> => {
      const request = raw as CollectRequest;
      const intake = intakeTrackerHits({ body: request.body, website: request.website, ip: request.ip, userAgent: request.user_agent, classifier: deps.classifier, receivedAt: new Date() });
      await publishBatch(`tracker:${randomUUID()}`, request.website, 'tracker', intake.events);
      return { accepted: intake.events.length, rejected: intake.rejected };
    },
  };
}
