import { Counter, Histogram, type Registry } from 'prom-client';

export interface GatewayMetrics {
  requests: Counter<'route' | 'method' | 'status'>;
  requestDuration: Histogram<'route' | 'method'>;
  limited: Counter<'kind'>;
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
  };
}
