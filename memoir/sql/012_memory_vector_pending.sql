-- A memory whose vector is not in the external vector store yet (Pinecone): the row carries the
-- embedding to write, set in the same transaction as the row and cleared once the upsert has
-- succeeded. MemoryStore retries marked rows (before each search of that user, and on
-- `retry_pending`), so a failed upsert is healed instead of leaving a memory no search finds.
-- Always NULL with pgvector, whose vectors commit in the same transaction as their row.
ALTER TABLE memories ADD COLUMN IF NOT EXISTS vector_pending real[];
CREATE INDEX IF NOT EXISTS memories_vector_pending_idx ON memories (user_id)
    WHERE vector_pending IS NOT NULL;
