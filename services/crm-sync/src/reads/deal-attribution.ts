// The computed fields of a page of deals come from attribution, in one call per page. A deal list
// is still useful without them, so when attribution fails or is slow the page is answered with
// those fields null and a note, rather than failing the list.
import type { DealTouchesRequest, DealTouchesResponse } from '@sightline/proto-schemas';
import type { CrmSyncDeps } from '../deps';
import type { DealRow } from './reads.repo';

export type DealAttribution = DealTouchesResponse['deals'][number];

export interface PageAttribution {
  /** By deal id; empty when attribution was unavailable. */
  byDeal: Map<string, DealAttribution>;
  available: boolean;
}

/** Emails sent per deal (the request schema's maxItems). */
export const MAX_EMAILS_PER_DEAL = 500;

export const ATTRIBUTION_UNAVAILABLE_NOTE =
  'Attribution could not be reached, so first_touch, last_touch, contact_ids and attribution_basis are null on every row. The deals themselves are complete; retry later for their attribution.';

/** Half the caller's deadline (the gateway waits rpcTimeoutMs for the whole answer), at most 5 s. */
export function attributionTimeoutMs(rpcTimeoutMs: number): number {
  return Math.max(100, Math.min(5_000, Math.floor(rpcTimeoutMs / 2)));
}

export async function attributeDeals(
  deps: Pick<CrmSyncDeps, 'bus' | 'logger'> & { timeoutMs: number },
  scope: { workspaceId: string; websiteId: string },
  deals: readonly DealRow[],
): Promise<PageAttribution> {
  if (deals.length === 0) return { byDeal: new Map(), available: true };
  const request: DealTouchesRequest = {
    workspace_id: scope.workspaceId,
    website_id: scope.websiteId,
    deals: deals.map((d) => ({ deal_id: d.id, emails: d.contact_emails.slice(0, MAX_EMAILS_PER_DEAL), created_at: d.created_at.toISOString() })),
  };
  try {
    const reply = await deps.bus.call('attribution.getDealTouches', request, { timeoutMs: deps.timeoutMs });
    return { byDeal: new Map(reply.deals.map((d) => [d.deal_id, d])), available: true };
  } catch (error) {
    deps.logger.warn({ err: error, websiteId: scope.websiteId, deals: deals.length }, 'attribution unavailable: deals listed without attribution');
    return { byDeal: new Map(), available: false };
  }
}
