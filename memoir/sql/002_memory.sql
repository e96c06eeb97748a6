-- Memoir: long-term memory (seeds 001, 003): semantic and episodic memories, their vectors,
-- the user's structured context (profile line) and the episodic capture bookkeeping.
-- Every row belongs to a user; deleting the user erases all of it (ON DELETE CASCADE).
--
-- Vector dimension: 384, the output of all-MiniLM-L6-v2 (the bundled default embedder,
-- MEMOIR_EMBEDDING_DIM=384). Another embedder needs vectors of the same length (OpenAI's
-- text-embedding-3-* accept `dimensions=384`) or a new migration that changes `vector(384)`.

CREATE TABLE memories (
    memory_id          text PRIMARY KEY,
    user_id            text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    kind               text NOT NULL CHECK (kind IN ('semantic', 'episodic')),
    category           text NOT NULL,
    summary            text NOT NULL,
    importance         real NOT NULL CHECK (importance >= 0 AND importance <= 1),
    -- Deterministic key when extractable (e.g. profile:pet:luna:age): one memory per key.
    key                text,
    pinned             boolean NOT NULL DEFAULT false,
    -- Provenance: the ids of the messages the memory came from.
    source_message_ids text[] NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    last_accessed      timestamptz,
    last_verified_at   timestamptz,
    -- Episodic date bucket, in the user's time zone.
    date_iso           date,
    week               integer CHECK (week BETWEEN 1 AND 53),
    year               integer,
    metadata           jsonb NOT NULL DEFAULT '{}',
    -- Target of memory_vectors' foreign key: a vector always has its memory's user.
    UNIQUE (memory_id, user_id)
);
CREATE UNIQUE INDEX memories_user_key_uq ON memories (user_id, key) WHERE key IS NOT NULL;
CREATE INDEX memories_user_kind_created_idx ON memories (user_id, kind, created_at DESC);

-- One embedding per memory, with the metadata that queries filter on (pgvector backend).
CREATE TABLE memory_vectors (
    memory_id text PRIMARY KEY,
    user_id   text NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('semantic', 'episodic')),
    category  text NOT NULL,
    date_iso  date,
    week      integer,
    year      integer,
    pinned    boolean NOT NULL DEFAULT false,
    -- Metadata keys without a column of their own (returned with hits, not filterable).
    extra     jsonb NOT NULL DEFAULT '{}',
    embedding vector(384) NOT NULL,
    FOREIGN KEY (memory_id, user_id) REFERENCES memories (memory_id, user_id) ON DELETE CASCADE
);
CREATE INDEX memory_vectors_user_idx ON memory_vectors (user_id);
-- Cosine distance (<=>); similarity = 1 - distance. ef_search is set per query by PgVectorStore.
CREATE INDEX memory_vectors_embedding_idx ON memory_vectors
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

-- Structured user context (seed 001 `UserContext`), rendered as the one-line profile per turn.
-- NULL fields fall back to the users row (name, timezone, language).
CREATE TABLE user_context (
    user_id    text PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
    name       text,
    tone       text,
    language   text,
    city       text,
    timezone   text,
    goals      text[] NOT NULL DEFAULT '{}',
    interests  text[] NOT NULL DEFAULT '{}',
    extra      jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Episodic capture cooldowns and daily cap (EPISODIC_COOLDOWN_TURNS / _MINUTES,
-- EPISODIC_MAX_PER_DAY): turns since the last episode, when it was written, and how many were
-- written on `day_iso` (the user's local day; a new day resets `day_count`).
CREATE TABLE episodic_state (
    user_id          text PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
    turns_since_last integer NOT NULL DEFAULT 0 CHECK (turns_since_last >= 0),
    last_created_at  timestamptz,
    day_iso          date,
    day_count        integer NOT NULL DEFAULT 0 CHECK (day_count >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
