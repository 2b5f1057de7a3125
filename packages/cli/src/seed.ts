// `sightline seed`: generates a realistic workspace with @sightline/datagen and sends it through the
// public ingestion paths (tracker /collect and POST /v1/events) of a running instance, so seeded
// data is classified, stitched and sessionised exactly like real traffic. POST /v1/events goes
// through the typed API client (@sightline/client), which retries 429 and 5xx after Retry-After.
import { SingleBar, Presets } from 'cli-progress';
import { createSightlineClient, problemKind } from '@sightline/client';
import { generateWorkspace, sendWorkspace, type InboundEvent, type SendResult } from '@sightline/datagen';
import { adminRequest, type AdminConnection } from './admin-client';

export interface SeedOptions {
  website: string;
  days: number;
  visitors: number;
  seed: number;
  /** Public base URL of the instance, e.g. http://localhost:8080. */
  url: string;
  concurrency: number;
  /** Draw a progress bar (a terminal) or print nothing until the summary. */
  progress: boolean;
}

export async function seedWebsite(conn: AdminConnection, options: SeedOptions): Promise<SendResult> {
  const website = await adminRequest<{ id: string; workspace_id: string; public_id: string; currency: string }>(conn, 'GET', `/websites/${encodeURIComponent(options.website)}`);
  // A short-lived key on the internal plan, so seeding is not throttled; revoked when done.
  const key = await adminRequest<{ key: string; key_id: string }>(conn, 'POST', '/keys', {
    workspace_id: website.workspace_id,
    name: 'sightline seed (temporary)',
    scopes: ['events:write'],
    plan: 'internal',
    websites: [options.website],
  });
  const workspace = generateWorkspace({
    seed: options.seed,
    days: options.days,
    visitors: options.visitors,
    domain: options.website,
    siteId: website.public_id,
    currency: website.currency,
  });
  const api = createSightlineClient({ baseUrl: options.url, apiKey: key.key, retry: { maxAttempts: 5 } });
  // The generator's events are typed against the API's own InboundEvent here: a drift fails to compile.
  const sendEvents = async (body: { events: InboundEvent[] }, idempotencyKey: string) => {
    const { data, error, response } = await api.POST('/v1/events', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body });
    if (data) return data;
    throw new Error(`events ${response.status}${error ? ` ${problemKind(error)}: ${error.detail}` : ''}`);
  };
  const bar = options.progress ? new SingleBar({ format: ' seeding {website} [{bar}] {percentage}% | {events} events | {people} people', hideCursor: true }, Presets.shades_classic) : null;
  bar?.start(100, 0, { website: options.website, events: 0, people: 0 });
  try {
    return await sendWorkspace(workspace, {
      baseUrl: options.url,
      apiKey: key.key,
      sendEvents,
      concurrency: options.concurrency,
      onProgress: (fraction, stats) => bar?.update(Math.floor(fraction * 100), { website: options.website, events: stats.collectEvents + stats.serverEvents, people: stats.people }),
    });
  } finally {
    bar?.update(100);
    bar?.stop();
    await adminRequest(conn, 'DELETE', `/keys/${key.key_id}`);
  }
}
