-- Ad platforms as connections: LinkedIn joins Google Ads and Meta, and each account keeps what its
-- status shows (last spend pull and its rows or error, last conversion push, next scheduled pull)
-- plus an operator's pinned API version (null: the version table in src/ads/api-versions.ts).

ALTER TABLE ad_destinations DROP CONSTRAINT IF EXISTS ad_destinations_platform_check;
ALTER TABLE ad_destinations ADD CONSTRAINT ad_destinations_platform_check CHECK (platform IN ('google_ads', 'meta_ads', 'linkedin_ads'));

ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS last_pull_at timestamptz;
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS last_pull_rows integer;
-- The platform's reason for the last failed pull; cleared by the next successful one.
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS last_pull_error text;
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS last_pull_error_at timestamptz;
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS last_push_at timestamptz;
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS next_pull_at timestamptz;
ALTER TABLE ad_destinations ADD COLUMN IF NOT EXISTS api_version text;

-- Conversions to LinkedIn go through the same write-back queue.
ALTER TABLE writebacks DROP CONSTRAINT IF EXISTS writebacks_target_check;
ALTER TABLE writebacks ADD CONSTRAINT writebacks_target_check CHECK (target IN ('crm', 'google_ads', 'meta_ads', 'linkedin_ads'));
