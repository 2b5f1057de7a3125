-- Workspaces, their websites, and API keys (stored hashed: the plaintext is shown once, at creation).
CREATE TABLE workspaces (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  timezone    text NOT NULL,
  currency    char(3) NOT NULL,
  plan        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE websites (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL REFERENCES workspaces(id),
  domain        text NOT NULL UNIQUE,
  -- Public id carried by the tracker's script tag; not a secret.
  public_id     text NOT NULL UNIQUE,
  timezone      text NOT NULL,
  currency      char(3) NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX websites_workspace ON websites (workspace_id);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  workspace_id  uuid NOT NULL REFERENCES workspaces(id),
  name          text NOT NULL,
  secret_sha256 bytea NOT NULL,
  scopes        text[] NOT NULL,
  plan          text NOT NULL,
  -- True: the key reaches every website of its workspace, including ones added later.
  all_websites  boolean NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE api_key_websites (
  key_id      text NOT NULL REFERENCES api_keys(id),
  website_id  uuid NOT NULL REFERENCES websites(id),
  PRIMARY KEY (key_id, website_id)
);
