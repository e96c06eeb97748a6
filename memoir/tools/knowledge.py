"""The `knowledge.search` capability: retrieval over the user's ingested documents.

Every chunk found is attributed to its document: the summary reads
"According to {document}: {text}", one line per chunk, best first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from memoir.embeddings import Embedder
from memoir.knowledge.store import KbHit, KnowledgeStore
from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution
from memoir.text import one_line
from memoir.tools.base import failure

DEFAULT_TOP_K = 3
MAX_TOP_K = 10
# Below this cosine similarity a chunk is not about the question: better "nothing found" than
# an answer attributed to an unrelated passage.
MIN_SCORE = 0.2


def attribution(hit: KbHit, limit: int = 600) -> str:
    """One retrieved chunk, attributed: "According to {document}: {text}"."""
    return f"According to {hit.title}: {one_line(hit.text, limit)}"


def _top_k(value: object) -> int:
    try:
        k = int(str(value)) if value is not None else DEFAULT_TOP_K
    except ValueError:
        k = DEFAULT_TOP_K
    return max(1, min(MAX_TOP_K, k))


class KnowledgeTool:
    """`embedder` may be a factory, called on the first search (the model loads lazily)."""

    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder | Callable[[], Embedder],
        *,
        min_score: float = MIN_SCORE,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._min_score = min_score

    def embedder(self) -> Embedder:
        if not isinstance(self._embedder, Embedder) and callable(self._embedder):
            self._embedder = self._embedder()
        return self._embedder

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        query = str(request.step.args.get("query", "")).strip()
        if not query:
            return StepResolution(
                step_id=request.step.id,
                status="not_found",
                message="What should I look for in your documents?",
            )
        return StepResolution(
            step_id=request.step.id,
            status="resolved",
            args={"query": query, "top_k": _top_k(request.step.args.get("top_k"))},
        )

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        action = request.step.capability.split(".", 1)[1]
        if action != "search":
            return failure(request, f"knowledge has no action '{action}'")
        query = str(request.args.get("query", "")).strip()
        if not query:
            return failure(request, "There was nothing to search for.")
        [vector] = await asyncio.to_thread(self.embedder().embed, [query])
        hits = await self._store.search(request.user_id, vector, _top_k(request.args.get("top_k")))
        hits = [h for h in hits if h.score >= self._min_score]
        if hits:
            summary = "\n".join(attribution(h) for h in hits)
        else:
            summary = f"I found nothing about “{query}” in your documents."
        return ExecutionResult(
            step_id=request.step.id,
            capability=request.step.capability,
            success=True,
            summary=summary,
            data={
                "query": query,
                "chunks": [
                    {
                        "document": h.title,
                        "document_id": h.document_id,
                        "heading": h.heading,
                        "text": h.text,
                        "score": round(h.score, 4),
                    }
                    for h in hits
                ],
            },
        )
