-- Memoir: lexical search over facts and episode summaries (hybrid retrieval, issue 9).
-- `memory_context` fuses this full-text ranking with the dense (vector) one and with the
-- message records' two rankings (013). The (user_id, tsv) GIN index (btree_gin, created in 013)
-- keeps every lexical query within one user's rows.
ALTER TABLE memories ADD COLUMN IF NOT EXISTS tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', summary)) STORED;
CREATE INDEX IF NOT EXISTS memories_user_tsv_idx ON memories USING gin (user_id, tsv);
