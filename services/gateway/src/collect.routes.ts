// The tracker's public endpoints: the script (/t.js) and its collect endpoint (/collect). No API
// key: a hit names its website by public id and must come from a page on that website's domain
// (the browser's Origin header), so one website can never write into another's data.
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Bus } from '@sightline/kit';
import type { AccountsRepo, Website } from './accounts.repo';

const SITE_CACHE_MS = 60_000;

export interface CollectDeps {
  repo: AccountsRepo;
  bus: Bus;
  rpcTimeoutMs: number;
  ingestAvailable: boolean;
  trackerScript: () => string;
  logger: Logger;
}

export function mountCollectRoutes(router: Router, deps: CollectDeps): void {
  const sites = new Map<string, { website: Website | null; expires: number }>();
  const findSite = async (publicId: string): Promise<Website | null> => {
    const cached = sites.get(publicId);
    if (cached && cached.expires > Date.now()) return cached.website;
    const website = await deps.repo.findWebsiteByPublicId(publicId);
    sites.set(publicId, { website, expires: Date.now() + SITE_CACHE_MS });
    return website;
  };

  router.get('/t.js', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('application/javascript').send(deps.trackerScript());
  });

  router.options('/collect', (req, res) => {
    allowOrigin(req, res);
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.status(204).end();
  });

  router.post('/collect', express.text({ type: () => true, limit: '64kb' }), (req: Request, res: Response) => {
    void (async () => {
      allowOrigin(req, res);
      let body: { site?: unknown } | null = null;
      try {
        body = JSON.parse(String(req.body ?? '')) as { site?: unknown };
      } catch {
        return reply(res, 400, 'body is not JSON');
      }
      const website = typeof body?.site === 'string' ? await findSite(body.site) : null;
      if (!website) return reply(res, 404, 'unknown site id');
      if (!originMatches(req.header('origin'), website.domain)) return reply(res, 403, 'origin does not belong to this website');
      if (!deps.ingestAvailable) return reply(res, 501, 'ingest is not part of this build');
      const result = await deps.bus.rpc(
        'ingest.collect',
        {
          website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency, workspace_id: website.workspace_id },
          ip: clientIp(req),
          user_agent: req.header('user-agent') ?? null,
          body,
        },
        { timeoutMs: deps.rpcTimeoutMs },
      );
      res.status(202).json(result);
    })().catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'collect failed');
      if (!res.headersSent) reply(res, 503, 'try again later');
    });
  });
}

/** The page's origin must be the website's domain or one of its subdomains. */
export function originMatches(origin: string | undefined, domain: string): boolean {
  if (!origin) return false;
  try {
    const host = new URL(origin).hostname.toLowerCase();
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return false;
  }
}

/** First address of X-Forwarded-For when a proxy set it, else the socket's. Used for geo only, never stored. */
function clientIp(req: Request): string | null {
  const forwarded = req.header('x-forwarded-for')?.split(',')[0]?.trim();
  return forwarded || req.socket.remoteAddress || null;
}

function allowOrigin(req: Request, res: Response): void {
  const origin = req.header('origin');
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
  }
}

function reply(res: Response, status: number, error: string): void {
  res.status(status).json({ error });
}
