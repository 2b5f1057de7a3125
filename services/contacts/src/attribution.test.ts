// Attribution's first and last touch on a contact (conversion.attributed): a recomputation with more
// touches replaces the stored ones, an older message delivered late does not, and a redelivery
// changes nothing. Against the real schema on PGlite.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createStoreProvider, runSqlMigrations, type SqlStore } from '@sightline/kit';
import { MESSAGE_EXAMPLES, type AttributedTouchV1 } from '@sightline/proto-schemas';
import { ContactsRepo } from './contacts.repo';

const touch = (channel: string, at: string): AttributedTouchV1 => ({ occurred_at: at, channel, source: null, medium: null, campaign: null });

describe('contacts: attribution touches', () => {
  let dir: string;
  let close: () => Promise<void>;
  let sql: SqlStore;
  let repo: ContactsRepo;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-contacts-attribution-'));
    const provider = createStoreProvider({ dataDir: dir, logger: createLogger({ level: 'silent' }) });
    close = () => provider.close();
    sql = await provider.sql('contacts');
    await runSqlMigrations(sql, join(__dirname, '..', 'migrations', 'postgres'));
    repo = new ContactsRepo(sql);
  }, 120_000);
  afterAll(async () => {
    await close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the computation with the most touches, whatever the delivery order', async () => {
    const conversion = { ...MESSAGE_EXAMPLES['conversion.created'], conversion_id: randomUUID() };
    await repo.insertConversion(conversion, 'ingest');
    const stored = async () => {
      const row = await repo.get(conversion.website_id, conversion.conversion_id);
      return [row?.first_touch ?? null, row?.last_touch ?? null];
    };
    const first = touch('Paid Search', '2026-03-01T10:00:00.000Z');
    const later = touch('Email', '2026-03-04T10:00:00.000Z');

    await repo.upsertAttribution(conversion.conversion_id, first, later, 2);
    expect(await stored()).toEqual([first, later]);
    // An older computation (one touch) delivered late changes nothing.
    await repo.upsertAttribution(conversion.conversion_id, first, first, 1);
    expect(await stored()).toEqual([first, later]);
    // The same computation again (a redelivery) leaves it as it is; one more touch replaces it.
    await repo.upsertAttribution(conversion.conversion_id, first, later, 2);
    expect(await stored()).toEqual([first, later]);
    const backfilled = touch('Referral', '2026-02-20T10:00:00.000Z');
    await repo.upsertAttribution(conversion.conversion_id, backfilled, later, 3);
    expect(await stored()).toEqual([backfilled, later]);
  });

  it('keeps touches that arrive before their conversion', async () => {
    const id = randomUUID();
    const only = touch('Direct', '2026-03-01T10:00:00.000Z');
    await repo.upsertAttribution(id, only, only, 1);
    const conversion = { ...MESSAGE_EXAMPLES['conversion.created'], conversion_id: id };
    await repo.insertConversion(conversion, 'ingest');
    expect((await repo.get(conversion.website_id, id))?.first_touch).toEqual(only);
  });
});
