-- Where each write-back of a contact's outcome stands, per destination (crm, google_ads, meta_ads),
-- as crm-sync announces it (outcome.writeback_updated). One row per contact and destination: the
-- latest request wins, and within a request the latest status (so a late redelivery changes nothing).
CREATE TABLE IF NOT EXISTS contact_writebacks (
  contact_id       uuid NOT NULL,
  target           text NOT NULL,
  request_id       uuid NOT NULL,
  status           text NOT NULL,
  attempts         integer NOT NULL,
  detail           text,
  external_id      text,
  next_attempt_at  timestamptz,
  requested_at     timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (contact_id, target)
);
