// Replays a generated workspace through the public ingestion endpoints, exactly as a browser and a
// backend would call them, so seeded data goes through the same validation and classification as
// real traffic. Orders, milestones, ad spend and contacts are not sent here: they enter through the
// store, CRM and ad connectors, which the caller feeds from the workspace's other iterators.
import type { Workspace } from './generate';
import type { InboundEvent, IngestBatch, WorkspaceSummary } from './types';

export interface SendOptions {
  /** Service base URL, e.g. http://127.0.0.1:8080 (no trailing slash needed). */
  baseUrl: string;
  /** API key with events:write, sent as a bearer token to the events endpoint and with collect replays. */
  apiKey: string;
  collectPath?: string;
  eventsPath?: string;
  /** Requests in flight at once; default 8. */
  concurrency?: number;
  /** Attempts per request on 429, 5xx or network errors; default 5. */
  maxAttempts?: number;
  /** Injected for tests or custom agents; default the global fetch. */
  fetch?: typeof fetch;
  /** Called at most every progressEvery batches with the window position (0..1) and counts so far. */
  onProgress?: (fraction: number, stats: WorkspaceSummary) => void;
  progressEvery?: number;
  /**
   * Sends one POST /v1/events batch instead of the built-in fetch (the CLI passes its typed API
   * client): resolves the counts the API reported, throws when the request failed for good. It
   * does its own retrying, so a batch it fails is counted as failed at once.
   */
  sendEvents?: (body: { events: InboundEvent[] }, idempotencyKey: string) => Promise<{ accepted: number; rejected: number }>;
}

export interface SendResult {
  collectRequests: number;
  eventsRequests: number;
  /** Server events the API reported as accepted and rejected. */
  accepted: number;
  rejected: number;
  /** Requests that failed for good (after retries), with the first few reasons. */
  failed: number;
  failures: string[];
  stats: WorkspaceSummary;
}

interface EventsResponseBody { accepted?: number; rejected?: number }

export async function sendWorkspace(workspace: Workspace, options: SendOptions): Promise<SendResult> {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const collectUrl = base + (options.collectPath ?? '/collect');
  const eventsUrl = base + (options.eventsPath ?? '/v1/events');
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const progressEvery = Math.max(1, options.progressEvery ?? 500);
  const { seed, domain } = workspace.options;
  const stream = workspace.stream();
  const result: SendResult = { collectRequests: 0, eventsRequests: 0, accepted: 0, rejected: 0, failed: 0, failures: [], stats: stream.stats };
  const inFlight = new Set<Promise<void>>();
  let eventsSeq = 0;
  let sent = 0;

  const post = async (batch: IngestBatch, idempotencyKey: string | null): Promise<void> => {
    if (batch.kind === 'events' && options.sendEvents) {
      try {
        const counts = await options.sendEvents(batch.body, idempotencyKey ?? '');
        result.accepted += counts.accepted;
        result.rejected += counts.rejected;
      } catch (err) {
        result.failed++;
        if (result.failures.length < 10) result.failures.push(`events request failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      return;
    }
    const init: RequestInit =
      batch.kind === 'collect'
        ? {
            method: 'POST',
            body: JSON.stringify(batch.body),
            // With the key the collect endpoint treats the batch as a replay and believes its historical
            // times, identities and visitor address (X-Forwarded-For); a browser's hits are timed by the server.
            headers: { 'Content-Type': 'text/plain', 'User-Agent': batch.userAgent, 'X-Forwarded-For': batch.ip, Origin: batch.origin, Authorization: `Bearer ${options.apiKey}` },
          }
        : {
            method: 'POST',
            body: JSON.stringify(batch.body),
            // A rerun with the same seed replays the same keys, so the API can drop the duplicates.
            headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${options.apiKey}`, 'Idempotency-Key': idempotencyKey ?? '' },
          };
    const url = batch.kind === 'collect' ? collectUrl : eventsUrl;
    for (let attempt = 1; ; attempt++) {
      let retryAfterMs = 250 * 2 ** (attempt - 1);
      let reason: string;
      try {
        const res = await doFetch(url, init);
        if (res.ok) {
          if (batch.kind === 'events') {
            const body = (await res.json().catch(() => ({}))) as EventsResponseBody;
            result.accepted += body.accepted ?? 0;
            result.rejected += body.rejected ?? 0;
          } else {
            await res.arrayBuffer().catch(() => undefined);
          }
          return;
        }
        reason = `${batch.kind} ${res.status}: ${(await res.text().catch(() => '')).slice(0, 300)}`;
        const retryAfter = Number(res.headers.get('retry-after'));
        if (Number.isFinite(retryAfter) && retryAfter > 0) retryAfterMs = retryAfter * 1000;
        if (res.status !== 429 && res.status < 500) attempt = maxAttempts; // a client error will not fix itself
      } catch (err) {
        reason = `${batch.kind} request failed: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (attempt >= maxAttempts) {
        result.failed++;
        if (result.failures.length < 10) result.failures.push(reason);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    }
  };

  for (const record of stream) {
    if (record.kind !== 'collect' && record.kind !== 'events') continue;
    let key: string | null = null;
    if (record.kind === 'collect') result.collectRequests++;
    else {
      result.eventsRequests++;
      key = `datagen-${domain}-${seed}-${++eventsSeq}`;
    }
    const p: Promise<void> = post(record, key).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (++sent % progressEvery === 0) options.onProgress?.(workspace.progress(record.ts), stream.stats);
  }
  await Promise.all(inFlight);
  options.onProgress?.(1, stream.stats);
  return result;
}
