"""Ingest a file or a folder of `.md` / `.txt` files into a user's knowledge base."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memoir.embeddings import Embedder
from memoir.knowledge.chunking import chunk_text, document_title
from memoir.knowledge.store import AddOutcome, KbDocument, KnowledgeStore

SUFFIXES = (".md", ".markdown", ".txt")

Progress = Callable[[int, int, Path, AddOutcome, KbDocument], None]


@dataclass
class IngestReport:
    """What happened to each file: added, replaced or unchanged."""

    documents: list[tuple[KbDocument, AddOutcome]] = field(default_factory=list)

    def count(self, outcome: AddOutcome) -> int:
        return sum(1 for _, o in self.documents if o == outcome)


def knowledge_files(path: Path) -> list[Path]:
    """`path` itself, or the `.md`/`.txt` files under the folder, in name order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or folder: {path}")
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)


async def ingest_path(
    path: str | Path,
    user_id: str,
    store: KnowledgeStore,
    embedder: Embedder,
    progress: Progress | None = None,
) -> IngestReport:
    """Chunk, embed and store every file; unchanged files are skipped before embedding."""
    files = knowledge_files(Path(path).expanduser().resolve())
    report = IngestReport()
    for index, file in enumerate(files, start=1):
        raw = file.read_bytes()
        sha = hashlib.sha256(raw).hexdigest()
        existing = await store.find_by_sha(user_id, sha)
        outcome: AddOutcome
        if existing is not None:
            document, outcome = existing, "unchanged"
        else:
            text = raw.decode("utf-8", errors="replace")
            chunks = chunk_text(text)
            embeddings = await asyncio.to_thread(
                embedder.embed, [c.embedding_text() for c in chunks]
            )
            document, outcome = await store.add_document(
                user_id,
                title=document_title(text, file.stem),
                path=str(file),
                sha256=sha,
                chunks=chunks,
                embeddings=embeddings,
            )
        report.documents.append((document, outcome))
        if progress is not None:
            progress(index, len(files), file, outcome, document)
    return report
