// Contacts through the public paths: conversions sent with POST /v1/events reach the ledger via
// ingest, and are read and written with GET/PATCH /v1/contacts (and /v1/conversions) through the
// gateway. Written once, run on both driver profiles. A stand-in `changefeed` records the changes.
import { defineStandIn, type Envelope, type RunningProcess } from '@sightline/kit';
import type { DriverProfile } from './ingest.suite';
import { adminOf } from './admin-client';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json & { data: Json & Json[]; meta: Json; next_cursor?: string };
  headers: Headers;
}

export function describeContacts(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`contacts (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let fullKey: string;
    let fullKeyId: string;
    let maskedKey: string;
    const changes: Envelope[] = [];

    const recorder = defineStandIn({
      name: 'changefeed',
      needs: {},
      async create() {
        const record = async (e: Envelope) => void changes.push(e);
        return { consumers: { 'conversion.value_changed': record, 'conversion.updated': record, 'stage.changed': record, 'outcome.writeback_requested': record } };
      },
    });

    const call = async (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Reply['body'], headers: r.headers };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const sendConversions = async (events: Json[]) => {
      const r = await call('POST', '/v1/events', fullKey, { events: events.map((e) => ({ event_type: 'purchase', revenue: 10, currency: 'EUR', ...e })) });
      expect(r.body['accepted']).toBe(events.length);
    };
    const listed = async (query: string, expected: number) =>
      waitFor(`${expected} contacts for ${query}`, async () => {
        const r = await call('GET', `/v1/contacts?${query}&limit=200`, fullKey);
        return r.body.data.length >= expected ? r : undefined;
      });

    beforeAll(async () => {
      profile = await makeProfile();
      stack = await startStack({ targets: ['gateway', 'ingest', 'contacts'], standIns: [recorder], env: profile.env });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'Contacts', plan: 'internal', timezone: 'Europe/Berlin', currency: 'EUR' });
      await admin(`/workspaces/${ws['id']}/websites`, { domain: 'contacts.test' });
      const full = await admin('/keys', { workspace_id: ws['id'] });
      fullKey = String(full['key']);
      fullKeyId = String(full['key_id']);
      maskedKey = String((await admin('/keys', { workspace_id: ws['id'], scopes: ['conversions:read', 'conversions:write', 'events:write'] }))['key']);
    }, 120_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('lists conversions sent as events; /conversions answers the identical body', async () => {
      await sendConversions([{ event_name: 'order', email: 'Ada@Example.com', phone: '+441234567858', occurred_at: '2026-01-10T10:00:00Z', properties: { name: 'Ada Lovelace' } }]);
      const r = await listed('period=2026-01-10..2026-01-10', 1);
      expect(r.status).toBe(200);
      expect(String(r.body.data[0]?.['email']).toLowerCase()).toBe('ada@example.com');
      expect(r.body.data[0]).toMatchObject({ type: 'purchase', event_name: 'order', sales_value: 10, currency: 'EUR' });
      expect(r.body.data[0]?.['identity_id']).toEqual(expect.any(String));
      const legacy = await call('GET', '/v1/conversions?period=2026-01-10..2026-01-10&limit=200', fullKey);
      expect(legacy.status).toBe(200);
      expect(legacy.body).toEqual(r.body);
    });

    it('masks personal fields without pii:read and refuses the email filter naming the scope', async () => {
      await sendConversions([{ event_name: 'masked', email: 'grace@navy.test', phone: '+442079460958', occurred_at: '2026-01-11T10:00:00Z', properties: { name: 'Grace Hopper' } }]);
      await listed('period=2026-01-11..2026-01-11', 1);
      const masked = await call('GET', '/v1/contacts?period=2026-01-11..2026-01-11', maskedKey);
      expect(masked.status).toBe(200);
      expect(masked.body.data[0]).toMatchObject({ email: 'g***@navy.test', phone: '+44********58', name: 'G. H.' });
      expect(masked.body.meta).toMatchObject({ pii_included: false });
      expect(String(masked.body.meta['pii_note'])).toMatch(/pii:read/);
      const refused = await call('GET', '/v1/contacts?email=grace@navy.test', maskedKey);
      expect(refused.status).toBe(403);
      expect(String(refused.body['type'])).toMatch(/\/insufficient-scope$/);
      expect(refused.body['missing_scope']).toBe('pii:read');
      const allowed = await call('GET', '/v1/contacts?email=GRACE@navy.test', fullKey);
      expect(allowed.body.data).toHaveLength(1);
    });

    it('pages with a cursor while conversions keep arriving: no row skipped or repeated; a tampered cursor is 400', async () => {
      const day = '2026-01-12';
      await sendConversions(Array.from({ length: 12 }, (_, i) => ({ event_name: 'paging', anonymous_id: `p${i}`, occurred_at: `${day}T10:${String(i).padStart(2, '0')}:00Z` })));
      await listed(`period=${day}..${day}`, 12);
      const query = `period=${day}..${day}&event_name=paging&limit=5&total_count=true`;
      const first = await call('GET', `/v1/contacts?${query}`, fullKey);
      expect(first.body.meta).toMatchObject({ total_count: 12, has_more: true, row_count: 5 });
      const before = first.body.data.map((r) => String(r['id']));
      // Concurrent inserts: newer conversions (sorting before the cursor) arrive between pages.
      const inserting = sendConversions(Array.from({ length: 6 }, (_, i) => ({ event_name: 'paging', anonymous_id: `q${i}`, occurred_at: `${day}T11:0${i}:00Z` })));
      const seen = [...before];
      let cursor = first.body.next_cursor;
      while (cursor) {
        const page = await call('GET', `/v1/contacts?${query}&cursor=${encodeURIComponent(cursor)}`, fullKey);
        expect(page.status).toBe(200);
        seen.push(...page.body.data.map((r) => String(r['id'])));
        cursor = page.body.next_cursor;
      }
      await inserting;
      expect(seen).toHaveLength(12);
      expect(new Set(seen).size).toBe(12);
      const oldest = await call('GET', `/v1/contacts?period=${day}..${day}&event_name=paging&limit=200`, fullKey);
      const original = oldest.body.data.map((r) => String(r['id'])).filter((id) => seen.includes(id));
      expect(seen).toEqual(original);

      const tampered = String(first.body.next_cursor).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      const bad = await call('GET', `/v1/contacts?${query}&cursor=${encodeURIComponent(tampered)}`, fullKey);
      expect(bad.status).toBe(400);
      expect(String(bad.body['type'])).toMatch(/\/invalid-request$/);
      expect(String(bad.body['remediation'])).toMatch(/[Rr]estart paging/);
      // limit above the maximum is clamped, not refused.
      expect((await call('GET', `/v1/contacts?${query.replace('limit=5', 'limit=5000')}`, fullKey)).status).toBe(200);
    });

    it('PATCH: writes once with api:<key_id>, replays without writing, refuses computed fields, no-op writes nothing', async () => {
      await sendConversions([{ event_name: 'patched', email: 'buyer@contacts.test', occurred_at: '2026-01-13T10:00:00Z' }]);
      const id = String((await listed('period=2026-01-13..2026-01-13', 1)).body.data[0]?.['id']);
      changes.length = 0;
      const body = { sales_value: 12000, status: 'won', lifecycle_stage_raw: 'customer' };
      const first = await call('PATCH', `/v1/contacts/${id}`, fullKey, body, { 'idempotency-key': 'patch-1' });
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({ sales_value: 12000, status: 'won' });
      await waitFor('the change messages', () => (changes.length >= 3 ? true : undefined));
      await new Promise((r) => setTimeout(r, 300));
      expect(changes.map((e) => e.type).sort()).toEqual(['conversion.value_changed', 'outcome.writeback_requested', 'stage.changed']);
      expect(changes.every((e) => e.source === `api:${fullKeyId}`)).toBe(true);

      changes.length = 0;
      const replay = await call('PATCH', `/v1/contacts/${id}`, fullKey, body, { 'idempotency-key': 'patch-1' });
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(first.body);
      const conflict = await call('PATCH', `/v1/contacts/${id}`, fullKey, { sales_value: 1 }, { 'idempotency-key': 'patch-1' });
      expect(conflict.status).toBe(409);
      const noop = await call('PATCH', `/conversions/${id}`, fullKey, { sales_value: 12000 });
      expect(noop.status).toBe(200);
      expect(noop.body.data['value_history']).toEqual(first.body.data['value_history']);
      const computed = await call('PATCH', `/v1/contacts/${id}`, fullKey, { first_touch: null });
      expect(computed.status).toBe(400);
      expect(computed.body['allowed']).toEqual(['status', 'sales_value', 'quote_value', 'currency', 'notes', 'lead_status_raw', 'lifecycle_stage_raw', 'is_spam']);
      await new Promise((r) => setTimeout(r, 300));
      expect(changes).toEqual([]);

      const detail = await call('GET', `/v1/contacts/${id}`, fullKey);
      const history = detail.body.data['value_history'] as Json[];
      // The opening value was recorded with the conversion (sent with the same key), then the PATCH.
      expect(history).toEqual([
        expect.objectContaining({ field: 'sales_value', old_value: null, new_value: 10, reason: 'recorded with the conversion', source: `api:${fullKeyId}` }),
        expect.objectContaining({ field: 'currency', old_value: null, new_value: 'EUR', reason: 'recorded with the conversion' }),
        expect.objectContaining({ field: 'sales_value', old_value: 10, new_value: 12000, reason: 'updated through the API', source: `api:${fullKeyId}` }),
      ]);
      expect(detail.body.data['deals']).toEqual([]);
      expect((await call('GET', '/v1/contacts/00000000-0000-4000-8000-000000000000', fullKey)).status).toBe(404);
    });
  });
}
