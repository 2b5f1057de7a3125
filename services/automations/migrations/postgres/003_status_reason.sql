-- Why an alert was paused by the service rather than by a person (e.g. the funnel it gathers from
-- was deleted): shown in the API as status_reason, cleared when the status is set through the API.
ALTER TABLE automations ADD COLUMN IF NOT EXISTS status_reason text;
