-- What a second and third CRM need of a connection (Salesforce, Pipedrive): operator settings that
-- are not secret (field and stage mapping, the share of the org's API allocation a sync may use),
-- a pause the provider asked for (an allocation used up: the sync stops with its cursor and the
-- scheduled runs leave it alone until paused_until), and the API usage the provider last reported.
ALTER TABLE connections ADD COLUMN IF NOT EXISTS settings jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS paused_until timestamptz;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS pause_reason text;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS api_used bigint;
ALTER TABLE connections ADD COLUMN IF NOT EXISTS api_limit bigint;
