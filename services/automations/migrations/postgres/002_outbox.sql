-- The transactional outbox, verbatim from @sightline/kit OUTBOX_MIGRATION_SQL (a test compares).
CREATE TABLE IF NOT EXISTS outbox (
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
