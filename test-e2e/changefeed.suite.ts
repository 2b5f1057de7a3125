// GET /v1/changes through the real gateway, with conversions written by POST /v1/events through
// ingest: written once, run on the embedded profile and on RabbitMQ + PostgreSQL + Redis. Every call
// goes through the typed client generated from the OpenAPI document (@sightline/client).
import { createSightlineClient, pages, type Schemas, type SightlineClient } from '@sightline/client';
import type { RunningProcess } from '@sightline/kit';
import { createChangefeedModule } from '@sightline/service-changefeed';
import { adminOf } from './admin-client';
import { startStack, type Stack } from './stack';

export interface DriverProfile {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

type Change = Schemas['Change'];
type ChangesQuery = { since?: string; cursor?: string; limit?: number };

const DAY_MS = 86_400_000;

export function describeChangefeed(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`change feed (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let writer: { key: string; key_id: string; client: SightlineClient };
    let otherSite: { key: string; key_id: string; client: SightlineClient };
    let websiteId: string;
    let workspaceId: string;
    let clockOffsetMs = 0;
    let named = 0;

    const getChanges = async (query: ChangesQuery, client = writer.client) => {
      const { data, error, response } = await client.GET('/v1/changes', { params: { query } });
      // A refusal is a problem document (Record-typed for the assertions on `type` and `remediation`).
      const body = { changes: [] as Change[], next_cursor: '', meta: { has_more: false }, ...(data ?? {}), ...((error ?? {}) as Record<string, unknown>) };
      return { status: response.status, body: body as typeof body & Record<string, unknown> & { changes: Change[] } };
    };
    const postConversions = async (names: string[], client = writer.client) => {
      const { data, response } = await client.POST('/v1/events', {
        body: { events: names.map((name) => ({ event_type: 'conversion', event_name: name, email: `${name}@example.com`, revenue: 10, currency: 'EUR' })) },
      });
      expect(response.status).toBe(200);
      expect(data?.accepted).toBe(names.length);
    };
    const uniqueNames = (count: number) => Array.from({ length: count }, () => `cf_${profileName.length}_${++named}`);
    /** Pages like a client: while has_more, keeping the cursor only after the page is applied. */
    const poll = async (cursor: string | null, limit: number, seen: Change[]): Promise<string> => {
      let current = cursor ?? '';
      const query = { limit, ...(cursor ? { cursor } : { since: new Date(Date.now() - 3_600_000).toISOString() }) };
      // The client's pager stops when meta.has_more is false; the last page still carries the cursor to resume from.
      for await (const page of pages(writer.client, '/v1/changes', { params: { query } })) {
        seen.push(...page.changes);
        current = page.next_cursor;
      }
      return current;
    };
    const eventNames = (changes: Change[]) => changes.map((c) => String(c.data['event_name']));

    beforeAll(async () => {
      profile = await makeProfile();
      // The change feed runs with a movable clock (retention), beside the registry's gateway and ingest.
      stack = await startStack({
        targets: ['gateway', 'ingest'],
        standIns: [createChangefeedModule({ now: () => new Date(Date.now() + clockOffsetMs) })],
        env: profile.env,
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'Changes', plan: 'internal', currency: 'EUR' });
      workspaceId = String(ws['id']);
      websiteId = String((await admin(`/workspaces/${workspaceId}/websites`, { domain: 'feed.test' }))['id']);
      const created = await admin('/keys', { workspace_id: workspaceId });
      const clientOf = (key: string) => createSightlineClient({ baseUrl: base, apiKey: key, retry: { maxAttempts: 1 } });
      writer = { key: String(created['key']), key_id: String(created['key_id']), client: clientOf(String(created['key'])) };
      const ws2 = await admin('/workspaces', { name: 'Other', plan: 'internal', currency: 'EUR' });
      await admin(`/workspaces/${ws2['id']}/websites`, { domain: 'other.test' });
      const created2 = await admin('/keys', { workspace_id: ws2['id'] });
      otherSite = { key: String(created2['key']), key_id: String(created2['key_id']), client: clientOf(String(created2['key'])) };
    }, 120_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    afterEach(() => {
      clockOffsetMs = 0;
    });

    it('a conversion posted with a key is in the feed within one second, as conversion.created from api:<key_id>', async () => {
      const [name] = uniqueNames(1) as [string];
      await postConversions([name]);
      const written = Date.now();
      let found: Change | undefined;
      while (!found && Date.now() - written < 1000) {
        found = (await getChanges({})).body.changes.find((c) => c.data['event_name'] === name);
        if (!found) await new Promise((r) => setTimeout(r, 20));
      }
      expect(found).toMatchObject({ type: 'conversion.created', source: `api:${writer.key_id}`, object_type: 'contact' });
      expect(JSON.stringify(found)).not.toContain('@example.com');
    });

    it('a client that skips api: sources sees none of its own writes, and does see others\'', async () => {
      const own = uniqueNames(3);
      await postConversions(own);
      // A change made elsewhere (here: as CRM sync would publish it) on the same website.
      const crmName = uniqueNames(1)[0] as string;
      const conversionId = '7d0f5f0e-2a4c-4d1e-9b7e-3f1f2b6c9a01';
      await proc.bus.publish({
        type: 'conversion.created',
        source: 'crm:hubspot',
        workspace_id: workspaceId,
        website_id: websiteId,
        payload: { conversion_id: conversionId, website_id: websiteId, workspace_id: workspaceId, identity_id: null, anonymous_id: null, email: null, phone: null, event_type: 'conversion', event_name: crmName, occurred_at: new Date().toISOString(), revenue: null, currency: null, properties: {} },
      });
      let all: Change[] = [];
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        all = [];
        await poll(null, 100, all);
        if ([...own, crmName].every((n) => eventNames(all).includes(n))) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const kept = all.filter((c) => !c.source.startsWith('api:'));
      expect(eventNames(kept)).toContain(crmName);
      expect(kept.filter((c) => own.includes(String(c.data['event_name'])))).toEqual([]);
      expect(all.filter((c) => own.includes(String(c.data['event_name']))).every((c) => c.source === `api:${writer.key_id}`)).toBe(true);
      // Another website's feed holds none of these.
      const other = await getChanges({}, otherSite.client);
      expect(other.status).toBe(200);
      expect(other.body.changes).toEqual([]);
    });

    it('paging with the cursor while new conversions arrive neither misses nor repeats a change', async () => {
      const seen: Change[] = [];
      // First run: everything of the last hour, in pages of 2, with writes landing between pages.
      let cursor: string | null = null;
      const written: string[] = [];
      for (let round = 0; round < 6; round += 1) {
        const batch = uniqueNames(3);
        written.push(...batch);
        await postConversions(batch);
        const { body } = await getChanges(cursor ? { cursor, limit: 2 } : { since: new Date(Date.now() - 3_600_000).toISOString(), limit: 2 });
        seen.push(...body.changes);
        cursor = body.next_cursor;
      }
      // Keep polling until every write has been delivered to the feed and read.
      const deadline = Date.now() + 15_000;
      while (!written.every((n) => eventNames(seen).includes(n)) && Date.now() < deadline) {
        cursor = await poll(cursor, 2, seen);
        await new Promise((r) => setTimeout(r, 50));
      }
      const ids = seen.map((c) => c.id);
      expect(ids.length).toBe(new Set(ids).size);
      expect(eventNames(seen).filter((n) => written.includes(n)).sort()).toEqual([...written].sort());
    });

    it('a tampered cursor is 400 invalid-request; since or a cursor past retention is 400 with a full-read remediation', async () => {
      const { body } = await getChanges({ limit: 1 });
      const tampered = `${body.next_cursor.slice(0, -2)}${body.next_cursor.endsWith('AA') ? 'BB' : 'AA'}`;
      const bad = await getChanges({ cursor: tampered });
      expect(bad.status).toBe(400);
      expect(String(bad.body['type'])).toMatch(/\/invalid-request$/);

      const old = await getChanges({ since: new Date(Date.now() - 91 * DAY_MS).toISOString() });
      expect(old.status).toBe(400);
      expect(String(old.body['type'])).toMatch(/\/window-too-large$/);
      expect(String(old.body['remediation'])).toMatch(/full read/i);

      clockOffsetMs = 91 * DAY_MS; // the client comes back after 91 days with its stored cursor
      const stale = await getChanges({ cursor: body.next_cursor });
      expect(stale.status).toBe(400);
      expect(String(stale.body['type'])).toMatch(/\/window-too-large$/);
      expect(String(stale.body['remediation'])).toMatch(/full read/i);
    });
  });
}
