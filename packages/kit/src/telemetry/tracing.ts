// Tracing with OpenTelemetry. Off unless an OTLP endpoint is configured: then the SDK is loaded,
// a tracer provider named `sightline-<target>` exports spans over OTLP/HTTP (JSON), and the helpers
// below start spans. Off, the SDK is never loaded and every helper runs its function directly, so
// tracing costs nothing when nobody collects it.
//
// The OpenTelemetry API keeps one tracer provider, context manager and propagator per process
// (its globals); this module installs them once and takes them down at stop.
import {
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';

export { SpanKind };
export type { Span };

export interface TracingConfig {
  /** Where spans go: the full OTLP/HTTP traces URL (…/v1/traces). */
  endpoint: string;
  /** Share of new traces recorded, 0–1; a trace started upstream follows its parent's choice. */
  sampleRatio: number;
  /** How long the batch processor waits before sending spans (OTEL_BSP_SCHEDULE_DELAY). */
  exportDelayMs: number;
  /**
   * Sends spans some other way than the OTLP/HTTP exporter: for tests under a VM sandbox (jest)
   * where that exporter cannot load node:http (it imports it dynamically).
   */
  exporter?: SpanExporter;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Sends what is buffered and takes the process's tracing down. */
  shutdown(): Promise<void>;
}

let installed: { serviceName: string; shutdown: () => Promise<void> } | null = null;

/** True while spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return installed !== null;
}

const OFF: Tracing = { enabled: false, shutdown: () => Promise.resolve() };

/**
 * Starts exporting spans as `serviceName`. Without a config (no endpoint set) nothing is loaded.
 * A process runs one tracer provider: a second start (two runners in one test process) shares the first.
 */
export async function startTracing(serviceName: string, config: TracingConfig | undefined, logger: Logger): Promise<Tracing> {
  if (!config) return OFF;
  if (installed) {
    if (installed.serviceName !== serviceName) logger.warn({ serviceName, tracing: installed.serviceName }, 'tracing already runs in this process; spans keep its service name');
    return { enabled: true, shutdown: () => Promise.resolve() };
  }
  const [{ BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { resourceFromAttributes }, { OTLPTraceExporter }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
    ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'sightline' }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(config.exporter ?? new OTLPTraceExporter({ url: config.endpoint }), { scheduledDelayMillis: config.exportDelayMs })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const shutdown = async (): Promise<void> => {
    if (installed?.shutdown !== shutdown) return;
    installed = null;
    await provider.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'tracing: could not send the last spans'));
    trace.disable();
    propagation.disable();
    context.disable();
  };
  installed = { serviceName, shutdown };
  logger.info({ serviceName, endpoint: redactEndpoint(config.endpoint), sampleRatio: config.sampleRatio }, 'tracing: exporting spans over OTLP/HTTP');
  return { enabled: true, shutdown };
}

function redactEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}

const tracer = () => trace.getTracer('sightline');

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `fn` inside a new span (active for everything `fn` starts), ending it when `fn` settles and
 * marking it failed when `fn` throws. With tracing off, `fn` runs as is and gets no span.
 */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!installed) return fn(undefined);
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, ...(options.attributes ? { attributes: options.attributes } : {}), ...(options.links ? { links: options.links } : {}) }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Starts a span the caller ends (for work whose end is not one promise: an HTTP response). */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | null {
  if (!installed) return null;
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, ...(options.attributes ? { attributes: options.attributes } : {}), ...(options.links ? { links: options.links } : {}) }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

export function markFailed(span: Span, error: unknown): void {
  // The error's class and message, never a payload: handlers' messages name ids, not contents.
  span.recordException(error instanceof Error ? { name: error.name, message: error.message } : { message: String(error) });
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
}

/** Writes the active (or given) trace context into message headers: `traceparent`, `tracestate`. */
export function injectTraceContext(headers: Record<string, unknown>, from?: Context): void {
  if (!installed) return;
  propagation.inject(from ?? context.active(), headers);
}

/**
 * The trace context a message or request carries, on a fresh root (an in-process delivery must not
 * inherit the publisher's async context); the root context when it carries none.
 */
export function extractTraceContext(headers: Record<string, unknown> | undefined): Context {
  const carrier: Record<string, string> = {};
  for (const key of ['traceparent', 'tracestate']) {
    const value = headers?.[key];
    if (typeof value === 'string') carrier[key] = value;
    else if (Buffer.isBuffer(value)) carrier[key] = value.toString('utf8');
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The span context in `ctx` as a link, when it has one (a consumer's link to its publisher). */
export function linkTo(ctx: Context): Link[] {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext ? [{ context: spanContext }] : [];
}

/** Binds an event emitter's listeners to `ctx`, so work done in its callbacks stays in the trace. */
export function bindToContext<E extends NodeJS.EventEmitter>(ctx: Context, emitter: E): E {
  return context.bind(ctx, emitter);
}

/** Runs `fn` with `ctx` active. */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}
