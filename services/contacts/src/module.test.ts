// The contacts module as the runner starts it (PGlite, in-process bus): the ledger is filled from
// the bus, the RPC methods answer as the gateway would call them, and every write is announced
// through the outbox. A stand-in `changefeed` module records the change messages.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  createBus,
  createLogger,
  defineStandIn,
  loadConfig,
  OUTBOX_MIGRATION_SQL,
  RpcRemoteError,
  startModules,
  type Bus,
  type Envelope,
  type RunningProcess,
} from '@sightline/kit';
import { MESSAGE_EXAMPLES, messageValidator, openApiDocument, type ApiRequest, type ApiResponse, type ConversionCreatedV1 } from '@sightline/proto-schemas';
import { createContactsModule } from './index';

const WEBSITE = { id: randomUUID(), domain: 'shop.test', timezone: 'Europe/Berlin', currency: 'EUR' };
const WORKSPACE = { id: randomUUID(), name: 'Shop', timezone: 'Europe/Berlin', currency: 'EUR', plan: 'pro' as const };
const ALL_SCOPES = ['conversions:read', 'conversions:write', 'pii:read'];
const NO_PII = ['conversions:read', 'conversions:write'];

type Body = Record<string, unknown> & { data: Record<string, unknown>; meta: Record<string, unknown> };
type ListBody = Record<string, unknown> & { data: Record<string, unknown>[]; meta: Record<string, unknown>; next_cursor?: string };

function request(operation: string, init: Partial<ApiRequest> = {}): ApiRequest {
  return {
    operation,
    request_id: 'module-test',
    workspace: WORKSPACE,
    website: WEBSITE,
    key: { id: 'key1', scopes: ALL_SCOPES },
    params: {},
    query: {},
    body: null,
    headers: {},
    ...init,
  };
}

describe('contacts module (embedded runner)', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let caller: Bus;
  const namespace = `contacts${Date.now()}`;
  const changes: Envelope[] = [];
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: JSON.parse(JSON.stringify(openApiDocument.components).replace(/"#\/components/g, '"doc#/components')) });

  const recorder = defineStandIn({
    name: 'changefeed',
    needs: {},
    async create() {
      const record = async (e: Envelope) => void changes.push(e);
      return { consumers: { 'conversion.value_changed': record, 'conversion.updated': record, 'stage.changed': record, 'outcome.writeback_requested': record } };
    },
  });

  const rpc = <B>(method: string, req: ApiRequest) => caller.rpc<ApiResponse<B>>(`contacts.${method}`, req, { timeoutMs: 10_000 });
  const list = (query: Record<string, unknown>, scopes = ALL_SCOPES) => rpc<ListBody>('listContacts', request('listContacts', { query, key: { id: 'key1', scopes } }));
  const get = (id: string, scopes = ALL_SCOPES) => rpc<Body>('getContact', request('getContact', { params: { id }, key: { id: 'key1', scopes } }));
  const patch = (id: string, body: unknown, idempotencyKey?: string, scopes = ALL_SCOPES) =>
    rpc<Body>('patchContact', request('patchContact', { params: { id }, body, key: { id: 'key1', scopes }, headers: idempotencyKey ? { idempotency_key: idempotencyKey } : {} }));
  const problemOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof RpcRemoteError) return error.problem;
      throw error;
    }
    throw new Error('expected a problem');
  };
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const conversion = (overrides: Partial<ConversionCreatedV1> = {}): ConversionCreatedV1 => ({
    ...MESSAGE_EXAMPLES['conversion.created'],
    conversion_id: randomUUID(),
    website_id: WEBSITE.id,
    workspace_id: WORKSPACE.id,
    ...overrides,
  });
  const publishConversions = async (items: ConversionCreatedV1[]) => {
    await caller.publishMany(items.map((payload) => ({ type: 'conversion.created', source: 'ingest', workspace_id: WORKSPACE.id, website_id: WEBSITE.id, payload })));
    await waitFor('the conversions to be filed', async () => {
      for (const item of items) {
        const found = await get(item.conversion_id).catch(() => null);
        if (!found) return undefined;
      }
      return true;
    });
  };
  const conforms = (name: string, value: unknown) => {
    const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
    expect(validate(value) ? null : validate.errors).toBeNull();
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-contacts-module-'));
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: namespace });
    const logger = createLogger({ level: 'silent' });
    proc = await startModules({ config, modules: [createContactsModule(), recorder], logger });
    caller = await createBus({ namespace, journalDir: join(dataDir, 'bus'), validator: messageValidator, logger });
  }, 60_000);

  afterAll(async () => {
    await caller?.close();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the outbox migration verbatim from the kit', () => {
    const file = readFileSync(join(__dirname, '..', 'migrations', 'postgres', '002_outbox.sql'), 'utf8');
    expect(file).toContain(OUTBOX_MIGRATION_SQL.trim());
  });

  it('files conversions once and lists them newest first with conforming rows', async () => {
    const older = conversion({ occurred_at: '2026-03-01T10:00:00.000Z', email: 'Ada.Lovelace@Example.com', phone: '+441234567858', properties: { name: 'Ada Lovelace' } });
    const newer = conversion({ occurred_at: '2026-03-02T10:00:00.000Z', event_name: 'demo_booked', event_type: 'conversion', revenue: null, currency: null });
    await publishConversions([older, newer, older]);
    const { status, body } = await list({ period: '2026-03-01..2026-03-02' });
    expect(status).toBe(200);
    expect(body.data.map((r) => r['id'])).toEqual([newer.conversion_id, older.conversion_id]);
    const row = body.data[1]!;
    expect(row).toMatchObject({ email: 'Ada.Lovelace@Example.com', phone: '+441234567858', name: 'Ada Lovelace', sales_value: 129.5, currency: 'EUR', type: 'purchase', is_spam: false });
    expect(body.meta).toMatchObject({ pii_included: true, total_count: null, has_more: false, row_count: 2, timezone: 'Europe/Berlin' });
    expect(body.meta['pii_note']).toBeUndefined();
    expect((body.meta['window'] as Record<string, unknown>)['expression']).toBe('2026-03-01..2026-03-02');
    conforms('Contact', row);
    conforms('Meta', body.meta);
    const detail = (await get(older.conversion_id)).body;
    conforms('ContactDetail', detail.data);
    expect(detail.data['value_history']).toEqual([
      expect.objectContaining({ field: 'sales_value', old_value: null, new_value: 129.5, source: 'ingest' }),
      expect.objectContaining({ field: 'currency', old_value: null, new_value: 'EUR', source: 'ingest' }),
    ]);
  });

  it('masks email, phone and name without pii:read and refuses the email filter', async () => {
    const person = conversion({ occurred_at: '2026-04-01T10:00:00.000Z', email: 'grace@navy.test', phone: '+15551234567', properties: { first_name: 'Grace', last_name: 'Hopper' } });
    await publishConversions([person]);
    const { body } = await list({ period: '2026-04-01..2026-04-01' }, NO_PII);
    expect(body.data[0]).toMatchObject({ email: 'g***@navy.test', phone: '+15*******67', name: 'G. H.' });
    expect(body.meta['pii_included']).toBe(false);
    expect(String(body.meta['pii_note'])).toMatch(/pii:read/);
    expect((await get(person.conversion_id, NO_PII)).body.data['email']).toBe('g***@navy.test');
    const problem = await problemOf(list({ email: 'grace@navy.test' }, NO_PII));
    expect(problem).toMatchObject({ kind: 'insufficient-scope', status: 403 });
    expect(problem.extra).toEqual({ missing_scope: 'pii:read' });
    expect(problem.detail).toMatch(/pii:read/);
    const found = (await list({ email: 'GRACE@navy.test' })).body;
    expect(found.data.map((r) => r['id'])).toEqual([person.conversion_id]);
  });

  it('pages with a signed cursor without skips or repeats while rows are inserted, and refuses a tampered one', async () => {
    const day = '2026-05-01';
    const base = Date.parse(`${day}T12:00:00.000Z`);
    // Two rows share each timestamp, so the id must break ties.
    const initial = Array.from({ length: 9 }, (_, i) => conversion({ occurred_at: new Date(base - Math.floor(i / 2) * 60_000).toISOString(), event_name: 'paging' }));
    await publishConversions(initial);
    const query = { period: `${day}..${day}`, event_name: 'paging', limit: 4, total_count: true };
    const first = (await list(query)).body;
    expect(first.data).toHaveLength(4);
    expect(first.meta).toMatchObject({ total_count: 9, has_more: true });
    // Newer rows arrive while the client pages; they sort before the cursor and do not shift it.
    await publishConversions([conversion({ occurred_at: new Date(base + 60_000).toISOString(), event_name: 'paging' }), conversion({ occurred_at: new Date(base).toISOString(), event_name: 'paging' })]);
    const seen = first.data.map((r) => String(r['id']));
    let cursor = first.next_cursor;
    while (cursor) {
      const page = (await list({ ...query, cursor })).body;
      seen.push(...page.data.map((r) => String(r['id'])));
      cursor = page.next_cursor;
    }
    const expected = [...initial].sort((a, b) => b.occurred_at.localeCompare(a.occurred_at) || b.conversion_id.localeCompare(a.conversion_id)).map((c) => c.conversion_id);
    const late = seen.filter((id) => !expected.includes(id));
    expect(seen.filter((id) => expected.includes(id))).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    // A row inserted with the same time as rows behind the cursor appears at most once.
    expect(late.length).toBeLessThanOrEqual(1);

    const [bodyPart, signature] = String(first.next_cursor).split('.');
    const forged = `${Buffer.from(JSON.stringify({ s: 'x', p: ['2099-01-01T00:00:00.000000Z', randomUUID()] })).toString('base64url')}.${signature}`;
    for (const bad of [`${bodyPart}.${'A'.repeat(String(signature).length)}`, forged, 'garbage']) {
      const problem = await problemOf(list({ ...query, cursor: bad }));
      expect(problem).toMatchObject({ kind: 'invalid-request', status: 400 });
      expect(problem.remediation).toMatch(/[Rr]estart paging/);
    }
    // A cursor of one query does not page another.
    expect((await problemOf(list({ ...query, event_name: 'other', cursor: first.next_cursor }))).kind).toBe('invalid-request');
  });

  it('answers invalid-window for a period it does not understand', async () => {
    const problem = await problemOf(list({ period: 'the other day' }));
    expect(problem).toMatchObject({ kind: 'invalid-window', status: 400 });
    expect(problem.remediation).toContain('last N days');
  });

  it('writes an outcome once: value history, change messages with api:<key_id>, write-back request', async () => {
    const target = conversion({ occurred_at: '2026-06-01T10:00:00.000Z', email: 'buyer@shop.test' });
    await publishConversions([target]);
    changes.length = 0;
    const body = { sales_value: 12000, status: 'won', lifecycle_stage_raw: 'customer', notes: 'signed', currency: 'USD' };
    const first = await patch(target.conversion_id, body, 'idem-1');
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ sales_value: 12000, status: 'won', currency: 'USD', lifecycle_stage_raw: 'customer', notes: 'signed' });
    conforms('ContactDetail', first.body.data);
    const history = first.body.data['value_history'] as Record<string, unknown>[];
    expect(history.slice(-2)).toEqual([
      expect.objectContaining({ field: 'sales_value', old_value: 129.5, new_value: 12000, source: 'api:key1', reason: 'updated through the API' }),
      expect.objectContaining({ field: 'currency', old_value: 'EUR', new_value: 'USD', source: 'api:key1' }),
    ]);
    await waitFor('four change messages', () => (changes.length >= 4 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    expect(changes.map((e) => e.type).sort()).toEqual(['conversion.updated', 'conversion.value_changed', 'outcome.writeback_requested', 'stage.changed']);
    expect(new Set(changes.map((e) => e.source))).toEqual(new Set(['api:key1']));
    const valueChanged = changes.find((e) => e.type === 'conversion.value_changed')!.payload as Record<string, unknown>;
    expect(valueChanged).toMatchObject({ conversion_id: target.conversion_id, sales_value: 12000, currency: 'USD' });
    const writeback = changes.find((e) => e.type === 'outcome.writeback_requested')!.payload as Record<string, unknown>;
    expect(writeback).toMatchObject({ email: 'buyer@shop.test', requested_by: 'api:key1' });
    expect((writeback['changes'] as unknown[]).length).toBe(5);

    // Replay: the original answer, nothing written, nothing announced.
    changes.length = 0;
    const replay = await patch(target.conversion_id, body, 'idem-1');
    expect(replay.body).toEqual(first.body);
    expect(replay.headers).toEqual({ 'Idempotent-Replayed': 'true' });
    // The same key with another body is refused.
    expect((await problemOf(patch(target.conversion_id, { sales_value: 1 }, 'idem-1'))).kind).toBe('conflict');
    // A request that changes nothing writes nothing (no history row, no message), even with a new key.
    const noop = await patch(target.conversion_id, { sales_value: 12000, status: 'won' }, 'idem-2');
    expect(noop.body.data['value_history']).toEqual(history);
    expect(noop.body.data['updated_at']).toBe(first.body.data['updated_at']);
    await new Promise((r) => setTimeout(r, 300));
    expect(changes).toEqual([]);
    expect((await get(target.conversion_id)).body.data['value_history']).toEqual(history);
  });

  it('keeps idempotency records per API key, so another key never reads an unmasked answer (finding 6)', async () => {
    const target = conversion({ occurred_at: '2026-06-03T10:00:00.000Z' });
    await publishConversions([target]);
    const patchAs = (keyId: string, scopes: string[], body: unknown) =>
      rpc<Body>('patchContact', request('patchContact', { params: { id: target.conversion_id }, body, key: { id: keyId, scopes }, headers: { idempotency_key: 'shared-key' } }));
    const first = await patchAs('key-full', ALL_SCOPES, { notes: 'first' });
    expect(first.body.data['email']).toBe('ada@example.com');
    // Another key of the workspace reusing the Idempotency-Key: its own request, answered masked.
    const other = await patchAs('key-narrow', NO_PII, { notes: 'first' });
    expect(other.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(other.body.data['email']).toBe('a***@example.com');
    expect(JSON.stringify(other.body)).not.toContain('ada@example.com');
    // ... and another body under the same Idempotency-Key is no conflict for it.
    const different = await patchAs('key-narrow-2', NO_PII, { notes: 'second' });
    expect(different.body.data['notes']).toBe('second');
    // The key that made the record replays it.
    const replay = await patchAs('key-full', ALL_SCOPES, { notes: 'first' });
    expect(replay.headers).toEqual({ 'Idempotent-Replayed': 'true' });
    expect(replay.body).toEqual(first.body);
  });

  it('refuses a computed field, a bad currency and an unknown contact', async () => {
    const target = conversion({ occurred_at: '2026-06-02T10:00:00.000Z' });
    await publishConversions([target]);
    const computed = await problemOf(patch(target.conversion_id, { first_touch: null, status: 'x' }));
    expect(computed.kind).toBe('invalid-request');
    expect(computed.allowed).toEqual(['status', 'sales_value', 'quote_value', 'currency', 'notes', 'lead_status_raw', 'lifecycle_stage_raw', 'is_spam']);
    expect((await problemOf(patch(target.conversion_id, { currency: 'ABC' }))).kind).toBe('invalid-request');
    expect((await problemOf(patch(randomUUID(), { status: 'x' }))).kind).toBe('not-found');
    expect((await problemOf(get(randomUUID()))).kind).toBe('not-found');
    expect((await get(target.conversion_id)).body.data['status']).toBeNull();
  });

  it('hides spam unless asked, fills attribution from conversion.attributed and re-keys merged identities', async () => {
    const target = conversion({ occurred_at: '2026-07-01T10:00:00.000Z', identity_id: randomUUID(), event_name: 'spam-check' });
    await publishConversions([target]);
    await patch(target.conversion_id, { is_spam: true });
    expect((await list({ event_name: 'spam-check' })).body.data).toEqual([]);
    expect((await list({ event_name: 'spam-check', include_spam: true })).body.data).toHaveLength(1);

    const touch = { occurred_at: '2026-06-30T09:00:00.000Z', channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'summer' };
    const into = randomUUID();
    const scope = { source: 'attribution', workspace_id: WORKSPACE.id, website_id: WEBSITE.id };
    await caller.publishMany([
      { ...scope, type: 'conversion.attributed', payload: { conversion_id: target.conversion_id, website_id: WEBSITE.id, workspace_id: WORKSPACE.id, first_touch: touch, last_touch: null, touch_count: 1 } },
      { ...scope, source: 'ingest', type: 'identity.merged', payload: { workspace_id: WORKSPACE.id, from_identity_id: target.identity_id!, into_identity_id: into } },
    ]);
    const row = await waitFor('attribution and merge', async () => {
      const data = (await get(target.conversion_id)).body.data;
      return data['first_touch'] && data['identity_id'] === into ? data : undefined;
    });
    expect(row['first_touch']).toEqual(touch);
    expect(row['last_touch']).toBeNull();
    // A later conversion of the merged-away identity is filed under the survivor.
    const late = conversion({ occurred_at: '2026-07-02T10:00:00.000Z', identity_id: target.identity_id });
    await publishConversions([late]);
    expect((await get(late.conversion_id)).body.data['identity_id']).toBe(into);
  });
});
