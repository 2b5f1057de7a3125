// What every analytics read starts from: the website the gateway resolved, the window resolved in
// the website timezone (@sightline/periods), and the meta block the spec requires on every answer.
import { metaHead } from '@sightline/kit';
import { resolveWindow, type ResolvedWindow } from '@sightline/periods';
import type { ApiRequest } from '@sightline/proto-schemas';

export interface AnalyticsWebsite {
  id: string;
  domain: string;
  timezone: string;
  currency: string;
}

export interface AnalyticsContext<Q = Record<string, unknown>> {
  request: ApiRequest<Q>;
  workspaceId: string;
  website: AnalyticsWebsite;
  window: ResolvedWindow;
  /** The window as instants: [from, to). */
  from: Date;
  to: Date;
}

export interface WindowQuery {
  period?: string;
  from?: string;
  to?: string;
}

/** Resolves the window; throws invalid-window or window-too-large as problem documents. */
export function analyticsContext<Q extends WindowQuery>(request: ApiRequest<Q>, now?: Date): AnalyticsContext<Q> {
  // The gateway resolves a website for every analytics operation; its absence is a wiring fault.
  if (!request.website) throw new Error(`${request.operation} needs a resolved website`);
  const website = request.website;
  const { period, from, to } = request.query;
  const window = resolveWindow({
    timezone: website.timezone,
    ...(period !== undefined ? { period } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(now ? { now } : {}),
  });
  return {
    request,
    workspaceId: request.workspace.id,
    website,
    window,
    from: new Date(window.from),
    to: new Date(window.to),
  };
}

export interface AnalyticsMeta {
  website_id: string;
  website: string;
  timezone: string;
  currency: string;
  window: ResolvedWindow;
  row_count: number;
  truncated: boolean;
  definitions: Record<string, string>;
  [extra: string]: unknown;
}

/** The meta block: website, timezone, currency and window, plus what the endpoint adds. */
export function metaOf(
  ctx: AnalyticsContext<unknown>,
  fields: { row_count: number; truncated: boolean; definitions: Record<string, string> } & Record<string, unknown>,
): AnalyticsMeta {
  return {
    ...metaHead(ctx.website),
    window: ctx.window,
    ...fields,
  };
}
