-- Memoir: the knowledge base behind `knowledge.search` (seed 004, RAG-powered retrieval).
-- A user's ingested documents (one row per file, keyed by content hash) and their chunks with
-- all-MiniLM-L6-v2 embeddings (384 dimensions, like memory_vectors). Deleting the user deletes
-- its documents; deleting a document deletes its chunks (ON DELETE CASCADE).

CREATE TABLE kb_documents (
    document_id text PRIMARY KEY,
    user_id     text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    title       text NOT NULL,
    path        text NOT NULL,
    sha256      text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- Re-ingesting the same content is a no-op; a changed file (same path) replaces its chunks.
    UNIQUE (user_id, sha256),
    UNIQUE (user_id, path)
);

CREATE TABLE kb_chunks (
    chunk_id    text PRIMARY KEY,
    document_id text NOT NULL REFERENCES kb_documents (document_id) ON DELETE CASCADE,
    user_id     text NOT NULL,
    ordinal     integer NOT NULL,
    -- The heading path of the chunk's section, e.g. "Handbook > Refunds".
    heading     text NOT NULL DEFAULT '',
    text        text NOT NULL,
    embedding   vector(384) NOT NULL,
    UNIQUE (document_id, ordinal)
);
CREATE INDEX kb_chunks_user_idx ON kb_chunks (user_id);
-- Cosine distance (<=>); similarity = 1 - distance.
CREATE INDEX kb_chunks_embedding_idx ON kb_chunks
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
