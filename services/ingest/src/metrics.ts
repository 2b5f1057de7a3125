// What ingest takes in, beyond the RPC and consumer metrics every module gets from the runner:
// `sightline_ingest_events_total{path, outcome}`: events accepted (published for the pipeline) or
// rejected, by path (api: POST /v1/events, collect: tracker hits). Replayed idempotent requests
// are not counted again.
import { counterOf, type ModuleContext, type RpcMap } from '@sightline/kit';

export function countIngested(handlers: RpcMap<'ingest'>, registry: ModuleContext['metrics']): RpcMap<'ingest'> {
  const events = counterOf(registry, 'sightline_ingest_events_total', 'Events taken in by path (api, collect) and outcome (accepted, rejected).', ['path', 'outcome'] as const);
  const count = (path: 'api' | 'collect', result: { accepted: number; rejected: number }): void => {
    events.inc({ path, outcome: 'accepted' }, result.accepted);
    events.inc({ path, outcome: 'rejected' }, result.rejected);
  };
  return {
    ...handlers,
    'ingest.postEvents': async (request) => {
      const response = await handlers['ingest.postEvents'](request);
      if (response.headers?.['Idempotent-Replayed'] !== 'true') count('api', response.body as { accepted: number; rejected: number });
      return response;
    },
    'ingest.collect': async (request) => {
      const result = await handlers['ingest.collect'](request);
      count('collect', result);
      return result;
    },
  };
}
