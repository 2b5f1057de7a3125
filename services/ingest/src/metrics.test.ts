// The intake counter wraps ingest's handlers: counts what they answer, once per request (an
// idempotent replay is the same request again).
import { Registry } from 'prom-client';
import type { RpcMap } from '@sightline/kit';
import type { ApiRequest, CollectRequest } from '@sightline/proto-schemas';
import { countIngested } from './metrics';

const value = async (registry: Registry, labels: string): Promise<number | undefined> => {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`sightline_ingest_events_total{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

describe('ingest intake metrics', () => {
  it('counts accepted and rejected events by path, and not a replayed request', async () => {
    let replayed = false;
    const handlers = {
      'ingest.postEvents': async () => ({ status: 200, body: { accepted: 3, rejected: 1, errors: [] }, ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}) }),
      'ingest.collect': async () => ({ accepted: 2, rejected: 0 }),
    } as unknown as RpcMap<'ingest'>;
    const registry = new Registry();
    const counted = countIngested(handlers, registry);
    await counted['ingest.postEvents']({} as ApiRequest<Record<string, unknown>, { events: unknown[] }>);
    replayed = true;
    await counted['ingest.postEvents']({} as ApiRequest<Record<string, unknown>, { events: unknown[] }>);
    await counted['ingest.collect']({} as CollectRequest);
    expect(await value(registry, 'path="api",outcome="accepted"')).toBe(3);
    expect(await value(registry, 'path="api",outcome="rejected"')).toBe(1);
    expect(await value(registry, 'path="collect",outcome="accepted"')).toBe(2);
    expect(await value(registry, 'path="collect",outcome="rejected"')).toBe(0);
  });
});
