// PGlite is loaded through Node's own loader (see pglite-loader.ts). Under a sandboxing test
// runner its objects then come from another JS realm, where `instanceof Date`/`Error`/`Array`
// checks fail in both directions. These helpers keep values crossing the boundary plain, and
// also give parameters the same meaning they have on `pg`.

import { runInThisContext } from 'node:vm';

const tag = (value: unknown): string => Object.prototype.toString.call(value);

/** PGlite's realm's Uint8Array: its bytea serialiser accepts only those (checked with instanceof). */
const HostUint8Array = runInThisContext('Uint8Array') as Uint8ArrayConstructor;

/** A bound parameter as PGlite should get it: Dates as ISO text, objects as JSON, bytes as PGlite's bytes. */
export function toPgliteParam(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return value;
  if (tag(value) === '[object Date]') return (value as Date).toISOString();
  if (Array.isArray(value)) return value.map(toPgliteParam);
  if (ArrayBuffer.isView(value)) {
    const bytes = new HostUint8Array(value.byteLength);
    bytes.set(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    return bytes;
  }
  // As `pg` does: any other object is sent as JSON.
  return JSON.stringify(value);
}

function localise(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(localise);
  const kind = tag(value);
  if (kind === '[object Date]') return new Date((value as Date).getTime());
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (kind === '[object Object]') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = localise(inner);
    return out;
  }
  return value;
}

/** Rows built in another realm are rebuilt in this one; same-realm rows pass through untouched. */
export function localRows<T>(rows: T[]): T[] {
  if (rows instanceof Array) return rows;
  return (rows as unknown[]).map((row) => localise(row) as T);
}

const ERROR_FIELDS = [
  'code', 'severity', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table',
  'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const;

/** An error from another realm, rebuilt as an Error of this one with the same Postgres fields. */
export function localError(error: unknown): unknown {
  if (error instanceof Error) return error;
  if (error === null || typeof error !== 'object') return new Error(String(error));
  const source = error as Record<string, unknown>;
  const local = new Error(typeof source['message'] === 'string' ? source['message'] : String(error), { cause: error });
  for (const field of ERROR_FIELDS) {
    if (source[field] !== undefined) (local as unknown as Record<string, unknown>)[field] = source[field];
  }
  return local;
}
