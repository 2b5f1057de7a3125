import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, runSqlMigrations, type SqlStore } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type ClassifiedEventV1 } from '@sightline/proto-schemas';
import { IdentityGraph } from './identity-graph';
import { sha256Hex } from './identity-keys';

const base = MESSAGE_EXAMPLES['events.classified'].events[0] as ClassifiedEventV1;
const WS = '2f1d6c1e-8a55-4a53-9a3b-0b7f8e2f4d11';
const event = (keys: { anon?: string; email?: string }): ClassifiedEventV1 => ({
  ...base,
  anonymous_id: keys.anon ?? null,
  email: keys.email ?? null,
  email_hash: keys.email ? sha256Hex(keys.email) : null,
  identity_id: null,
});

describe('identity graph (PGlite)', () => {
  let dir: string;
  let db: SqlStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-identity-'));
    const provider = createStoreProvider({ dataDir: dir, logger: createLogger({ level: 'silent' }) });
    db = await provider.sql('ingest');
    await runSqlMigrations(db, join(__dirname, '..', 'migrations', 'postgres'));
    close = () => provider.close();
  }, 60_000);
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives events with the same anonymous id one identity, and a new one to a stranger', async () => {
    const graph = new IdentityGraph(db);
    const events = [event({ anon: 'a1' }), event({ anon: 'a1' }), event({ anon: 'a2' })];
    await graph.resolve(WS, events);
    expect(events[0]?.identity_id).toBeTruthy();
    expect(events[1]?.identity_id).toBe(events[0]?.identity_id);
    expect(events[2]?.identity_id).not.toBe(events[0]?.identity_id);
  });

  it('stitches an email to the device that browsed, and merges two devices sharing it', async () => {
    const graph = new IdentityGraph(db);
    const laptop = [event({ anon: 'laptop' })];
    const phone = [event({ anon: 'phone' })];
    await graph.resolve(WS, laptop);
    await graph.resolve(WS, phone);
    expect(phone[0]?.identity_id).not.toBe(laptop[0]?.identity_id);
    const identifyOnLaptop = [event({ anon: 'laptop', email: 'ada@example.com' })];
    await graph.resolve(WS, identifyOnLaptop);
    expect(identifyOnLaptop[0]?.identity_id).toBe(laptop[0]?.identity_id);
    const identifyOnPhone = [event({ anon: 'phone', email: 'ada@example.com' })];
    const merges = await graph.resolve(WS, identifyOnPhone);
    expect(merges).toHaveLength(1);
    const person = identifyOnPhone[0]?.identity_id;
    // The laptop identity came first, so it survives the merge whatever the ids' order.
    expect(person).toBe(laptop[0]?.identity_id);
    expect(merges[0]).toEqual({ from: phone[0]?.identity_id, into: laptop[0]?.identity_id });
    // A fresh graph (another replica) sees the merge from the database.
    const later = [event({ anon: 'phone' }), event({ anon: 'laptop' }), event({ email: 'ADA@example.com'.toLowerCase() })];
    await new IdentityGraph(db).resolve(WS, later);
    expect(new Set(later.map((e) => e.identity_id))).toEqual(new Set([person]));
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM identity_merges');
    expect(rows[0]?.n).toBe(1);
  });

  it('leaves an event with no identity key without an identity', async () => {
    const events = [event({})];
    await new IdentityGraph(db).resolve(WS, events);
    expect(events[0]?.identity_id).toBeNull();
  });
});
