-- The CRM mirror: connections, and the records synced or imported through them. One row per record
-- and website; ids are derived from (website, provider, crm id), so a re-sync or re-import updates
-- in place and the same deal keeps the same id in every message.

CREATE TABLE IF NOT EXISTS connections (
  id               uuid PRIMARY KEY,
  workspace_id     uuid NOT NULL,
  website_id       uuid NOT NULL,
  provider         text NOT NULL,
  -- AES-256-GCM sealed JSON (credentials.ts); never logged, never returned.
  credentials      bytea NOT NULL,
  status           text NOT NULL DEFAULT 'active',
  -- Where an interrupted sync resumes (the connector's page cursor), and where the next incremental one starts.
  resume_cursor    text,
  synced_through   timestamptz,
  sync_started_at  timestamptz,
  last_success_at  timestamptz,
  last_error       text,
  last_error_at    timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (website_id, provider)
);

CREATE TABLE IF NOT EXISTS pipelines (
  website_id   uuid NOT NULL,
  provider     text NOT NULL,
  id           text NOT NULL,
  name         text NOT NULL,
  -- [{id, name, position, normalized_bucket}] in pipeline order
  stages       jsonb NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, provider, id)
);

CREATE TABLE IF NOT EXISTS companies (
  id               uuid PRIMARY KEY,
  workspace_id     uuid NOT NULL,
  website_id       uuid NOT NULL,
  provider         text NOT NULL,
  crm_id           text NOT NULL,
  name             text NOT NULL,
  domain           text,
  lifecycle_stage  text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  UNIQUE (website_id, provider, crm_id)
);
CREATE INDEX IF NOT EXISTS companies_recent ON companies (website_id, updated_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS crm_contacts (
  website_id       uuid NOT NULL,
  provider         text NOT NULL,
  crm_id           text NOT NULL,
  email            text,
  lifecycle_stage  text,
  company_crm_id   text,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (website_id, provider, crm_id)
);
CREATE INDEX IF NOT EXISTS crm_contacts_email ON crm_contacts (website_id, lower(email));
CREATE INDEX IF NOT EXISTS crm_contacts_company ON crm_contacts (website_id, provider, company_crm_id);

CREATE TABLE IF NOT EXISTS deals (
  id               uuid PRIMARY KEY,
  workspace_id     uuid NOT NULL,
  website_id       uuid NOT NULL,
  provider         text NOT NULL,
  crm_id           text NOT NULL,
  name             text NOT NULL,
  amount           double precision,
  currency         text,
  pipeline_id      text,
  stage_id         text,
  stage_name       text,
  bucket           text NOT NULL,
  company_crm_id   text,
  contact_crm_ids  text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL,
  closed_at        timestamptz,
  updated_at       timestamptz NOT NULL,
  UNIQUE (website_id, provider, crm_id)
);
CREATE INDEX IF NOT EXISTS deals_recent ON deals (website_id, updated_at DESC, id DESC);
