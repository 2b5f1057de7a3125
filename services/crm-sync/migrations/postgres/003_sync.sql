-- Sync bookkeeping on connections. A sync holds a lease on its connection (owner + expiry, renewed
-- with every committed page), so one sync per connection runs at a time across replicas and a
-- crashed holder's lease simply runs out. sync_records counts what the current (possibly resumed)
-- sync applied; last_sync_records keeps the count of the last completed one.
ALTER TABLE connections ADD COLUMN IF NOT EXISTS sync_owner uuid;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS sync_lease_until timestamptz;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS sync_records integer NOT NULL DEFAULT 0;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS last_sync_records integer;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS updated_at timestamptz NOT NULL DEFAULT now();
