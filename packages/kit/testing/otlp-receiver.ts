// A minimal OTLP/HTTP trace receiver for tests: accepts what an exporter POSTs to /v1/traces in the
// OTLP JSON encoding (ids as hex strings) and keeps the spans, flattened with their service name.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** The resource's service.name. */
  service: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

export interface OtlpReceiver {
  /** Base URL to give an exporter (spans go to <url>/v1/traces). */
  url: string;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;
const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const request = JSON.parse(await readBody(req)) as OtlpRequest;
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            received.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              service,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              status: span.status?.code ?? 0,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })().catch(() => res.writeHead(400).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An exporter that sends the OTLP JSON the OTLP/HTTP exporter would send (same serializer) to a
 * receiver, for tests that trace inside jest, where that exporter cannot load node:http.
 */
export function otlpJsonExporter(baseUrl: string): SpanExporter {
  const inFlight = new Set<Promise<void>>();
  const post = (body: Uint8Array): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(`${baseUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve() : reject(new Error(`receiver answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(Buffer.from(body));
    });
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      const body = JsonTraceSerializer.serializeRequest(spans);
      if (!body) return done({ code: ExportResultCode.FAILED });
      const sending = post(body).then(
        () => done({ code: ExportResultCode.SUCCESS }),
        (error: unknown) => done({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) }),
      );
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
    },
    async shutdown(): Promise<void> {
      await Promise.all([...inFlight]);
    },
    async forceFlush(): Promise<void> {
      await Promise.all([...inFlight]);
    },
  };
}
