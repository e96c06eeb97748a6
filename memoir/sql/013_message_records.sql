-- Memoir: every user message and assistant reply, kept as retrievable evidence (issue 9).
-- Written by the remember stage in the same transaction as the interaction history; facts and
-- episodes cite these rows through their `source_message_ids` (= `message_id` here).
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE message_records (
    -- The interaction key, `{turn_id}:user` or `{turn_id}:agent`: a retried remember writes once.
    record_id    text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    thread_id    text NOT NULL,
    -- The incoming message's id for a user message, `{message_id}:reply` for the reply to it.
    message_id   text NOT NULL,
    speaker      text NOT NULL CHECK (speaker IN ('user', 'assistant')),
    -- Who spoke, when known (a sender's name, a conversation participant); NULL otherwise.
    speaker_name text,
    text         text NOT NULL,
    said_at      timestamptz NOT NULL,
    embedding    vector(384) NOT NULL,
    tsv          tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
-- Dense search is exact within one user's rows (read through this index); lexical search uses
-- the (user_id, tsv) GIN index, so neither reads other users' rows. bench/ has the figures.
CREATE INDEX message_records_user_time_idx ON message_records (user_id, said_at);
CREATE INDEX message_records_user_tsv_idx ON message_records USING gin (user_id, tsv);
CREATE INDEX message_records_user_message_idx ON message_records (user_id, message_id);
