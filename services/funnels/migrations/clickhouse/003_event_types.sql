-- The custom event types each website has sent (event-types.repo.ts): what a step's event_type
-- pattern is checked against when a funnel is written. Ordered by website, so that check reads one
-- short key range instead of every event the website ever sent. At most 1,000 types per website of
-- at most 200 characters (MAX_CUSTOM_EVENT_TYPES, FUNNEL_MATCHER.maxLength); the types Sightline
-- records itself are always allowed and not stored here.
CREATE TABLE IF NOT EXISTS event_types (
  website_id        UUID,
  event_type        String
)
ENGINE = ReplacingMergeTree
ORDER BY (website_id, event_type);

-- The types already sent, first 1,000 in sort order per website (a re-run adds nothing new).
INSERT INTO event_types (website_id, event_type)
SELECT website_id, toString(event_type) AS t
FROM identity_events
WHERE t NOT IN ('pageview', 'outbound', 'form_submit', 'custom', 'identify', 'conversion', 'purchase')
  AND lengthUTF8(t) BETWEEN 1 AND 200
GROUP BY website_id, t
ORDER BY website_id, t
LIMIT 1000 BY website_id;
