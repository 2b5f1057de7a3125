// Where a HubSpot pull stands, as an opaque string the sync runner stores after each committed
// page: which object type, full or incremental, and the paging position inside it. A resumed pull
// decodes it and asks for exactly the next page, so nothing is fetched (or applied) twice.
import { ProviderError } from '../connector';
import type { ObjectType } from './mapping';

export type Phase = 'pipelines' | ObjectType;
export const PHASES: readonly Phase[] = ['pipelines', 'companies', 'contacts', 'deals'];

export interface FullCursor {
  v: 1;
  mode: 'full';
  phase: Phase;
  /** The list endpoint's paging.next.after; null for the first page. */
  after: string | null;
}

export interface IncrementalCursor {
  v: 1;
  mode: 'incremental';
  phase: Phase;
  /** The sync's lower bound (records modified at or after it). */
  since: string;
  /**
   * The current search's lower bound: `since`, or the last seen modification time once a search
   * came near HubSpot's 10,000-result cap and was started again from there.
   */
  floor: string;
  /** True once every record modified exactly at `floor` was read: the search continues after it. */
  floorExclusive?: boolean;
  /** The search's paging.next.after (an offset); null for the first page. */
  after: string | null;
  /** Results read in the current search, to restart it before the cap. */
  seen: number;
  /**
   * Set while reading records that all share the modification time `floor` (more of them than
   * the cap allows one search to page through): they are read by ascending object id instead.
   */
  tie?: { afterId: string | null };
}

export type HubspotCursor = FullCursor | IncrementalCursor;

export function encodeCursor(cursor: HubspotCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function decodeCursor(text: string): HubspotCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new ProviderError('the stored HubSpot resume cursor is unreadable; run a full sync', null, false);
  }
  if (!isCursor(value)) throw new ProviderError('the stored HubSpot resume cursor is not one this version wrote; run a full sync', null, false);
  return value;
}

function isCursor(value: unknown): value is HubspotCursor {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  const common = c['v'] === 1 && PHASES.includes(c['phase'] as Phase) && (c['after'] === null || typeof c['after'] === 'string');
  if (!common) return false;
  if (c['mode'] === 'full') return true;
  const tie = c['tie'] as { afterId?: unknown } | undefined;
  return c['mode'] === 'incremental' && typeof c['since'] === 'string' && typeof c['floor'] === 'string' && typeof c['seen'] === 'number'
    && (tie === undefined || (typeof tie === 'object' && tie !== null && (tie.afterId === null || typeof tie.afterId === 'string')));
}

/** The phase after `phase`, or null when it was the last. */
export function nextPhase(phase: Phase): Phase | null {
  return PHASES[PHASES.indexOf(phase) + 1] ?? null;
}
