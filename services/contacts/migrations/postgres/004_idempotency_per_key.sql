-- PATCH idempotency records belong to the API key that made them, not to the workspace: another
-- key reusing the same Idempotency-Key makes its own request and can never read this key's answer.
-- Records from before this migration carry no key and simply expire (they live 24 hours).
ALTER TABLE idempotency_keys ADD COLUMN key_id text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, key_id, key);
