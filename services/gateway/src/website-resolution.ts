import { ProblemError, normaliseDomain } from '@sightline/kit';
import type { Website } from './accounts.repo';

/**
 * Picks the website a request is about. `website` (a domain) is required only when the key reaches
 * more than one; a domain the key does not reach is indistinguishable from one that does not exist.
 */
export function resolveWebsite(reachable: Website[], requested: unknown): Website {
  const domains = reachable.map((w) => w.domain);
  if (typeof requested === 'string' && requested !== '') {
    const wanted = normaliseDomain(requested);
    const found = reachable.find((w) => w.domain === wanted);
    if (found) return found;
    throw new ProblemError('website-not-found', {
      detail: `No website "${requested}" is reachable with this key.`,
      remediation: 'Pass one of the domains this key reaches (GET /v1/websites lists them).',
      allowed: domains,
    });
  }
  if (reachable.length === 1) return reachable[0] as Website;
  if (reachable.length === 0) {
    throw new ProblemError('website-not-found', {
      detail: 'This key reaches no website.',
      remediation: 'Add a website to the workspace or create a key that reaches one (`sightline websites add`, `sightline keys create`).',
    });
  }
  throw new ProblemError('invalid-request', {
    detail: `This key reaches ${reachable.length} websites, so the "website" parameter is required.`,
    remediation: 'Add website=<domain> with one of the allowed domains.',
    allowed: domains,
  });
}

