// What both bus drivers measure and trace, so every module gets it without code of its own:
// - RPC, served and called: `sightline_rpc_server_duration_seconds{service,method,outcome}` and
//   `sightline_rpc_client_duration_seconds{caller,method,outcome}` (their _count is the request rate);
// - message handling: `sightline_bus_consume_duration_seconds{service,type,outcome}` and the time a
//   message waited between publish and handling, `sightline_bus_consume_lag_seconds{service,type}`;
// - spans: RPC client and server, publish and consume, with the trace context carried in message
//   headers (W3C `traceparent`); a consumer's span is the publisher's child and links to it.
// Labels take values from fixed sets: a method or type the catalog does not know counts as `unknown`.
import { isMessageType, isRpcMethod } from '@sightline/proto-schemas';
import type { Histogram, Registry } from 'prom-client';
import { histogramOf } from '../telemetry/metric-families';
import { extractTraceContext, injectTraceContext, linkTo, markFailed, startSpan, SpanKind, withSpan } from '../telemetry/tracing';
import { HEADER } from './names';
import { RpcNoConsumerError, RpcRemoteError, RpcTimeoutError } from './types';

/** How an RPC ended, as the caller saw it. */
export type RpcClientOutcome = 'ok' | 'client_error' | 'error' | 'timeout' | 'no_consumer';
/** How an RPC ended, as the server answered it: a 4xx problem is the caller's, a 5xx the server's. */
export type RpcServerOutcome = 'ok' | 'client_error' | 'error';
/** What became of a delivered message. */
export type ConsumeOutcome = 'ack' | 'retry' | 'dead_letter' | 'requeue';

const LAG_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

export interface BusTelemetry {
  /** Headers for a batch about to be published: publish time and trace context. `done` ends the publish span. */
  publishing(types: readonly string[]): { headers: Record<string, string | number>; done(error?: unknown): void };
  /** Calls `send` with the headers a request carries, measuring the call as `caller` sees it. */
  rpcClient<T>(method: string, caller: string | undefined, send: (headers: Record<string, string | number>) => Promise<T>): Promise<T>;
  /** Serves one request inside the span its caller's context continues; `run` returns the reply's status. */
  rpcServer<T extends { status: number }>(service: string, method: string, known: boolean, headers: Record<string, unknown>, run: () => Promise<T>): Promise<T>;
  /** Handles one delivered message inside a consumer span; `run` settles it. */
  consume<T extends { kind: 'ack' | 'retry' | 'dead' | 'requeue'; envelope: { type: string } | null }>(service: string, headers: Record<string, unknown>, run: () => Promise<T>): Promise<T>;
}

interface Families {
  rpcServer: Histogram<'service' | 'method' | 'outcome'>;
  rpcClient: Histogram<'caller' | 'method' | 'outcome'>;
  consume: Histogram<'service' | 'type' | 'outcome'>;
  lag: Histogram<'service' | 'type'>;
}

/** The bus's metric families in a registry, registered up front so dashboards find them before traffic. */
export function busFamilies(registry: Registry): Families {
  return {
    rpcServer: histogramOf(registry, 'sightline_rpc_server_duration_seconds', 'RPC requests served, by service, catalog method and outcome (ok, client_error, error); _count is the request count.', ['service', 'method', 'outcome'] as const),
    rpcClient: histogramOf(registry, 'sightline_rpc_client_duration_seconds', 'RPC calls made, by calling service, catalog method and outcome (ok, client_error, error, timeout, no_consumer).', ['caller', 'method', 'outcome'] as const),
    consume: histogramOf(registry, 'sightline_bus_consume_duration_seconds', 'Messages handled, by consuming service, message type and outcome (ack, retry, dead_letter).', ['service', 'type', 'outcome'] as const),
    lag: histogramOf(registry, 'sightline_bus_consume_lag_seconds', 'Time from publish to the start of handling, by consuming service and message type (retries included).', ['service', 'type'] as const, LAG_BUCKETS),
  };
}

const seconds = (startedAt: bigint): number => Number(process.hrtime.bigint() - startedAt) / 1e9;
const methodLabel = (method: string): string => (isRpcMethod(method) ? method : 'unknown');
const typeLabel = (type: string | undefined): string => (type !== undefined && isMessageType(type) ? type : 'unknown');

export function clientOutcomeOf(error: unknown): RpcClientOutcome {
  if (error instanceof RpcTimeoutError) return 'timeout';
  if (error instanceof RpcNoConsumerError) return 'no_consumer';
  if (error instanceof RpcRemoteError && error.problem.status < 500) return 'client_error';
  return 'error';
}

export function busTelemetry(registry: Registry | undefined): BusTelemetry {
  const families = registry ? busFamilies(registry) : null;
  return {
    publishing(types) {
      const headers: Record<string, string | number> = { [HEADER.publishedAt]: Date.now() };
      const distinct = [...new Set(types)];
      const started = startSpan(distinct.length === 1 ? `publish ${typeLabel(distinct[0])}` : 'publish batch', {
        kind: SpanKind.PRODUCER,
        attributes: { 'messaging.system': 'sightline-bus', 'messaging.operation.type': 'send', 'messaging.batch.message_count': types.length },
      });
      if (!started) return { headers, done: () => undefined };
      injectTraceContext(headers, started.context);
      return {
        headers,
        done(error) {
          if (error !== undefined) markFailed(started.span, error);
          started.span.end();
        },
      };
    },

    async rpcClient(method, caller, send) {
      const startedAt = process.hrtime.bigint();
      const labels = { caller: caller ?? 'unknown', method: methodLabel(method) };
      try {
        const result = await withSpan(`rpc ${labels.method}`, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'sightline-bus', 'rpc.method': labels.method } }, (span) => {
          const headers: Record<string, string | number> = {};
          if (span) injectTraceContext(headers);
          return send(headers);
        });
        families?.rpcClient.observe({ ...labels, outcome: 'ok' }, seconds(startedAt));
        return result;
      } catch (error) {
        families?.rpcClient.observe({ ...labels, outcome: clientOutcomeOf(error) }, seconds(startedAt));
        throw error;
      }
    },

    async rpcServer(service, method, known, headers, run) {
      const startedAt = process.hrtime.bigint();
      const label = known ? methodLabel(method) : 'unknown';
      const parent = extractTraceContext(headers);
      const reply = await withSpan(`rpc ${label}`, { kind: SpanKind.SERVER, parent, attributes: { 'rpc.system': 'sightline-bus', 'rpc.method': label, 'sightline.service': service } }, async (span) => {
        const answered = await run();
        span?.setAttribute('rpc.response.status_code', answered.status);
        if (span && answered.status >= 500) markFailed(span, new Error(`answered ${answered.status}`));
        return answered;
      });
      const outcome: RpcServerOutcome = reply.status < 400 ? 'ok' : reply.status < 500 ? 'client_error' : 'error';
      families?.rpcServer.observe({ service, method: label, outcome }, seconds(startedAt));
      return reply;
    },

    async consume(service, headers, run) {
      const startedAt = process.hrtime.bigint();
      const publishedAt = Number(headers[HEADER.publishedAt]);
      const parent = extractTraceContext(headers);
      const settled = await withSpan('process', { kind: SpanKind.CONSUMER, parent, links: linkTo(parent), attributes: { 'messaging.system': 'sightline-bus', 'messaging.operation.type': 'process', 'messaging.consumer.group.name': service } }, async (span) => {
        const outcome = await run();
        const type = typeLabel(outcome.envelope?.type);
        span?.updateName(`process ${type}`);
        span?.setAttribute('messaging.destination.name', type);
        if (span && outcome.kind !== 'ack') markFailed(span, new Error(outcome.kind === 'retry' ? 'handler failed; retrying' : outcome.kind === 'requeue' ? 'store out of reach; given back' : 'dead-lettered'));
        return outcome;
      });
      if (families) {
        const type = typeLabel(settled.envelope?.type);
        const outcome: ConsumeOutcome = settled.kind === 'dead' ? 'dead_letter' : settled.kind;
        families.consume.observe({ service, type, outcome }, seconds(startedAt));
        if (Number.isFinite(publishedAt) && publishedAt > 0) {
          // Measured at the start of handling; a clock a little behind the publisher's must not go negative.
          const waited = Math.max(0, Date.now() - seconds(startedAt) * 1000 - publishedAt) / 1000;
          families.lag.observe({ service, type }, waited);
        }
      }
      return settled;
    },
  };
}
