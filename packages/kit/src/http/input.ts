// The one place that says which strings, dates and shapes Sightline takes from a client. Everything
// accepted here can be stored by every store it reaches (Postgres text and jsonb refuse NUL; a lone
// UTF-16 surrogate is not Unicode and is refused or silently replaced; ClickHouse date types span
// fixed ranges), so nothing accepted at the door is dead-lettered later for its content. The
// gateway checks every query, path and body value with it; ingest checks every event and tracker hit.

/** Deepest nesting of objects and arrays a request body or a tracker payload may have. */
export const MAX_JSON_DEPTH = 32;
/**
 * Most values (objects, arrays, strings, numbers, booleans and nulls, each counted once) one request
 * body may hold: a bound on the work every later check does, well above what 200 events with their
 * properties need, and below the million tiny values a 2 MB body could otherwise carry.
 */
export const MAX_JSON_VALUES = 100_000;

/**
 * Dates a client may send: from 2000-01-01T00:00:00Z (where attribution history starts) up to, not
 * including, 2100-01-01T00:00:00Z. Inside what every date type we store or compute with holds
 * (ClickHouse Date, DateTime, DateTime64, Postgres timestamptz), with room for the windows computed
 * from them: a lookback reaching before 1970 would be a negative Unix time, which ClickHouse
 * parameters refuse.
 */
export const STORABLE_TIME_MIN_MS = Date.UTC(2000, 0, 1);
export const STORABLE_TIME_MAX_MS = Date.UTC(2100, 0, 1);
export const STORABLE_TIME_RANGE = '2000-01-01T00:00:00Z to 2099-12-31T23:59:59.999Z';
/**
 * Earliest start of an analytics window (a period resolved relative to now may reach before 2000,
 * where there is simply no data): a year past the Unix epoch, so a window with its attribution
 * lookback never turns into a negative Unix time, which ClickHouse parameters refuse.
 */
export const WINDOW_TIME_MIN_MS = Date.UTC(1971, 0, 1);

export interface InputFault {
  /** Dotted path of the offending value (`events.3.properties.note`); '' for the root. */
  path: string;
  /** Why it is refused, as the end of a sentence: "contains a NUL character (U+0000)". */
  reason: string;
  /** Which rule it breaks, so the answer can say what to do: the text rules, the depth or the size limit. */
  rule: 'text' | 'depth' | 'size';
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as given, or null when it can. */
export function textFault(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return null;
}

/**
 * The first value in `value` that cannot be taken: a string (or object key) failing textFault,
 * nesting deeper than `maxDepth`, or more than `maxValues` values in all. Iterative, so a hostile
 * depth cannot overflow the stack: run it before anything recursive (ajv, JSON.stringify,
 * structuredClone) touches client data. `skip(path)` leaves a subtree to a later, per-item check
 * (POST /events checks each event itself; its values are not counted here); `text: false` checks the
 * shape only.
 */
export function findInputFault(value: unknown, options: { maxDepth?: number; maxValues?: number; skip?: (path: string) => boolean; text?: boolean } = {}): InputFault | null {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const maxValues = options.maxValues ?? MAX_JSON_VALUES;
  const checkText = options.text ?? true;
  const stack: [unknown, string, number][] = [[value, '', 0]];
  const tooMany: InputFault = { path: '', reason: `holds more than ${maxValues.toLocaleString('en-US')} values`, rule: 'size' };
  // Values are counted as they are pushed, so a huge array or object costs no stack beyond the limit.
  let values = 1;
  while (stack.length > 0) {
    const [node, path, depth] = stack.pop() as [unknown, string, number];
    if (path !== '' && options.skip?.(path)) continue;
    if (typeof node === 'string') {
      const reason = checkText ? textFault(node) : null;
      if (reason) return { path, reason, rule: 'text' };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth >= maxDepth) return { path, reason: `is nested deeper than ${maxDepth} levels`, rule: 'depth' };
    const join = (key: string) => (path === '' ? key : `${path}.${key}`);
    if (Array.isArray(node)) {
      if ((values += node.length) > maxValues) return tooMany;
      for (let i = node.length - 1; i >= 0; i -= 1) stack.push([node[i], join(String(i)), depth + 1]);
      continue;
    }
    const entries = Object.entries(node as Record<string, unknown>);
    if ((values += entries.length) > maxValues) return tooMany;
    for (const [key, child] of entries) {
      const keyReason = checkText ? textFault(key) : null;
      if (keyReason) return { path: join(key), reason: `has a name that ${keyReason}`, rule: 'text' };
      stack.push([child, join(key), depth + 1]);
    }
  }
  return null;
}

// RFC 3339 date-time: date, `T` (or a space), time, optional fraction (1-9 digits), `Z` or an offset.
// Read character by character: this runs several times per ingested event (the intake's schema, the
// event's own time), where a regex match and its substrings were the intake's largest cost.
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The value of the two decimal digits at `at`, or -1. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Epoch milliseconds of an RFC 3339 date-time we can store; null when malformed or out of range. */
export function parseStorableTime(text: string): number | null {
  const n = text.length;
  if (n < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
  const sep = text.charCodeAt(10);
  if (sep !== 84 && sep !== 116 && sep !== 32) return null; // T, t or a space
  const century = twoDigits(text, 0);
  const yy = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (century < 0 || yy < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  const year = century * 100 + yy;
  // Leap seconds (23:59:60) are refused: neither JavaScript nor ClickHouse can represent them.
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // Years 0000-0099 would be read as 1900-1999 by Date.UTC; they are out of range anyway.
  if (year < 1999 || year > 2100) return null;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return null;
  let at = 19;
  let millis = 0;
  if (text.charCodeAt(at) === 46) {
    // A fraction of 1 to 9 digits; milliseconds are its first three (the rest is cut, not rounded).
    const start = (at += 1);
    while (at < n && at - start < 10) {
      const d = text.charCodeAt(at) - 48;
      if (d < 0 || d > 9) break;
      if (at - start < 3) millis = millis * 10 + d;
      at += 1;
    }
    const digits = at - start;
    if (digits < 1 || digits > 9) return null;
    for (let k = digits; k < 3; k += 1) millis *= 10;
  }
  let offsetMinutes = 0;
  const zone = text.charCodeAt(at);
  if (zone === 90 || zone === 122) {
    if (at + 1 !== n) return null; // Z or z, and nothing after it
  } else if (zone === 43 || zone === 45) {
    if (at + 6 !== n || text.charCodeAt(at + 3) !== 58) return null;
    const offsetHours = twoDigits(text, at + 1);
    const offsetMins = twoDigits(text, at + 4);
    if (offsetHours < 0 || offsetMins < 0 || offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (zone === 45 ? -1 : 1) * (offsetHours * 60 + offsetMins);
  } else {
    return null;
  }
  const epoch = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  return isStorableEpochMs(epoch) ? epoch : null;
}

/** True for a time in epoch milliseconds inside the storable range. */
export function isStorableEpochMs(ms: number): boolean {
  return Number.isFinite(ms) && ms >= STORABLE_TIME_MIN_MS && ms < STORABLE_TIME_MAX_MS;
}

// A UUID as the stores read it: ajv-formats also takes a `urn:uuid:` prefix, which Postgres refuses.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Replaces ajv's `date-time` and `uuid` formats (after ajv-formats) with the storable ones, so a
 * schema refuses what a store would refuse.
 */
export function addInputFormats(ajv: { addFormat(name: string, format: { type: 'string'; validate: (text: string) => boolean }): unknown }): void {
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseStorableTime(text) !== null });
  ajv.addFormat('uuid', { type: 'string', validate: (text: string) => UUID.test(text) });
}

/** The note a refused date-time carries, so a client learns the rule and not only that it broke it. */
export const DATE_TIME_RULE = `an RFC 3339 date-time with a time zone (Z or an offset), seconds 00-59, between ${STORABLE_TIME_RANGE}`;
