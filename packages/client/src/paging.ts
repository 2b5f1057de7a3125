// Cursor paging (API-SPEC "Versioning" 4): pass next_cursor back verbatim, stop when meta.has_more
// is false or next_cursor is absent. Works for every GET operation of the document with a cursor.
import type { Client } from 'openapi-fetch';
import { isProblem, SightlineApiError } from './problem';
import type { paths } from './schema';

type Get<P extends keyof paths> = paths[P] extends { get: infer O } ? O : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** Paths whose GET takes a `cursor`: the paged lists. */
export type PagedPath = {
  [P in keyof paths]: 'cursor' extends keyof QueryOf<Get<P>> ? P : never;
}[keyof paths];

/** The 200 body of a paged path. */
export type PageOf<P extends PagedPath> = Get<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** One row of a page: `data[]`, or `changes[]` for the change feed. */
export type ItemOf<P extends PagedPath> = PageOf<P> extends { data: (infer T)[] } ? T : PageOf<P> extends { changes: (infer T)[] } ? T : never;

/** Request options of a paged path, without the cursor (the helper passes it). */
export type PageParams<P extends PagedPath> = {
  params?: { query?: Omit<QueryOf<Get<P>>, 'cursor'> & { cursor?: string } };
  headers?: Record<string, string>;
};

interface PageShape {
  next_cursor?: string;
  meta?: { has_more?: boolean };
  data?: unknown[];
  changes?: unknown[];
}

type LooseGet = (path: string, init: { params: { query: Record<string, unknown> }; headers?: Record<string, string> }) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * Every page of a paged list, first to last. Each page is yielded whole so a caller can store
 * next_cursor after applying it (the change feed's last page still carries the cursor to resume from).
 * A problem answer is thrown as SightlineApiError.
 */
export async function* pages<P extends PagedPath>(client: Client<paths>, path: P, init: PageParams<P> = {}): AsyncGenerator<PageOf<P>, void, undefined> {
  const get = client.GET as unknown as LooseGet;
  let query: Record<string, unknown> = { ...(init.params?.query ?? {}) };
  for (;;) {
    const { data, error, response } = await get(path, { params: { query }, ...(init.headers ? { headers: init.headers } : {}) });
    if (error !== undefined || data === undefined) {
      if (isProblem(error)) throw new SightlineApiError(error, response.status);
      throw new Error(`GET ${path} answered ${response.status} without a problem document`);
    }
    yield data as PageOf<P>;
    const page = data as PageShape;
    if (page.meta?.has_more === false || !page.next_cursor) return;
    query = { ...query, cursor: page.next_cursor };
  }
}

/** Every row of a paged list across its pages. */
export async function* items<P extends PagedPath>(client: Client<paths>, path: P, init: PageParams<P> = {}): AsyncGenerator<ItemOf<P>, void, undefined> {
  for await (const page of pages(client, path, init)) {
    const shape = page as PageShape;
    yield* (shape.data ?? shape.changes ?? []) as ItemOf<P>[];
  }
}
