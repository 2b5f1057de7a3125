-- The conversion ledger: one row per conversion (the contact id is the conversion id). Email,
-- phone and name are personal data and live only here. Outcome fields are written through the API
-- (and later by CRM sync); attribution fields arrive from the attribution service.
CREATE TABLE contacts (
  id                   uuid PRIMARY KEY,
  workspace_id         text NOT NULL,
  website_id           text NOT NULL,
  identity_id          text,
  anonymous_id         text,
  email                text,
  phone                text,
  name                 text,
  event_type           text NOT NULL,
  event_name           text,
  occurred_at          timestamptz NOT NULL,
  click_ids            jsonb NOT NULL DEFAULT '{}',
  status               text,
  sales_value          numeric,
  quote_value          numeric,
  currency             text,
  notes                text,
  lead_status_raw      text,
  lifecycle_stage_raw  text,
  is_spam              boolean NOT NULL DEFAULT false,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
-- Keyset paging: newest first, id breaks ties.
CREATE INDEX contacts_by_time ON contacts (website_id, occurred_at DESC, id DESC);
CREATE INDEX contacts_by_email ON contacts (website_id, lower(email));
CREATE INDEX contacts_by_identity ON contacts (workspace_id, identity_id);

-- First and last touch as attribution computed them. Kept apart from the ledger row so an
-- attribution that arrives before its conversion is not lost.
CREATE TABLE contact_attribution (
  conversion_id  uuid PRIMARY KEY,
  first_touch    jsonb,
  last_touch     jsonb,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Every change of an outcome value, oldest first, with its reason and the system that made it.
CREATE TABLE value_history (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  contact_id  uuid NOT NULL REFERENCES contacts (id),
  field       text NOT NULL CHECK (field IN ('sales_value', 'quote_value', 'currency')),
  old_value   jsonb,
  new_value   jsonb,
  reason      text NOT NULL,
  source      text NOT NULL,
  changed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX value_history_by_contact ON value_history (contact_id, id);

-- Identity merges seen so far, so a conversion that arrives after its identity was merged is
-- filed under the surviving identity.
CREATE TABLE identity_merges (
  workspace_id      text NOT NULL,
  from_identity_id  text NOT NULL,
  into_identity_id  text NOT NULL,
  PRIMARY KEY (workspace_id, from_identity_id)
);

-- PATCH idempotency: the first result per key, written in the same transaction as the change,
-- so a replay after a crash still finds it. Kept 24 hours.
CREATE TABLE idempotency_keys (
  workspace_id  text NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status        integer NOT NULL,
  response      jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, key)
);
