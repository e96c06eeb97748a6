"""All configuration in one `BaseSettings`: environment first, `MEMOIR_*` for Memoir's own knobs."""

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    # Where the embedded stack keeps its files (Temporal SQLite, Postgres data).
    data_dir: Path = Field(Path(".memoir"), validation_alias=_env("MEMOIR_DATA_DIR"))
    # Wraps the per-user payload keys (32 bytes, base64 or hex); unset: the data folder's
    # master.key, which `memoir dev` / `memoir demo` create (docs/security.md).
    master_key: SecretStr | None = Field(None, validation_alias=_env("MEMOIR_MASTER_KEY"))
    # None means: start the embedded Postgres under data_dir.
    database_url: str | None = Field(None, validation_alias=_env("MEMOIR_DATABASE_URL"))

    temporal_address: str = Field("localhost:7233", validation_alias=_env("TEMPORAL_ADDRESS"))
    temporal_namespace: str = Field("default", validation_alias=_env("TEMPORAL_NAMESPACE"))
    # A Temporal cluster behind TLS (Temporal Cloud): mTLS with a client certificate and key
    # (PEM files), or an API key (TLS on by default with one). The names of Temporal's own
    # environment configuration, or the short ones.
    temporal_tls: bool | None = Field(None, validation_alias=_env("TEMPORAL_TLS"))
    temporal_tls_cert: Path | None = Field(
        None, validation_alias=AliasChoices("TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CERT")
    )
    temporal_tls_key: Path | None = Field(
        None, validation_alias=AliasChoices("TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_KEY")
    )
    temporal_tls_ca: Path | None = Field(
        None, validation_alias=AliasChoices("TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CA")
    )
    temporal_tls_server_name: str | None = Field(
        None, validation_alias=_env("TEMPORAL_TLS_SERVER_NAME")
    )
    temporal_api_key: SecretStr | None = Field(None, validation_alias=_env("TEMPORAL_API_KEY"))
    temporal_ui_port: int = Field(8233, validation_alias=_env("MEMOIR_TEMPORAL_UI_PORT"))
    # Origins (comma-separated) allowed to call /codec with credentials; unset: the Web UI at
    # http://127.0.0.1:{temporal_ui_port} and http://localhost:{temporal_ui_port}.
    codec_cors_origins: str | None = Field(None, validation_alias=_env("MEMOIR_CODEC_CORS_ORIGINS"))
    task_queue: str = Field("memoir", validation_alias=_env("MEMOIR_TASK_QUEUE"))

    api_host: str = Field("127.0.0.1", validation_alias=_env("MEMOIR_API_HOST"))
    api_port: int = Field(8000, validation_alias=_env("MEMOIR_API_PORT"))

    llm_provider: Literal["offline", "openai"] = Field(
        "offline", validation_alias=_env("MEMOIR_LLM_PROVIDER")
    )
    llm_model: str = Field("gpt-4o-mini", validation_alias=_env("MEMOIR_LLM_MODEL"))
    openai_api_key: str | None = Field(None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=_env("OPENAI_BASE_URL"))

    embedding_provider: Literal["local", "openai"] = Field(
        "local", validation_alias=_env("MEMOIR_EMBEDDING_PROVIDER")
    )
    # Torch threads per embedding of the local model. A server embeds a sentence or two per
    # request for many requests at once: splitting each across cores buys nothing there, and
    # the idle threads' spin-waits cost several times the work itself on a busy machine.
    embedding_threads: int = Field(1, ge=1, validation_alias=_env("MEMOIR_EMBEDDING_THREADS"))

    # Human in the loop (seed 002: five minutes).
    hitl_ttl_seconds: int = Field(300, gt=0, validation_alias=_env("MEMOIR_HITL_TTL_SECONDS"))
    # An activity whose worker sends no heartbeat for this long is retried on another worker (a
    # killed worker's step is retried within this, not after its 30 s / 120 s start-to-close).
    activity_heartbeat_seconds: float = Field(
        15.0, gt=0, validation_alias=_env("MEMOIR_ACTIVITY_HEARTBEAT_SECONDS")
    )
    # Thread session scope (seed 002: 12 hours) and latest actions FIFO.
    thread_idle_hours: float = Field(12.0, gt=0, validation_alias=_env("MEMOIR_THREAD_IDLE_HOURS"))
    thread_turns_per_run: int = Field(
        500, gt=0, validation_alias=_env("MEMOIR_THREAD_TURNS_PER_RUN")
    )
    latest_actions_max: int = Field(10, gt=0, validation_alias=_env("MEMOIR_LATEST_ACTIONS_MAX"))
    latest_actions_hours: float = Field(
        12.0, gt=0, validation_alias=_env("MEMOIR_LATEST_ACTIONS_HOURS")
    )
    session_history_limit: int = Field(20, gt=0, validation_alias=_env("MEMOIR_HISTORY_LIMIT"))
    max_replans: int = Field(3, ge=0, validation_alias=_env("MEMOIR_MAX_REPLANS"))

    # ----- long-term memory (seeds 001, 003: the seed's names and defaults) -----
    vector_backend: Literal["pgvector", "pinecone"] = Field(
        "pgvector", validation_alias=_env("MEMOIR_VECTOR_BACKEND")
    )
    pinecone_api_key: str | None = Field(None, validation_alias=_env("PINECONE_API_KEY"))
    pinecone_index: str = Field("memoir", validation_alias=_env("PINECONE_INDEX"))
    # Data-plane URL of the index (e.g. https://memoir-xxxx.svc.region.pinecone.io).
    pinecone_host: str | None = Field(None, validation_alias=_env("PINECONE_HOST"))
    embedding_dim: int = Field(384, gt=0, validation_alias=_env("MEMOIR_EMBEDDING_DIM"))

    memory_merge_topk: int = Field(5, gt=0, validation_alias=_env("MEMORY_MERGE_TOPK"))
    memory_merge_check_low: float = Field(
        0.60, ge=0, le=1, validation_alias=AliasChoices("MEMORY_MERGE_CHECK_LOW", "MEMORY_SEM_LOW")
    )
    memory_merge_auto_update: float = Field(
        0.85,
        ge=0,
        le=1,
        validation_alias=AliasChoices("MEMORY_MERGE_AUTO_UPDATE", "MEMORY_SEM_AUTO"),
    )
    memory_merge_mode: Literal["recreate", "update"] = Field(
        "recreate", validation_alias=_env("MEMORY_MERGE_MODE")
    )
    memory_semantic_min_importance: float = Field(
        0.4, ge=0, le=1, validation_alias=_env("MEMORY_SEMANTIC_MIN_IMPORTANCE")
    )
    memory_context_topk: int = Field(24, gt=0, validation_alias=_env("MEMORY_CONTEXT_TOPK"))
    memory_context_topn: int = Field(30, gt=0, validation_alias=_env("MEMORY_CONTEXT_TOPN"))
    # The context's bullets stop at this many tokens (estimated as characters / 4): ~35 message
    # records or ~60 short facts, about 1% of a 128k-token prompt and still room in an 8k one.
    memory_context_tokens: int = Field(1500, ge=50, validation_alias=_env("MEMORY_CONTEXT_TOKENS"))
    # sim, importance, recency, pinned
    memory_rerank_weights: str = Field(
        "0.6,0.2,0.15,0.05", validation_alias=_env("MEMORY_RERANK_WEIGHTS")
    )
    memory_tiny_llm_model_id: str | None = Field(
        None, validation_alias=_env("MEMORY_TINY_LLM_MODEL_ID")
    )
    episodic_window_n: int = Field(10, gt=0, validation_alias=_env("EPISODIC_WINDOW_N"))
    episodic_cooldown_turns: int = Field(3, ge=0, validation_alias=_env("EPISODIC_COOLDOWN_TURNS"))
    episodic_cooldown_minutes: float = Field(
        10, ge=0, validation_alias=_env("EPISODIC_COOLDOWN_MINUTES")
    )
    episodic_max_per_day: int = Field(5, ge=0, validation_alias=_env("EPISODIC_MAX_PER_DAY"))
    episodic_merge_window_hours: float = Field(
        48, ge=0, validation_alias=_env("EPISODIC_MERGE_WINDOW_HOURS")
    )
    episodic_novelty_min: float = Field(
        0.25, ge=0, le=1, validation_alias=_env("EPISODIC_NOVELTY_MIN")
    )

    # ----- email.send over SMTP (the local sink of `memoir dev` listens here by default) -----
    smtp_host: str = Field("127.0.0.1", validation_alias=_env("MEMOIR_SMTP_HOST"))
    smtp_port: int = Field(8025, gt=0, validation_alias=_env("MEMOIR_SMTP_PORT"))
    smtp_from: str = Field("Memoir <memoir@localhost>", validation_alias=_env("MEMOIR_SMTP_FROM"))
    smtp_username: str | None = Field(None, validation_alias=_env("MEMOIR_SMTP_USERNAME"))
    smtp_password: str | None = Field(None, validation_alias=_env("MEMOIR_SMTP_PASSWORD"))
    smtp_starttls: bool = Field(False, validation_alias=_env("MEMOIR_SMTP_STARTTLS"))
    smtp_timeout_seconds: float = Field(
        20.0, gt=0, validation_alias=_env("MEMOIR_SMTP_TIMEOUT_SECONDS")
    )

    # ----- calendar.* over CalDAV (the Radicale of `memoir dev` listens here by default) -----
    caldav_url: str = Field("http://127.0.0.1:5232/", validation_alias=_env("MEMOIR_CALDAV_URL"))
    caldav_username: str | None = Field("memoir", validation_alias=_env("MEMOIR_CALDAV_USERNAME"))
    caldav_password: str | None = Field("memoir", validation_alias=_env("MEMOIR_CALDAV_PASSWORD"))

    otel_exporter_otlp_endpoint: str | None = Field(
        None, validation_alias=_env("OTEL_EXPORTER_OTLP_ENDPOINT")
    )

    # ----- the HTTP API's guards (issue 13) -----
    # A token bucket per API token: this many requests a minute, `burst` at once; 0 = no limit.
    # High enough for `memoir bench` and the load test (one token polling every 10 ms).
    rate_limit_per_minute: int = Field(
        6000, ge=0, validation_alias=_env("MEMOIR_RATE_LIMIT_PER_MINUTE")
    )
    rate_limit_burst: int = Field(1000, ge=1, validation_alias=_env("MEMOIR_RATE_LIMIT_BURST"))
    # Debug only: let logs carry message, email and memory content (redacted otherwise).
    log_content: bool = Field(False, validation_alias=_env("MEMOIR_LOG_CONTENT"))
    # Model prompts and answers on LLM spans (gen_ai.input/output.messages): off by default.
    otel_capture_content: bool = Field(False, validation_alias=_env("MEMOIR_OTEL_CAPTURE_CONTENT"))
    # Finished spans as JSON lines under data_dir/traces (read by `memoir trace TURN_ID`).
    otel_local_spans: bool = Field(True, validation_alias=_env("MEMOIR_OTEL_LOCAL_SPANS"))


@lru_cache
def get_settings() -> Settings:
    return Settings()
