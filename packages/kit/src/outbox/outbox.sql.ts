// The outbox table. A service that uses the outbox puts this text in one of its own Postgres
// migration files (kept verbatim; a test in the service may compare them), so the table
// lives in the service's schema beside the business tables it is written with.
export const OUTBOX_MIGRATION_SQL = `CREATE TABLE IF NOT EXISTS outbox (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id    uuid NOT NULL UNIQUE,
  type          text NOT NULL,
  payload       jsonb NOT NULL,
  source        text NOT NULL,
  workspace_id  text,
  website_id    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  published_at  timestamptz
);
CREATE INDEX IF NOT EXISTS outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
`;
