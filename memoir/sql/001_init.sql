-- Memoir: users, short-term memory, latest actions, preference versions, reminders.
-- Every row belongs to a user; deleting the user erases everything of theirs (ON DELETE CASCADE).

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE users (
    user_id      text PRIMARY KEY CHECK (user_id ~ '^[^\s:/]+$'),
    name         text NOT NULL,
    timezone     text NOT NULL DEFAULT 'UTC',
    language     text NOT NULL DEFAULT 'en',
    capabilities text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
    token_sha256 text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

-- Short-term memory (seed 004): one row per user message or agent reply (with its tool calls
-- and the tool results logged with it).
CREATE TABLE interactions (
    id             bigserial PRIMARY KEY,
    key            text NOT NULL UNIQUE,
    user_id        text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    thread_id      text NOT NULL,
    actor          text NOT NULL CHECK (actor IN ('user', 'agent')),
    content        text NOT NULL DEFAULT '',
    tool_calls     jsonb,
    tool_responses jsonb,
    message_id     text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interactions_thread_idx ON interactions (user_id, thread_id, id);

-- Latest actions (seed 002): per thread FIFO of successful steps.
CREATE TABLE latest_actions (
    id           bigserial PRIMARY KEY,
    key          text NOT NULL UNIQUE,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    thread_id    text NOT NULL,
    created_at   timestamptz NOT NULL,
    capability   text NOT NULL,
    action       text NOT NULL,
    summary      text NOT NULL,
    when_text    text,
    external_ids jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX latest_actions_thread_idx
    ON latest_actions (user_id, thread_id, created_at DESC, id DESC);

-- Preference memory (seed 000): every change is a new version, with the decision that caused it.
CREATE TABLE preference_versions (
    user_id    text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    namespace  text NOT NULL
        CHECK (namespace IN ('triage_preferences', 'response_preferences', 'cal_preferences')),
    version    integer NOT NULL CHECK (version > 0),
    content    text NOT NULL,
    decision   text NOT NULL,
    turn_id    text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, namespace, version)
);
-- A retried update (same turn, same decision) must not create a second version.
CREATE UNIQUE INDEX preference_versions_turn_uq
    ON preference_versions (user_id, namespace, turn_id, decision)
    WHERE turn_id IS NOT NULL;

CREATE TABLE reminders (
    reminder_id     text PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE,
    user_id         text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    thread_id       text NOT NULL,
    text            text NOT NULL,
    due_at          timestamptz NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'completed', 'deleted', 'delivered')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    delivered_at    timestamptz
);
CREATE INDEX reminders_user_status_due_idx ON reminders (user_id, status, due_at);
CREATE INDEX reminders_text_trgm_idx ON reminders USING gin (text gin_trgm_ops);
