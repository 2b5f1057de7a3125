// The public API pipeline every operation goes through, in this order:
// authenticate → count against limits → check scope → resolve website → validate →
// (service built?) → take an analytics slot → answer locally or over RPC. Any error becomes a
// problem document.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { ProblemError, renderProblem, requestIdOf, sendProblem, type Bus, type SemaphoreLease } from '@sightline/kit';
import type { Website } from './accounts.repo';
import type { AuthContext, Authenticator } from './auth';
import type { Limits } from './limits';
import type { GatewayMetrics } from './metrics';
import type { Operation } from './operations';
import type { RequestValidator, ValidatedRequest } from './request-validation';
import { resolveWebsite } from './website-resolution';

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
  bus: Bus;
  local: LocalHandlers;
  /** Services that exist in this build; an operation owned by any other answers 501. */
  availableServices: ReadonlySet<string>;
  rpcTimeoutMs: number;
  publicUrl: () => string;
  metrics: GatewayMetrics;
  logger: Logger;
}

export function mountApiRoutes(router: Router, deps: ApiRouteDeps): void {
  const jsonBody = express.json({ limit: '2mb', type: () => true });
  const pathsSeen = new Map<string, Set<string>>();

  for (const op of deps.operations) {
    for (const prefix of ['/v1', '']) {
      const path = prefix + op.expressPath;
      const methods = pathsSeen.get(path) ?? new Set<string>();
      methods.add(op.method);
      pathsSeen.set(path, methods);
      const route = router.route(path);
      const handler = (req: Request, res: Response) => void handle(op, req, res, deps);
      const withBody = [requireJson, jsonBody, handler];
      switch (op.method) {
        case 'GET': route.get(handler); break;
        case 'POST': route.post(...withBody); break;
        case 'PATCH': route.patch(...withBody); break;
        case 'PUT': route.put(...withBody); break;
        case 'DELETE': route.delete(handler); break;
      }
    }
  }
  for (const [path, methods] of pathsSeen) {
    router.all(path, (_req, res) => {
      res.setHeader('Allow', [...methods].join(', '));
      fail(res, deps, new ProblemError('method-not-allowed', {
        detail: 'This path does not support that HTTP method.',
        remediation: `Use one of the allowed methods.`,
        allowed: [...methods],
      }));
    });
  }
}

/** Final handlers: unknown paths and body-parser failures, as problem documents. */
export function mountFallbacks(router: Router, deps: Pick<ApiRouteDeps, 'publicUrl' | 'logger'>): void {
  router.use((req: Request, res: Response) => {
    fail(res, deps, new ProblemError('not-found', {
      detail: `No endpoint at ${req.method} ${req.path}.`,
      remediation: 'Check the path against GET /v1/openapi.json (every path also works with a /v1 prefix).',
    }));
  });
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    fail(res, deps, bodyParserProblem(error) ?? error);
  });
}


async function handle(op: Operation, req: Request, res: Response, deps: ApiRouteDeps): Promise<void> {
  const stopTimer = deps.metrics.requestDuration.startTimer({ route: op.documentPath, method: op.method });
  let lease: SemaphoreLease | null = null;
  const limited = (kind: string) => deps.metrics.limited.inc({ kind });
  res.setHeader('Cache-Control', 'no-store');
  try {
    let auth: AuthContext;
    try {
      auth = await deps.auth.authenticate(req);
    } catch (error) {
      await deps.limits.admitAnonymous(req.ip ?? 'unknown', res, limited);
      throw error;
    }
    await deps.limits.admit(auth.workspace.id, auth.key.plan, res, limited);
    if (op.scope && !auth.key.scopes.includes(op.scope)) {
      throw new ProblemError('insufficient-scope', {
        detail: `This key lacks the scope "${op.scope}", which ${op.method} ${op.documentPath} requires.`,
        remediation: `Use a key that has the "${op.scope}" scope, or create one with \`sightline keys create --scopes ${op.scope}\`.`,
        extra: { missing_scope: op.scope },
      });
    }
    const website = op.takesWebsite ? resolveWebsite(auth.websites, requestedWebsite(req)) : null;
    const validated = deps.validator.validate(op, req.query as Record<string, string | string[]>, req.params as Record<string, string>, req.body);
    if (op.service !== 'gateway' && !deps.availableServices.has(op.service)) {
      throw new ProblemError('not-implemented', {
        detail: `${op.method} ${op.documentPath} is answered by the ${op.service} service, which this build does not include yet.`,
        remediation: 'Do not retry; this endpoint becomes available in a later release.',
      });
    }
    if (op.analytics) lease = await deps.limits.acquireAnalyticsSlot(auth.workspace.id, limited);

    const localHandler = deps.local[`${op.method} ${op.documentPath}`];
    const result = localHandler
      ? await localHandler({ ...validated, auth, website })
      : await callService(op, req, res, deps, auth, website, validated);
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.status(result.status).json(result.body);
  } catch (error) {
    fail(res, deps, error);
  } finally {
    if (lease) await lease.release().catch((error: unknown) => deps.logger.warn({ err: error }, 'analytics slot release failed'));
    deps.metrics.requests.inc({ route: op.documentPath, method: op.method, status: String(res.statusCode) });
    stopTimer();
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
    params: validated.params,
    query: validated.query,
    body: validated.body ?? null,
    headers: idempotencyKey ? { idempotency_key: idempotencyKey } : {},
  };
  return deps.bus.rpc<ApiResult>(method, request, { timeoutMs: deps.rpcTimeoutMs });
}

function fail(res: Response, deps: Pick<ApiRouteDeps, 'publicUrl' | 'logger'>, error: unknown): void {
  if (res.headersSent) return;
  const problem = renderProblem(error, requestIdOf(res), deps.publicUrl());
  if (problem.unexpected) deps.logger.error({ err: error, requestId: requestIdOf(res) }, 'unexpected error');
  sendProblem(res, problem);
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

function bodyParserProblem(error: unknown): ProblemError | null {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') {
    return new ProblemError('invalid-request', { detail: 'The request body is not valid JSON.', remediation: 'Send a well-formed JSON body.' });
  }
  if (type === 'entity.too.large') {
    return new ProblemError('payload-too-large', { detail: 'The request body is larger than 2 MB.', remediation: 'Split the request into smaller ones (POST /events takes at most 200 events per call).' });
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ProblemError('unsupported-media-type', { detail: 'The body encoding is not supported.', remediation: 'Send UTF-8 JSON.' });
  }
  return null;
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
