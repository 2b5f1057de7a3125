-- The identity graph. Each key (anonymous id, email hash, phone hash) belongs to one identity;
-- a merge moves every key of the loser to the winner and is recorded, so history can be re-keyed.
CREATE TABLE identity_keys (
  workspace_id  uuid NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('anon', 'email', 'phone')),
  key_hash      text NOT NULL,
  identity_id   uuid NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, kind, key_hash)
);
CREATE INDEX identity_keys_identity ON identity_keys (workspace_id, identity_id);

CREATE TABLE identity_merges (
  workspace_id      uuid NOT NULL,
  from_identity_id  uuid NOT NULL,
  into_identity_id  uuid NOT NULL,
  merged_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, from_identity_id)
);
