// crm-sync's outbox table is kit's, copied into its own migrations (each service owns its schema):
// the copy must not drift from what the outbox relay expects.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTBOX_MIGRATION_SQL } from '@sightline/kit';

it('migrations/postgres/002_outbox.sql holds kit\'s outbox table verbatim', () => {
  const file = readFileSync(join(__dirname, '..', 'migrations', 'postgres', '002_outbox.sql'), 'utf8');
  expect(file).toContain(OUTBOX_MIGRATION_SQL.trim());
});
