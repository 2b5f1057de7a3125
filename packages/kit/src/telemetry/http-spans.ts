// A server span per HTTP request on the public and admin ports (with tracing on). A caller's
// `traceparent` continues its trace. The span is named by method and route template once routing
// has matched (never the raw path, which holds ids), and the request's and response's event
// listeners stay in its context, so work started after the body is read is still in the trace.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bindToContext, extractTraceContext, markFailed, runInContext, SpanKind, startSpan, tracingEnabled } from './tracing';

export function httpSpans(port: 'public' | 'admin', skip: ReadonlySet<string> = new Set()): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!tracingEnabled() || skip.has(req.path)) return next();
    const started = startSpan(req.method, {
      kind: SpanKind.SERVER,
      parent: extractTraceContext(req.headers as Record<string, unknown>),
      attributes: { 'http.request.method': req.method, 'sightline.port': port },
    });
    if (!started) return next();
    const { span, context } = started;
    res.once('finish', () => {
      const route = routeOf(req);
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) markFailed(span, new Error(`answered ${res.statusCode}`));
      span.end();
    });
    res.once('close', () => {
      if (!res.writableFinished) {
        markFailed(span, new Error('connection closed before the response was sent'));
        span.end();
      }
    });
    bindToContext(context, req);
    bindToContext(context, res);
    runInContext(context, () => next());
  };
}

/** The matched route template (`/v1/contacts/:id`), or null when no route matched. */
function routeOf(req: Request): string | null {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : null;
}
