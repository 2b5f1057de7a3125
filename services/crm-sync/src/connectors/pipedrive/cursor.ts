// Where a Pipedrive pull stands, as the opaque string the sync runner stores after each applied
// page: full or incremental (with its lower bound), the phase, and Pipedrive's own next_cursor
// inside it. A resumed pull asks for exactly the next page, so nothing is read twice.
import { ProviderError } from '../connector';

export type Phase = 'pipelines' | 'organizations' | 'persons' | 'deals';
/** Pipelines first, then companies and people, so a deal's stage, company and contact precede it. */
export const PHASES: readonly Phase[] = ['pipelines', 'organizations', 'persons', 'deals'];

export interface PipedriveCursor {
  v: 1;
  mode: 'full' | 'incremental';
  phase: Phase;
  /** Incremental only: `updated_since` for every list (RFC 3339, whole seconds). */
  since: string | null;
  /** Pipedrive's additional_data.next_cursor of the page to read next; null for the phase's first page. */
  next: string | null;
}

export function encodeCursor(cursor: PipedriveCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function decodeCursor(text: string): PipedriveCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new ProviderError('the stored Pipedrive resume cursor is unreadable; run a full sync', null, false);
  }
  if (!isCursor(value)) throw new ProviderError('the stored Pipedrive resume cursor is not one this version wrote; run a full sync', null, false);
  return value;
}

function isCursor(value: unknown): value is PipedriveCursor {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return c['v'] === 1
    && (c['mode'] === 'full' ? c['since'] === null : c['mode'] === 'incremental' && typeof c['since'] === 'string')
    && PHASES.includes(c['phase'] as Phase)
    && (c['next'] === null || typeof c['next'] === 'string');
}

export function firstCursor(since: string | null): PipedriveCursor {
  if (since === null) return { v: 1, mode: 'full', phase: 'pipelines', since: null, next: null };
  const ms = Date.parse(since);
  if (Number.isNaN(ms)) throw new ProviderError(`the incremental lower bound ${JSON.stringify(since)} is not a date`, null, false);
  // Pipedrive keeps update_time to the second: round down so a change in the same second is kept.
  const floor = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return { v: 1, mode: 'incremental', phase: 'pipelines', since: floor, next: null };
}

/** The start of the phase after this one, or null at the end. */
export function advance(cursor: PipedriveCursor): PipedriveCursor | null {
  const phase = PHASES[PHASES.indexOf(cursor.phase) + 1];
  return phase ? { ...cursor, phase, next: null } : null;
}
