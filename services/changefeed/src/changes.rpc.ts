// GET /changes (changefeed.listChanges). The gateway has authenticated the key (conversions:read),
// resolved the website and validated the query against the OpenAPI document.
import { ProblemError, type RpcMap } from '@sightline/kit';
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { CHANGE_TYPES } from './change-types';
import type { ChangesRepo, StoredChange } from './changes.repo';
import { FeedCursors, type FeedPosition } from './feed-cursor';

export const RETENTION_DAYS = 90;
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
const DAY_MS = 86_400_000;
const DEFAULT_LOOKBACK_MS = DAY_MS;
/** Client clocks run a little ahead sometimes; a `since` beyond this is a mistake, not skew. */
const FUTURE_SKEW_MS = 5 * 60_000;

export interface ChangesQuery {
  since?: string;
  cursor?: string;
  limit?: number | string;
  types?: string[] | string;
}

export interface ChangeItem {
  id: string;
  type: string;
  source: string;
  occurred_at: string;
  recorded_at: string;
  object_type?: string;
  object_id?: string;
  data: Record<string, unknown>;
}

export interface ChangesBody {
  changes: ChangeItem[];
  next_cursor: string;
  meta: {
    website_id: string;
    website: string;
    timezone: string;
    currency: string;
    row_count: number;
    has_more: boolean;
    truncated: boolean;
  };
}

export interface ListChangesDeps {
  repo: ChangesRepo;
  cursors: FeedCursors;
  /** The service clock (tests move it); defaults to the system clock. */
  now?: () => Date;
}

const FULL_READ =
  'Changes are kept 90 days, so this position can no longer be resumed without gaps. Do a full read (GET /contacts, and the other lists you mirror), then resume the feed with since set to the time that read started.';

function tooOld(detail: string): ProblemError {
  return new ProblemError('window-too-large', { detail, remediation: FULL_READ });
}

function parseTypes(raw: ChangesQuery['types']): string[] | null {
  if (raw === undefined) return null;
  const list = (Array.isArray(raw) ? raw : raw.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  if (list.length === 0) return null;
  const known: readonly string[] = CHANGE_TYPES;
  const unknown = list.filter((t) => !known.includes(t));
  if (unknown.length > 0) {
    throw new ProblemError('invalid-request', {
      detail: `Unknown change type "${unknown[0]}".`,
      remediation: 'Use change types from the allowed list, comma-separated.',
      allowed: CHANGE_TYPES,
    });
  }
  return [...new Set(list)].sort();
}

function parseLimit(raw: ChangesQuery['limit']): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new ProblemError('invalid-request', { detail: 'Query "limit" must be a positive integer.', remediation: `Send a limit from 1 to ${MAX_LIMIT}.` });
  }
  return Math.min(n, MAX_LIMIT); // more than the maximum is not an error
}

function toItem(change: StoredChange): ChangeItem {
  return {
    id: change.message_id,
    type: change.type,
    source: change.source,
    occurred_at: change.occurred_at.toISOString(),
    recorded_at: change.recorded_at.toISOString(),
    ...(change.object_type ? { object_type: change.object_type } : {}),
    ...(change.object_id ? { object_id: change.object_id } : {}),
    data: change.data,
  };
}

async function arrivedSince(repo: ChangesRepo, websiteId: string, types: string[] | null, upto: number): Promise<boolean> {
  const { upto: current } = await repo.snapshot();
  if (current === upto) return false;
  const newer = await repo.page({ websiteId, types, after: upto, since: null, upto: current, below: null, limit: 1 });
  return newer.length > 0;
}

export function listChangesHandler(deps: ListChangesDeps) {
  const clock = deps.now ?? (() => new Date());
  return async (request: ApiRequest<ChangesQuery>): Promise<ApiResponse<ChangesBody>> => {
    const website = request.website;
    // The gateway resolves a website for this operation; its absence is a wiring fault.
    if (!website) throw new Error('changefeed.listChanges needs a resolved website');
    const types = parseTypes(request.query.types);
    const limit = parseLimit(request.query.limit);
    const scope = FeedCursors.scope(website.id, types);
    const nowMs = clock().getTime();
    const retentionFloor = nowMs - RETENTION_DAYS * DAY_MS;

    // The run this request reads: (after | since, upto], and below which it already paged.
    let run: { after: number | null; since: string | null; floorAt: number; upto: number; uptoAt: number; below: number | null };
    const cursor = request.query.cursor;
    if (cursor !== undefined && cursor !== '') {
      const position: FeedPosition = deps.cursors.decode(scope, cursor);
      if (position.floorAt < retentionFloor) {
        throw tooOld('The cursor points at changes older than the 90-day retention of the change feed.');
      }
      if (position.kind === 'run') {
        run = { ...position };
      } else {
        const { upto } = await deps.repo.snapshot();
        if (position.after > upto) {
          throw new ProblemError('invalid-request', {
            detail: 'The cursor is ahead of this change feed (it was issued by another installation or before a restore).',
            remediation: 'Restart paging with `since` set to the last time your copy is known to be complete.',
          });
        }
        run = { after: position.after, since: null, floorAt: position.floorAt, upto, uptoAt: nowMs, below: null };
      }
    } else {
      let sinceMs = nowMs - DEFAULT_LOOKBACK_MS;
      if (request.query.since !== undefined) {
        sinceMs = Date.parse(request.query.since);
        if (Number.isNaN(sinceMs)) {
          throw new ProblemError('invalid-request', { detail: 'Query "since" is not a date-time.', remediation: 'Send since as an ISO 8601 date-time, e.g. 2025-01-31T00:00:00Z.' });
        }
        if (sinceMs < retentionFloor) throw tooOld('since is older than the 90-day retention of the change feed.');
        if (sinceMs > nowMs + FUTURE_SKEW_MS) {
          throw new ProblemError('invalid-request', { detail: 'Query "since" is in the future.', remediation: 'Send a since at or before the current time.' });
        }
      }
      const { upto } = await deps.repo.snapshot();
      run = { after: null, since: new Date(sinceMs).toISOString(), floorAt: sinceMs, upto, uptoAt: nowMs, below: null };
    }

    const rows = await deps.repo.page({
      websiteId: website.id,
      types,
      after: run.after,
      since: run.since === null ? null : new Date(run.since),
      upto: run.upto,
      below: run.below,
      limit: limit + 1,
    });
    const runHasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const next: FeedPosition =
      runHasMore && last
        ? { kind: 'run', after: run.after, since: run.since, floorAt: run.floorAt, upto: run.upto, uptoAt: run.uptoAt, below: last.seq }
        : { kind: 'resume', after: run.upto, floorAt: run.uptoAt };
    // At the end of a run, changes that arrived while it was read make has_more true, so a client
    // that pages while has_more stops only when it has caught up with the feed as it is now.
    const hasMore = runHasMore || (await arrivedSince(deps.repo, website.id, types, run.upto));

    return {
      status: 200,
      body: {
        changes: page.map(toItem),
        next_cursor: deps.cursors.encode(scope, next),
        meta: {
          website_id: website.id,
          website: website.domain,
          timezone: website.timezone,
          currency: website.currency,
          row_count: page.length,
          has_more: hasMore,
          truncated: hasMore,
        },
      },
    };
  };
}

/** The feed's RPC map: GET /changes. */
export function changefeedRpcHandlers(deps: ListChangesDeps): RpcMap<'changefeed'> {
  return { 'changefeed.listChanges': listChangesHandler(deps) };
}
