// The tracker's public endpoints: the script (/t.js) and its collect endpoint (/collect). No API
// key is needed, so nothing a browser claims is believed that cannot be checked (DESIGN "Public
// endpoints trust nothing they cannot check"):
// - the website is named by its public id, looked up through bounded caches (site-directory.ts);
// - the page's Origin must be the website's domain or a subdomain, and CORS answers only those
//   origins; ingest refuses hits whose URL is on another host;
// - hits are timed by the server: the receive time, the browser's `ts` only ordering the hits of
//   one request within CLIENT_CLOCK_BOUND_MS;
// - an identify() counts only with the website backend's signature, bound to the website and the
//   visitor and short-lived (tracker README; the unbound v1 form only if the operator allows it);
// - the client address (geo) is the socket's, or X-Forwarded-For's only from configured proxies;
// - browser hits are budgeted per client address and per website, the address before the body is read.
// A request with an API key (events:write, reaching the website) is a server-side replay, such as
// `sightline seed` or a backfill: the key vouches for the times, identities and visitor addresses
// it sends (the first X-Forwarded-For address), and it counts against the workspace's plan.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { findInputFault, ProblemError, renderProblem, requestIdOf, sendProblem, type ServiceBus } from '@sightline/kit';
import { checkIdentifySignature, CLIENT_CLOCK_BOUND_MS, type IdentifySignatureCheck } from '@sightline/tracker';
import type { Website } from './accounts.repo';
import { clientAddress } from './api.routes';
import type { AuthContext, Authenticator } from './auth';
import { identifyBelieved, identifyRecorder, type IdentifyPolicy } from './identify-policy';
import type { Limits } from './limits';
import type { GatewayMetrics } from './metrics';
import type { SiteDirectory } from './site-directory';

/** Largest tracker request: the script sends a few hits at a time. */
const MAX_COLLECT_BYTES = 64 * 1024;
/** Hits one request may carry. */
export const MAX_HITS_PER_REQUEST = 50;
/** A tracker payload is body → events → hit → props; anything deeper is not from the tracker. */
const MAX_COLLECT_DEPTH = 8;
const REPLAY_SCOPE = 'events:write';
const REPLAY_LOCAL = 'sightlineReplay';

export interface CollectDeps {
  sites: SiteDirectory;
  auth: Authenticator;
  limits: Limits;
  bus: ServiceBus<'gateway'>;
  rpcTimeoutMs: number;
  trackerScript: () => string;
  publicUrl: () => string;
  metrics: GatewayMetrics;
  logger: Logger;
  identify: IdentifyPolicy;
}

type Hit = Record<string, unknown>;

export function mountCollectRoutes(router: Router, deps: CollectDeps): void {
  const limited = (kind: string) => deps.metrics.limited.inc({ kind });
  const recordIdentifies = identifyRecorder(deps.metrics, deps.logger, deps.identify);

  router.get('/t.js', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('application/javascript').send(deps.trackerScript());
  });

  // The tracker sends CORS-simple requests (text/plain), which need no preflight; a preflight names
  // no website, so it is answered without granting any origin.
  router.options('/collect', (_req, res) => {
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.status(204).end();
  });

  /** Before the body: who is calling, and whether their budget allows one more request. */
  const admit = (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Cache-Control', 'no-store');
    void (async () => {
      if (req.header('authorization') === undefined) {
        await deps.limits.admitHits('address', clientAddress(req), 1, res, limited);
        return;
      }
      let auth: AuthContext;
      try {
        auth = await deps.auth.authenticate(req);
      } catch (error) {
        await deps.limits.admitAnonymous(clientAddress(req), res, limited);
        throw error;
      }
      await deps.limits.admit(auth.workspace.id, auth.key.plan, res, limited);
      if (!auth.key.scopes.includes(REPLAY_SCOPE)) {
        throw new ProblemError('insufficient-scope', {
          detail: `Sending tracker hits with a key (a replay or backfill) needs the scope "${REPLAY_SCOPE}".`,
          remediation: `Use a key with "${REPLAY_SCOPE}", or send browser hits without a key.`,
          extra: { missing_scope: REPLAY_SCOPE },
        });
      }
      res.locals[REPLAY_LOCAL] = auth;
    })().then(() => next(), next);
  };

  const receive = (req: Request, res: Response, next: NextFunction): void => {
    void (async () => {
      const replay = (res.locals[REPLAY_LOCAL] as AuthContext | undefined) ?? null;
      const body = parseBody(req.body);
      const hits = body['events'] as unknown[];
      const website = await deps.sites.find(body['site']);
      if (!website || (replay && !replay.websites.some((w) => w.id === website.id))) {
        throw new ProblemError('website-not-found', {
          detail: replay ? 'The site id is unknown, or this key does not reach its website.' : 'The site id is unknown.',
          remediation: 'Use the public id of a website (GET /v1/websites lists them as public_id) in the script tag\'s data-site.',
        });
      }
      const origin = req.header('origin');
      if (!replay) {
        if (!originMatches(origin, website.domain)) {
          throw new ProblemError('origin-not-allowed', {
            detail: `Tracker hits for ${website.domain} must come from a page on ${website.domain} or one of its subdomains.`,
            remediation: 'Load t.js on the website\'s own pages; to send hits from a server, send them with an API key that has events:write.',
          });
        }
        // The page's origin is the website's: it may read the answer.
        res.setHeader('Access-Control-Allow-Origin', origin as string);
        res.setHeader('Vary', 'Origin');
        // A 429 or 503 tells the tracker when to come back; a cross-origin page may read it only so.
        res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
        if (hits.length > 1) await deps.limits.admitHits('address', clientAddress(req), hits.length - 1, res, limited);
        // A replay is accountable to its key's plan; the website budget is for anonymous browser traffic.
        await deps.limits.admitHits('site', website.id, hits.length, res, limited);
      }
      const { forwarded, refused, identifies } = replay
        ? { forwarded: hits.map(withoutSignature), refused: 0, identifies: [] }
        : believable(hits, website, Date.now(), { ...deps.identify, visitor: body['aid'] });
      const result = await deps.bus.call(
        'ingest.collect',
        {
          website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency, workspace_id: website.workspace_id },
          ip: replay ? (forwardedFor(req) ?? clientAddress(req)) : clientAddress(req),
          user_agent: req.header('user-agent') ?? null,
          body: { ...body, events: forwarded },
        },
        { timeoutMs: deps.rpcTimeoutMs },
      );
      deps.metrics.collectRequests.inc({ status: '202' });
      deps.metrics.collectEvents.inc({ outcome: 'accepted' }, result.accepted);
      deps.metrics.collectEvents.inc({ outcome: 'rejected' }, result.rejected + refused);
      recordIdentifies(website.id, identifies);
      res.status(202).json({ accepted: result.accepted, rejected: result.rejected + refused });
    })().catch(next);
  };

  const refuse = (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    const problem = renderProblem(collectProblem(error) ?? error, requestIdOf(res), deps.publicUrl());
    if (problem.unexpected) deps.logger.warn({ err: error, requestId: requestIdOf(res) }, 'collect failed');
    deps.metrics.collectRequests.inc({ status: String(problem.document.status) });
    if (!req.complete) res.setHeader('Connection', 'close');
    sendProblem(res, problem);
  };

  router.post('/collect', admit, express.text({ type: () => true, limit: MAX_COLLECT_BYTES }), receive, refuse);
}

/**
 * The tracker's JSON body, checked for shape and depth (JSON.parse does not recurse; everything after
 * it, the bus's JSON.stringify included, may): hit contents are ingest's to check, hit by hit.
 */
function parseBody(raw: unknown): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(typeof raw === 'string' ? raw : '');
  } catch {
    throw invalid('The body is not JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object with site, aid and events.');
  const fault = findInputFault(body, { maxDepth: MAX_COLLECT_DEPTH, text: false });
  if (fault) throw invalid(`The body ${fault.path ? `field "${fault.path}" ` : ''}${fault.reason}.`);
  const events = (body as Record<string, unknown>)['events'];
  if (!Array.isArray(events) || events.length === 0) throw invalid('The body has no events array.');
  if (events.length > MAX_HITS_PER_REQUEST) throw invalid(`The body carries ${events.length} hits; at most ${MAX_HITS_PER_REQUEST} are taken per request.`);
  return body as Record<string, unknown>;
}

/**
 * What a browser's hits may claim: their time is the receive time, ordered by the browser's clock
 * within CLIENT_CLOCK_BOUND_MS (so a page's hits keep their order, and no hit lands in the past);
 * an identify counts only with its website's signature for this visitor (the body's `aid`), unexpired at
 * the receive time, and is dropped (counted as rejected) without it. `identifies` says how each checked out.
 */
export function believable(
  hits: unknown[],
  website: Pick<Website, 'identify_secret' | 'public_id'>,
  receivedAt: number,
  identify: IdentifyPolicy & { visitor: unknown },
): { forwarded: unknown[]; refused: number; identifies: IdentifySignatureCheck[] } {
  const times = hits.map((hit) => (isHit(hit) && typeof hit['ts'] === 'number' && Number.isFinite(hit['ts']) ? hit['ts'] : null));
  const latest = Math.max(...times.map((t) => t ?? Number.NEGATIVE_INFINITY));
  const forwarded: unknown[] = [];
  let refused = 0;
  const identifies: IdentifySignatureCheck[] = [];
  hits.forEach((hit, i) => {
    if (!isHit(hit)) return void forwarded.push(hit);
    const ts = times[i];
    const timed: Hit = ts === null || ts === undefined ? { ...hit } : { ...hit, ts: receivedAt + Math.max(-CLIENT_CLOCK_BOUND_MS, Math.min(0, ts - latest)) };
    if (timed['type'] === 'identify') {
      const email = timed['email'];
      const check = typeof email !== 'string' || typeof identify.visitor !== 'string'
        ? 'malformed'
        : checkIdentifySignature({ secret: website.identify_secret, site: website.public_id, visitor: identify.visitor, email, signature: timed['sig'], now: receivedAt });
      identifies.push(check);
      if (!identifyBelieved(check, identify)) {
        refused += 1;
        return;
      }
    }
    forwarded.push(withoutSignature(timed));
  });
  return { forwarded, refused, identifies };
}

function isHit(value: unknown): value is Hit {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function withoutSignature(hit: unknown): unknown {
  if (!isHit(hit) || !('sig' in hit)) return hit;
  const { sig: _sig, ...rest } = hit;
  return rest;
}

/** The page's origin must be the website's domain or one of its subdomains. */
export function originMatches(origin: string | undefined, domain: string): boolean {
  if (!origin) return false;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
    const host = url.hostname.toLowerCase();
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return false;
  }
}

/** The first X-Forwarded-For address: what a replaying server says its visitor's address was. */
function forwardedFor(req: Request): string | null {
  const first = req.header('x-forwarded-for')?.split(',')[0]?.trim();
  return first && /^[0-9A-Fa-f:.]{2,45}$/.test(first) ? first : null;
}

function invalid(detail: string): ProblemError {
  return new ProblemError('invalid-request', {
    detail,
    remediation: `Send what t.js sends: {"site", "aid", "events": [...]} as JSON, at most ${MAX_HITS_PER_REQUEST} hits and 64 KB per request, nested at most ${MAX_COLLECT_DEPTH} levels.`,
  });
}

/** Body-reading failures of /collect as problems. */
function collectProblem(error: unknown): ProblemError | null {
  if (error instanceof ProblemError) return error;
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.too.large') return new ProblemError('payload-too-large', { detail: 'The body is larger than 64 KB.', remediation: 'Send fewer hits per request.' });
  const status = (error as { status?: number } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return invalid('The body could not be read.');
  return null;
}
