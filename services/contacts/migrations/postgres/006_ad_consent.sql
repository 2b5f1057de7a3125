-- A contact's consent for ad personalisation, from the conversion's properties (`ad_consent`:
-- "granted" | "denied"; anything else or absent: unknown, null). It travels with
-- outcome.writeback_requested; crm-sync never sends a "denied" contact to an ad platform.
ALTER TABLE contacts ADD COLUMN IF NOT EXISTS ad_consent text CHECK (ad_consent IN ('granted', 'denied'));
