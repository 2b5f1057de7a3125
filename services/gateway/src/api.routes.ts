// The public API pipeline every operation goes through, in this order:
// authenticate → count against limits → check scope → (only now) read the body → resolve website →
// validate → (service built?) → take an analytics slot → answer locally or over RPC. A request is
// refused as cheaply as possible: a bad key, a spent budget or a missing scope never costs a body
// read. Any error becomes a problem document, and every answer carries the RateLimit headers.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { isRpcMethod } from '@sightline/proto-schemas';
import { ProblemError, renderProblem, requestIdOf, sendProblem, type SemaphoreLease, type ServiceBus } from '@sightline/kit';
import type { Website } from './accounts.repo';
import type { AuthContext, Authenticator } from './auth';
import type { Limits } from './limits';
import type { GatewayMetrics } from './metrics';
import type { Operation } from './operations';
import type { RequestValidator, ValidatedRequest } from './request-validation';
import { resolveWebsite } from './website-resolution';

/** Largest JSON body an operation reads (after decompression). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface LocalRequest extends ValidatedRequest {
  auth: AuthContext;
  website: Website | null;
}

export interface ApiResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Operations the gateway answers itself, keyed by `METHOD /v1/path`. */
export type LocalHandlers = Record<string, (request: LocalRequest) => Promise<ApiResult>>;

export interface ApiRouteDeps {
  operations: Operation[];
  auth: Authenticator;
  limits: Limits;
  validator: RequestValidator;
  bus: ServiceBus<'gateway'>;
  local: LocalHandlers;
  rpcTimeoutMs: number;
  publicUrl: () => string;
  metrics: GatewayMetrics;
  logger: Logger;
}

/** What the last-resort handlers need: to count an unrouted request and render its problem. */
export type FallbackDeps = Pick<ApiRouteDeps, 'publicUrl' | 'logger' | 'auth' | 'limits' | 'metrics'>;

const AUTH_LOCAL = 'sightlineAuth';
const COUNTED_LOCAL = 'sightlineCounted';

export function mountApiRoutes(router: Router, deps: ApiRouteDeps): void {
  // strict: only objects and arrays at the top; inflate: gzip/deflate/br bodies are read decompressed,
  // and the limit applies to the decompressed size (a small bomb cannot grow past it).
  const parseJson = express.json({ limit: MAX_BODY_BYTES, type: () => true, strict: true, inflate: true });
  // Content-Length: 0 is no content (RFC 9110), as a request without the header is: body-parser would
  // read it as {}, which would pass a required body that was never sent.
  const jsonBody = (req: Request, res: Response, next: NextFunction): void => (req.header('content-length') === '0' ? next() : parseJson(req, res, next));
  const pathsSeen = new Map<string, Set<string>>();

  for (const op of deps.operations) {
    for (const prefix of ['/v1', '']) {
      const path = prefix + op.expressPath;
      const methods = pathsSeen.get(path) ?? new Set<string>();
      methods.add(op.method);
      pathsSeen.set(path, methods);
      const route = router.route(path);
      const admitted = (req: Request, res: Response, next: NextFunction) => void admit(op, req, res, deps).then(() => next(), (error: unknown) => fail(req, res, deps, error));
      const handler = (req: Request, res: Response) => void handle(op, req, res, deps);
      const withBody = [admitted, requireJson, jsonBody, handler];
      switch (op.method) {
        case 'GET': route.get(admitted, handler); break;
        case 'POST': route.post(...withBody); break;
        case 'PATCH': route.patch(...withBody); break;
        case 'PUT': route.put(...withBody); break;
        case 'DELETE': route.delete(admitted, handler); break;
      }
    }
  }
  for (const [path, methods] of pathsSeen) {
    router.all(path, (req, res) => {
      res.setHeader('Allow', [...methods].join(', '));
      void failCounted(req, res, deps, new ProblemError('method-not-allowed', {
        detail: 'This path does not support that HTTP method.',
        remediation: `Use one of the allowed methods.`,
        allowed: [...methods],
      }));
    });
  }
}

/** Final handlers: unknown paths and failures before or while reading a request, as problem documents. */
export function mountFallbacks(router: Router, deps: FallbackDeps): void {
  router.use((req: Request, res: Response) => {
    void failCounted(req, res, deps, new ProblemError('not-found', {
      detail: `No endpoint at ${req.method} ${safePath(req)}.`,
      remediation: 'Check the path against GET /v1/openapi.json (every path also works with a /v1 prefix).',
    }));
  });
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    void failCounted(req, res, deps, transportProblem(error) ?? error);
  });
}

/**
 * Authentication, limits and scope: everything decided from the headers alone, before a body is
 * read. An unknown or missing key is limited per client address, so it cannot be tried without bound.
 */
async function admit(op: Operation, req: Request, res: Response, deps: ApiRouteDeps): Promise<void> {
  const stopTimer = deps.metrics.requestDuration.startTimer({ route: op.documentPath, method: op.method });
  res.on('finish', () => {
    deps.metrics.requests.inc({ route: op.documentPath, method: op.method, status: String(res.statusCode) });
    stopTimer();
  });
  res.setHeader('Cache-Control', 'no-store');
  const auth = await authenticateAndCount(req, res, deps);
  if (op.scope && !auth.key.scopes.includes(op.scope)) {
    throw new ProblemError('insufficient-scope', {
      detail: `This key lacks the scope "${op.scope}", which ${op.method} ${op.documentPath} requires.`,
      remediation: `Use a key that has the "${op.scope}" scope, or create one with \`sightline keys create --scopes ${op.scope}\`.`,
      extra: { missing_scope: op.scope },
    });
  }
  // Intake: when the bus is too far behind to take it, refuse (503, Retry-After) before reading the body.
  if (op.rpcMethod === 'ingest.postEvents') await deps.bus.admit();
  res.locals[AUTH_LOCAL] = auth;
}

/** Counts the request once, against the key's workspace or (without a valid key) the client address. */
async function authenticateAndCount(req: Request, res: Response, deps: FallbackDeps): Promise<AuthContext> {
  const limited = (kind: string) => deps.metrics.limited.inc({ kind });
  res.locals[COUNTED_LOCAL] = true;
  let auth: AuthContext;
  try {
    auth = await deps.auth.authenticate(req);
  } catch (error) {
    await deps.limits.admitAnonymous(clientAddress(req), res, limited);
    throw error;
  }
  await deps.limits.admit(auth.workspace.id, auth.key.plan, res, limited);
  return auth;
}

async function handle(op: Operation, req: Request, res: Response, deps: ApiRouteDeps): Promise<void> {
  let lease: SemaphoreLease | null = null;
  const limited = (kind: string) => deps.metrics.limited.inc({ kind });
  try {
    const auth = res.locals[AUTH_LOCAL] as AuthContext;
    const website = op.takesWebsite ? resolveWebsite(auth.websites, requestedWebsite(req)) : null;
    const validated = deps.validator.validate(op, req.query as Record<string, string | string[]>, req.params as Record<string, string>, req.body, (name) => req.header(name));
    if (op.analytics) lease = await deps.limits.acquireAnalyticsSlot(auth.workspace.id, limited);

    const localHandler = deps.local[`${op.method} ${op.documentPath}`];
    const result = localHandler
      ? await localHandler({ ...validated, auth, website })
      : await callService(op, req, res, deps, auth, website, validated);
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.status(result.status).json(result.body);
  } catch (error) {
    fail(req, res, deps, error);
  } finally {
    if (lease) await lease.release().catch((error: unknown) => deps.logger.warn({ err: error }, 'analytics slot release failed'));
  }
}

async function callService(
  op: Operation,
  req: Request,
  res: Response,
  deps: ApiRouteDeps,
  auth: AuthContext,
  website: Website | null,
  validated: ValidatedRequest,
): Promise<ApiResult> {
  const idempotencyKey = req.header('idempotency-key');
  const method = op.rpcMethod ?? `${op.service}.${op.operationId}`;
  const request = {
    operation: method.slice(method.indexOf('.') + 1),
    request_id: requestIdOf(res),
    workspace: { id: auth.workspace.id, name: auth.workspace.name, timezone: auth.workspace.timezone, currency: auth.workspace.currency, plan: auth.key.plan },
    website: website ? { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency } : null,
    key: { id: auth.key.id, scopes: auth.key.scopes },
    // Path parameters arrive as strings from the URL.
    params: Object.fromEntries(Object.entries(validated.params).map(([name, value]) => [name, String(value)])),
    query: validated.query,
    body: validated.body ?? null,
    headers: idempotencyKey ? { idempotency_key: idempotencyKey } : {},
  };
  if (!isRpcMethod(method)) throw new Error(`operation ${op.operationId} names an RPC method missing from the catalog: ${method}`);
  return deps.bus.call(method, request, { timeoutMs: deps.rpcTimeoutMs }) as Promise<ApiResult>;
}

function fail(req: Request, res: Response, deps: Pick<ApiRouteDeps, 'publicUrl' | 'logger'>, error: unknown): void {
  if (res.headersSent) return;
  const problem = renderProblem(error, requestIdOf(res), deps.publicUrl());
  if (problem.unexpected) deps.logger.error({ err: error, requestId: requestIdOf(res) }, 'unexpected error');
  // Refused before its body arrived: close rather than read a body nobody will use.
  if (!req.complete) res.setHeader('Connection', 'close');
  sendProblem(res, problem);
}

/** A problem for a request no operation admitted: counted first (a 429 wins), so it carries the RateLimit headers too. */
async function failCounted(req: Request, res: Response, deps: FallbackDeps, error: unknown): Promise<void> {
  if (!res.locals[COUNTED_LOCAL]) {
    try {
      await authenticateAndCount(req, res, deps);
    } catch (counted) {
      // Over the limit: the 429 is the answer. Without a valid key the original problem stands.
      if (counted instanceof ProblemError && counted.status === 429) return fail(req, res, deps, counted);
    }
  }
  fail(req, res, deps, error);
}

function requireJson(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = Number(req.header('content-length') ?? 0) > 0 || req.header('transfer-encoding') !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    return next(new ProblemError('unsupported-media-type', {
      detail: `Request bodies must be JSON; got "${req.header('content-type') ?? 'no Content-Type'}".`,
      remediation: 'Send the body as JSON with "Content-Type: application/json".',
      allowed: ['application/json'],
    }));
  }
  next();
}

/** Failures while routing or reading a request (body parser, percent-decoding) as problems; null for anything else. */
export function transportProblem(error: unknown): ProblemError | null {
  if (error instanceof ProblemError) return error;
  const e = error as { type?: string; status?: number; statusCode?: number; code?: string } | null;
  const type = e?.type;
  if (type === 'entity.parse.failed') {
    return new ProblemError('invalid-request', { detail: 'The request body is not valid JSON (or its top level is not an object or array).', remediation: 'Send a well-formed JSON object.' });
  }
  if (type === 'entity.too.large') {
    return new ProblemError('payload-too-large', { detail: 'The request body is larger than 2 MB (decompressed).', remediation: 'Split the request into smaller ones (POST /events takes at most 200 events per call).' });
  }
  if (type === 'encoding.unsupported') {
    return new ProblemError('unsupported-media-type', { detail: 'The body\'s Content-Encoding is not supported.', remediation: 'Send the body uncompressed, or compressed with gzip, deflate or br.', allowed: ['identity', 'gzip', 'deflate', 'br'] });
  }
  if (type === 'charset.unsupported') {
    return new ProblemError('unsupported-media-type', { detail: 'The body\'s charset is not supported.', remediation: 'Send UTF-8 JSON.', allowed: ['utf-8'] });
  }
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) {
    return new ProblemError('invalid-request', { detail: 'The body could not be decompressed as its Content-Encoding says.', remediation: 'Send the body compressed as the Content-Encoding header states, or without that header.' });
  }
  if (error instanceof URIError || (e?.status === 400 && /decode param/i.test(String((error as Error).message)))) {
    return new ProblemError('invalid-request', { detail: 'The path is not valid percent-encoding.', remediation: 'Percent-encode the path as UTF-8 (RFC 3986) and retry.' });
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ProblemError('invalid-request', { detail: 'The request could not be read.', remediation: 'Send a complete request whose Content-Length matches its body.' });
  }
  return null;
}

/** The path as received, for a detail: decoded where it can be, never raw control characters. */
function safePath(req: Request): string {
  return req.path.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 200);
}

/** The client's address: the socket's, or as the configured trusted proxies reported it. */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** `website` from the query, or from a JSON body that carries one (POST /events); both must agree. */
function requestedWebsite(req: Request): string | undefined {
  const fromQuery = firstString(req.query['website']);
  const body = req.body as { website?: unknown } | undefined;
  const fromBody = body && typeof body === 'object' && typeof body.website === 'string' ? body.website : undefined;
  if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
    throw new ProblemError('invalid-request', {
      detail: `The website query parameter (${fromQuery}) and the body's website (${fromBody}) differ.`,
      remediation: 'Name the website once, or give the same domain in both places.',
    });
  }
  return fromQuery ?? fromBody;
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}
