export {
  counterOf,
  histogramOf,
  LATENCY_BUCKETS,
  memoizeFor,
  polledGauge,
  registerCacheSize,
  type CacheSizeOptions,
  type GaugeSource,
  type PolledGauge,
  type PolledGaugeOptions,
  type Sample,
} from './metric-families';
export { markFailed, SpanKind, tracingEnabled, withSpan, type Span, type SpanOptions, type TracingConfig } from './tracing';
export { storeOwnerOf, type StoreOwner } from './store-telemetry';
export { EVENT_LOOP_DELAY_BUCKETS, EVENT_LOOP_DELAY_METRIC, monitorEventLoopDelay, type EventLoopDelayMonitor } from './event-loop-delay';
