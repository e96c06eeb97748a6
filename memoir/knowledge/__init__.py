"""The knowledge base behind `knowledge.search`: chunking, the pgvector store, ingestion."""

from memoir.knowledge.chunking import Chunk, chunk_text
from memoir.knowledge.ingest import IngestReport, ingest_path
from memoir.knowledge.store import AddOutcome, KbDocument, KbHit, KnowledgeStore

__all__ = [
    "AddOutcome",
    "Chunk",
    "IngestReport",
    "KbDocument",
    "KbHit",
    "KnowledgeStore",
    "chunk_text",
    "ingest_path",
]
