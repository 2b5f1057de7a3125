-- The follow-up of Google Data Manager uploads (writeback/google-request-status.ts): events:ingest
-- answers a requestId (the row's external_id) and Google reports later, through
-- requestStatus:retrieve, whether it took the events. A done google_ads row is checked until the
-- final status of its current request is recorded (remote_request_id = external_id).
ALTER TABLE writebacks ADD COLUMN IF NOT EXISTS remote_status text;
ALTER TABLE writebacks ADD COLUMN IF NOT EXISTS remote_request_id text;
ALTER TABLE writebacks ADD COLUMN IF NOT EXISTS remote_check_at timestamptz;
CREATE INDEX IF NOT EXISTS writebacks_remote_check ON writebacks (remote_check_at NULLS FIRST, updated_at)
  WHERE target = 'google_ads' AND status = 'done' AND external_id IS NOT NULL;
