// The change log and GET /changes handler against one SQL driver, written once and run on PGlite
// (feed.test.ts) and PostgreSQL (feed.int.test.ts). The paging tests interleave writes with reads
// and check the one promise of the feed: a client that follows the cursor sees every change of its
// website exactly once.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { runSqlMigrations, type SqlStore } from '@sightline/kit';
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { ChangesRepo } from './changes.repo';
import { listChangesHandler, type ChangesBody, type ChangesQuery } from './changes.rpc';
import { FeedCursors } from './feed-cursor';
import { purgeExpiredChanges } from './retention';

export interface FeedDriver {
  open(): Promise<{ store: SqlStore; close(): Promise<void> }>;
  /** True when a second connection can read while a transaction is open (not PGlite). */
  concurrentConnections: boolean;
}

const DAY_MS = 86_400_000;
const SECRET = 'feed-suite-cursor-secret-0123456789';

function site(id = randomUUID()) {
  return { id, domain: `${id.slice(0, 8)}.test`, timezone: 'UTC', currency: 'EUR' };
}
type Site = ReturnType<typeof site>;

function request(website: Site, query: ChangesQuery): ApiRequest<ChangesQuery> {
  return {
    operation: 'listChanges',
    request_id: 'feed-suite',
    workspace: { id: 'ws-feed', name: 'Feed', timezone: 'UTC', currency: 'EUR', plan: 'pro' },
    website,
    key: { id: 'key-reader', scopes: ['conversions:read'] },
    params: {},
    query,
    body: null,
    headers: {},
  };
}

export function describeFeed(name: string, driver: FeedDriver): void {
  describe(`change log and GET /changes (${name})`, () => {
    let store: SqlStore;
    let close: () => Promise<void>;
    let repo: ChangesRepo;
    let clockOffsetMs = 0;
    const now = () => new Date(Date.now() + clockOffsetMs);
    let list: (request: ApiRequest<ChangesQuery>) => Promise<ApiResponse<ChangesBody>>;
    let counter = 0;

    beforeAll(async () => {
      ({ store, close } = await driver.open());
      await runSqlMigrations(store, join(__dirname, '..', 'migrations', 'postgres'));
      repo = new ChangesRepo(store);
      list = listChangesHandler({ repo, cursors: new FeedCursors(SECRET), now });
    }, 60_000);
    afterAll(async () => close?.());
    afterEach(() => {
      clockOffsetMs = 0;
    });

    const change = (website: Site, over: { type?: string; source?: string; id?: string } = {}) => ({
      message_id: over.id ?? `msg-${++counter}-${randomUUID()}`,
      workspace_id: 'ws-feed',
      website_id: website.id,
      type: over.type ?? 'conversion.created',
      source: over.source ?? 'ingest',
      object_type: 'contact' as const,
      object_id: randomUUID(),
      occurred_at: new Date().toISOString(),
      data: { n: counter },
    });

    /** A client following the spec: pages while has_more, keeps the cursor only after applying. */
    async function drain(website: Site, cursor: string | null, limit: number, seen: string[], extra: ChangesQuery = {}): Promise<string> {
      let current = cursor;
      for (;;) {
        const query: ChangesQuery = { ...extra, limit, ...(current ? { cursor: current } : { since: new Date(Date.now() - 3_600_000).toISOString() }) };
        const { body } = await list(request(website, query));
        seen.push(...body.changes.map((c) => c.id));
        current = body.next_cursor;
        if (!body.meta.has_more) return current;
      }
    }

    it('lists a website\'s changes newest first, with source, object and data', async () => {
      const website = site();
      const other = site();
      const first = change(website, { source: 'api:key-1' });
      const second = change(website, { source: 'crm:hubspot', type: 'stage.changed' });
      await repo.insert(first);
      await repo.insert(change(other));
      await repo.insert(second);
      const { status, body } = await list(request(website, {}));
      expect(status).toBe(200);
      expect(body.changes.map((c) => c.id)).toEqual([second.message_id, first.message_id]);
      expect(body.changes[1]).toMatchObject({ type: 'conversion.created', source: 'api:key-1', object_type: 'contact', object_id: first.object_id, data: first.data });
      expect(body.meta).toMatchObject({ website_id: website.id, has_more: false, row_count: 2 });
      expect(typeof body.next_cursor).toBe('string');
    });

    it('stores a redelivered message once', async () => {
      const website = site();
      const once = change(website);
      expect(await repo.insert(once)).toBe(true);
      expect(await repo.insert(once)).toBe(false);
      const { body } = await list(request(website, {}));
      expect(body.changes).toHaveLength(1);
    });

    it('without since or cursor returns the last 24 hours; since widens it', async () => {
      const website = site();
      const old = change(website);
      const fresh = change(website);
      await repo.insert(old);
      await repo.insert(fresh);
      await store.query(`UPDATE changes SET recorded_at = now() - interval '30 hours' WHERE message_id = $1`, [old.message_id]);
      expect((await list(request(website, {}))).body.changes.map((c) => c.id)).toEqual([fresh.message_id]);
      const since = new Date(Date.now() - 2 * DAY_MS).toISOString();
      expect((await list(request(website, { since }))).body.changes.map((c) => c.id)).toEqual([fresh.message_id, old.message_id]);
    });

    it('filters by type and binds the cursor to the filter', async () => {
      const website = site();
      await repo.insert(change(website, { type: 'conversion.created' }));
      const stage = change(website, { type: 'stage.changed' });
      await repo.insert(stage);
      const { body } = await list(request(website, { types: ['stage.changed'] }));
      expect(body.changes.map((c) => c.id)).toEqual([stage.message_id]);
      await expect(list(request(website, { types: ['conversion.created'], cursor: body.next_cursor }))).rejects.toMatchObject({ kind: 'invalid-request', status: 400 });
      await expect(list(request(site(), { types: ['stage.changed'], cursor: body.next_cursor }))).rejects.toMatchObject({ kind: 'invalid-request' });
    });

    it('refuses a tampered cursor with invalid-request telling the client to restart paging', async () => {
      const website = site();
      await repo.insert(change(website));
      const { body } = await list(request(website, { limit: 1 }));
      const [payload, signature] = body.next_cursor.split('.') as [string, string];
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { p: { after: number } };
      decoded.p.after = 0;
      const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${signature}`;
      for (const bad of [forged, `${body.next_cursor}x`, 'garbage', `${payload}.`]) {
        await expect(list(request(website, { cursor: bad }))).rejects.toMatchObject({ kind: 'invalid-request', status: 400, remediation: expect.stringMatching(/restart paging/i) });
      }
    });

    it('refuses since or a cursor older than the 90-day retention with window-too-large and a full-read remediation', async () => {
      const website = site();
      await repo.insert(change(website));
      const since = new Date(Date.now() - 91 * DAY_MS).toISOString();
      await expect(list(request(website, { since }))).rejects.toMatchObject({ kind: 'window-too-large', status: 400, remediation: expect.stringMatching(/full read/i) });
      const { body } = await list(request(website, {}));
      // The client goes quiet for 91 days: its stored cursor is now past retention.
      clockOffsetMs = 91 * DAY_MS;
      await expect(list(request(website, { cursor: body.next_cursor }))).rejects.toMatchObject({ kind: 'window-too-large', remediation: expect.stringMatching(/full read/i) });
      // A client that polls keeps its position fresh even when nothing changes.
      clockOffsetMs = 60 * DAY_MS;
      const polled = await list(request(website, { cursor: body.next_cursor }));
      clockOffsetMs = 120 * DAY_MS;
      await expect(list(request(website, { cursor: polled.body.next_cursor }))).resolves.toMatchObject({ status: 200 });
    });

    it('clamps limit to 500 and pages with has_more', async () => {
      const website = site();
      for (let i = 0; i < 5; i += 1) await repo.insert(change(website));
      const page = await list(request(website, { limit: 2 }));
      expect(page.body.changes).toHaveLength(2);
      expect(page.body.meta.has_more).toBe(true);
      expect((await list(request(website, { limit: 5000 }))).body.changes).toHaveLength(5);
    });

    it('later runs return only what is new: newest first within the run, nothing repeated', async () => {
      const website = site();
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const c = change(website);
        ids.push(c.message_id);
        await repo.insert(c);
      }
      const seen: string[] = [];
      let cursor = await drain(website, null, 2, seen);
      expect(seen).toEqual([...ids].reverse());
      const quiet = await list(request(website, { cursor }));
      expect(quiet.body.changes).toEqual([]);
      expect(quiet.body.meta.has_more).toBe(false);
      const later = [change(website), change(website)];
      for (const c of later) await repo.insert(c);
      const again: string[] = [];
      cursor = await drain(website, quiet.body.next_cursor, 10, again);
      expect(again).toEqual(later.map((c) => c.message_id).reverse());
    });

    it('property: any interleaving of writes and page reads is seen exactly once', async () => {
      const action = fc.oneof(
        fc.record({ kind: fc.constant('write' as const), count: fc.integer({ min: 1, max: 6 }), otherSite: fc.boolean() }),
        fc.record({ kind: fc.constant('read' as const), limit: fc.integer({ min: 1, max: 4 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 25 }), async (actions) => {
          const website = site();
          const other = site();
          const written: string[] = [];
          const seen: string[] = [];
          let cursor: string | null = null;
          for (const step of actions) {
            if (step.kind === 'write') {
              for (let i = 0; i < step.count; i += 1) {
                const c = change(step.otherSite ? other : website);
                if (!step.otherSite) written.push(c.message_id);
                await repo.insert(c);
              }
            } else {
              // One page per read action: a run may be interrupted by writes between its pages.
              const query: ChangesQuery = cursor ? { cursor, limit: step.limit } : { since: new Date(Date.now() - 3_600_000).toISOString(), limit: step.limit };
              const { body } = await list(request(website, query));
              seen.push(...body.changes.map((c) => c.id));
              cursor = body.next_cursor;
            }
          }
          await drain(website, cursor, 3, seen);
          expect(seen.length).toBe(new Set(seen).size);
          expect([...seen].sort()).toEqual([...written].sort());
        }),
        { numRuns: 40 },
      );
    }, 120_000);

    it('concurrent writers racing a paging client: every change seen exactly once', async () => {
      const website = site();
      const written: string[] = [];
      let writing = true;
      const writers = (async () => {
        for (let round = 0; round < 15; round += 1) {
          const batch = Array.from({ length: 12 }, () => change(website));
          written.push(...batch.map((c) => c.message_id));
          await Promise.all(batch.map((c) => repo.insert(c)));
        }
        writing = false;
      })();
      const seen: string[] = [];
      let cursor: string | null = null;
      while (writing) {
        cursor = await drain(website, cursor, 7, seen);
        await new Promise((r) => setImmediate(r));
      }
      await writers;
      await drain(website, cursor, 7, seen);
      expect(seen.length).toBe(new Set(seen).size);
      expect([...seen].sort()).toEqual([...written].sort());
    }, 60_000);

    // Needs a second connection reading while a transaction is open, which PGlite cannot offer.
    if (driver.concurrentConnections) {
      it('a change whose insert commits late is picked up by the next run, not skipped', async () => {
        const website = site();
        const early = change(website);
        await repo.insert(early);
        const late = change(website);
        const queuedChange = change(website);
        const seen: string[] = [];
        let cursor: string | null = null;
        let queued: Promise<boolean> | null = null;
        await store.transaction(async (tx) => {
          await new ChangesRepo(tx).insert(late); // holds the next sequence number, uncommitted
          // Another writer queues behind it, and a reader pages meanwhile on another connection.
          queued = repo.insert(queuedChange);
          cursor = await drain(website, cursor, 5, seen);
          expect(seen).toEqual([early.message_id]);
        });
        expect(await queued).toBe(true);
        await drain(website, cursor, 5, seen);
        expect(seen).toEqual([early.message_id, queuedChange.message_id, late.message_id]);
      });
    }

    it('the retention job deletes changes older than retention plus a grace day, in batches', async () => {
      const website = site();
      const keep = change(website);
      const expired = [change(website), change(website), change(website)];
      for (const c of [keep, ...expired]) await repo.insert(c);
      await store.query(`UPDATE changes SET recorded_at = now() - interval '92 days' WHERE message_id = ANY($1::text[])`, [expired.map((c) => c.message_id)]);
      await store.query(`UPDATE changes SET recorded_at = now() - interval '90 days 12 hours' WHERE message_id = $1`, [keep.message_id]);
      expect(await purgeExpiredChanges(repo, new Date(), 2)).toBe(3);
      const { rows } = await store.query<{ message_id: string }>('SELECT message_id FROM changes WHERE website_id = $1', [website.id]);
      expect(rows.map((r) => r.message_id)).toEqual([keep.message_id]);
    });
  });
}
