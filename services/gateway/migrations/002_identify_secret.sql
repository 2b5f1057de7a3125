-- Each website gets a secret its own backend uses to vouch for a browser's identify() (an HMAC of
-- the email, as Intercom's identity verification does with user ids). Shown to operators by the
-- admin API and `sightline websites`, never by the public API. Existing websites get one here,
-- from gen_random_uuid (a cryptographic random source in PostgreSQL 13+ and PGlite).
ALTER TABLE websites ADD COLUMN identify_secret text;
UPDATE websites SET identify_secret = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') WHERE identify_secret IS NULL;
ALTER TABLE websites ALTER COLUMN identify_secret SET NOT NULL;
