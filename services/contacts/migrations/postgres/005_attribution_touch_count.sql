-- How many touches the journey behind first_touch/last_touch had (conversion.attributed's
-- touch_count). Journeys only gain touches, so a message with fewer touches than the stored row is
-- an older computation delivered late and is ignored.
ALTER TABLE contact_attribution ADD COLUMN IF NOT EXISTS touch_count integer NOT NULL DEFAULT 0;
