-- Spend pulls from the ad platforms' reporting APIs (src/ads/spend/). One row per ad account that
-- has been pulled: the lease that keeps one pull per account running across replicas (a crashed
-- holder's lease runs out), consecutive failures (the backoff of the next try), and when the wide
-- window (conversions' late arrival) was last pulled. What operators read (last pull, rows, error,
-- next try) is on ad_destinations (migration 005).
CREATE TABLE IF NOT EXISTS ad_spend_pulls (
  website_id      text NOT NULL,
  platform        text NOT NULL,
  lease_owner     uuid,
  lease_until     timestamptz,
  failures        integer NOT NULL DEFAULT 0,
  wide_pulled_at  timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, platform)
);

