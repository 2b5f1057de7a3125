import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface GatewayMetrics {
  requests: Counter<'route' | 'method' | 'status'>;
  requestDuration: Histogram<'route' | 'method'>;
  limited: Counter<'kind'>;
  collectRequests: Counter<'status'>;
  collectEvents: Counter<'outcome'>;
  collectIdentifies: Counter<'signature' | 'outcome'>;
}

/** Label values come from fixed sets: route is the OpenAPI path template, never the raw URL. */
export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  return {
    requests: new Counter({
      name: 'sightline_gateway_http_requests_total',
      help: 'Public API requests by route template, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'sightline_gateway_http_request_duration_seconds',
      help: 'Public API request duration by route template and method.',
      labelNames: ['route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    limited: new Counter({
      name: 'sightline_gateway_limited_total',
      help: 'Requests refused with 429, by problem kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    collectRequests: new Counter({
      name: 'sightline_gateway_collect_requests_total',
      help: 'Tracker requests on /collect by status.',
      labelNames: ['status'],
      registers: [registry],
    }),
    collectEvents: new Counter({
      name: 'sightline_gateway_collect_events_total',
      help: 'Tracker hits in answered /collect requests: accepted by ingest, or rejected (by ingest, or unsigned identifies).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    // signature: bound | unbound | missing | malformed | expired | too-far-ahead | mismatch (tracker's IdentifySignatureCheck).
    collectIdentifies: new Counter({
      name: 'sightline_gateway_collect_identifies_total',
      help: 'Browser identify hits on /collect by how their signature checked out, and whether they were believed.',
      labelNames: ['signature', 'outcome'],
      registers: [registry],
    }),
  };
}

/**
 * Sizes of the caches anyone on the internet can fill (site ids on /collect, key ids on the API),
 * read when scraped: the bound a flood of junk ids meets.
 */
export function registerCacheGauges(registry: Registry, sizes: { sites: () => number; keys: () => number }): void {
  new Gauge({
    name: 'sightline_gateway_collect_site_cache_entries',
    help: 'Public site ids held in the /collect lookup caches (known and unknown).',
    registers: [registry],
    collect() {
      this.set(sizes.sites());
    },
  });
  new Gauge({
    name: 'sightline_gateway_key_cache_entries',
    help: 'API key ids held in the authentication cache (known and unknown).',
    registers: [registry],
    collect() {
      this.set(sizes.keys());
    },
  });
}
