-- The change log behind GET /changes. `seq` is the feed's order and every cursor's position.
-- Sequence numbers come from the one-row counter `change_seq`, incremented in the same statement
-- that inserts the change: the counter's row lock is held until that statement commits, so a
-- number is handed out only after every smaller number has committed (or rolled back). Readers
-- can therefore trust that nothing will ever appear at or below the counter value they saw.
-- (A bigserial would let concurrent inserts commit out of order and a reader skip the laggard.)
CREATE TABLE change_seq (
  id    boolean PRIMARY KEY DEFAULT true CHECK (id),
  last  bigint NOT NULL
);
INSERT INTO change_seq (id, last) VALUES (true, 0);

CREATE TABLE changes (
  seq           bigint PRIMARY KEY,
  -- Bus message id: redelivery of the same message inserts nothing.
  message_id    text NOT NULL UNIQUE,
  workspace_id  text,
  website_id    text NOT NULL,
  type          text NOT NULL,
  -- api:<key_id>, crm:<provider>, ingest, tracker, or the publishing service.
  source        text NOT NULL,
  object_type   text,
  object_id     text,
  -- When the fact happened (envelope) and when it entered the feed (order, `since`, retention).
  occurred_at   timestamptz NOT NULL,
  recorded_at   timestamptz NOT NULL DEFAULT now(),
  data          jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX changes_website_seq ON changes (website_id, seq);
CREATE INDEX changes_recorded_at ON changes (recorded_at);
