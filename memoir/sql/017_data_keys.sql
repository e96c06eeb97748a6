-- Payload encryption (memoir.crypto): one data key per user ('' = the system), wrapped by the
-- master key (master_key_id is its fingerprint). One active key per owner; retired keys still
-- decode old payloads. Erasing a user deletes their rows (crypto-shredding), hence no foreign key.
CREATE TABLE data_keys (
    key_id text PRIMARY KEY,
    owner text NOT NULL,
    wrapped_key bytea NOT NULL,
    master_key_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz
);
CREATE UNIQUE INDEX data_keys_one_active_idx ON data_keys (owner) WHERE retired_at IS NULL;
CREATE INDEX data_keys_owner_idx ON data_keys (owner);
