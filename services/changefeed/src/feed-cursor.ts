// Positions a change-feed cursor encodes (see README "Cursor semantics"). A *run* reads one range
// of sequence numbers, (after | since, upto], newest first, page by page; `upto` is fixed when the
// run starts, so changes that arrive meanwhile land above it and wait for the next run. When the
// range is exhausted the cursor becomes a *resume* position: the next run starts above `upto`.
import { CursorCodec, invalidCursor } from '@sightline/kit';

export interface RunPosition {
  kind: 'run';
  /** Exclusive lower bound, or null for a first run bounded by `since`. */
  after: number | null;
  since: string | null;
  /** When the lower bound was set (ms): what retention is checked against. */
  floorAt: number;
  upto: number;
  /** When `upto` was read (ms): the floor of the run after this one. */
  uptoAt: number;
  /** Exclusive: the oldest change already returned in this run. */
  below: number;
}

export interface ResumePosition {
  kind: 'resume';
  after: number;
  floorAt: number;
}

export type FeedPosition = RunPosition | ResumePosition;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The signature proves we issued it; the shape check guards against cursors of an older format. */
function isPosition(value: unknown): value is FeedPosition {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Record<string, unknown>;
  if (p['kind'] === 'resume') return isInt(p['after']) && isInt(p['floorAt']);
  if (p['kind'] !== 'run') return false;
  const lowerOk = (p['after'] === null && typeof p['since'] === 'string') || (isInt(p['after']) && p['since'] === null);
  return lowerOk && isInt(p['floorAt']) && isInt(p['upto']) && isInt(p['uptoAt']) && isInt(p['below']);
}

export class FeedCursors {
  private readonly codec: CursorCodec;

  constructor(secret: string) {
    this.codec = new CursorCodec(secret);
  }

  /** What a cursor is bound to: the website and the types filter (order-insensitive). */
  static scope(websiteId: string, types: readonly string[] | null): string {
    return `changes|${websiteId}|${types ? [...types].sort().join(',') : '*'}`;
  }

  encode(scope: string, position: FeedPosition): string {
    return this.codec.encode(scope, position);
  }

  /** Throws a 400 invalid-request problem for a cursor that is edited, foreign or malformed. */
  decode(scope: string, cursor: string): FeedPosition {
    let position: unknown;
    try {
      position = this.codec.decode<unknown>(scope, cursor);
    } catch (error) {
      // A body that is not base64 JSON fails inside the codec's parse: still the client's cursor.
      if (error instanceof SyntaxError) throw invalidCursor('The cursor is not one this service issued.');
      throw error;
    }
    if (!isPosition(position)) throw invalidCursor('The cursor is not one this service issued.');
    return position;
  }
}
