-- Memoir: the audit log (issue 13): who read, changed, approved or erased what, when, from where.
-- A user's rows go with the user (ON DELETE CASCADE); erasure leaves only an anonymous receipt.
CREATE TABLE audit_log (
    audit_id      bigserial PRIMARY KEY,
    user_id       text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    -- Who acted: the user themself ('user'), 'system' or the 'worker'.
    actor         text NOT NULL CHECK (actor IN ('user', 'system', 'worker')),
    -- The token the user acted with: the first 12 hex digits of its sha256 (NULL if none).
    token_id      text,
    action        text NOT NULL,
    resource_kind text NOT NULL,
    resource_id   text,
    -- Where from: 'api', 'chat' or 'cli'; `route` is the API route ('GET /v1/memories').
    via           text NOT NULL CHECK (via IN ('api', 'chat', 'cli', 'worker')),
    route         text,
    at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- Counts and outcomes only, never message, email or memory text.
    details       jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_user_idx ON audit_log (user_id, audit_id DESC);

-- What `DELETE /v1/me` leaves: no user id, nothing linkable; when, and what was erased (counts).
CREATE TABLE erasure_receipts (
    receipt_id uuid PRIMARY KEY,
    erased_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    erased     jsonb NOT NULL
);
