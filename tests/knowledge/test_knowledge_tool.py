from pathlib import Path

from memoir.embeddings import Embedder
from memoir.knowledge import KnowledgeStore, ingest_path
from memoir.models import ExecuteRequest, PlanStep, ResolveRequest, UserProfile
from memoir.tools.knowledge import KnowledgeTool


def _request(user: UserProfile, **args: object) -> ExecuteRequest:
    step = PlanStep(id="s1", capability="knowledge.search", args=dict(args))
    return ExecuteRequest(
        turn_id="turn-1",
        user_id=user.user_id,
        thread_id="t1",
        step=step,
        args=dict(args),
        idempotency_key="turn-1:s1",
    )


async def test_search_result_attributes_each_chunk_to_its_document(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    await ingest_path(handbook, user.user_id, kb, embedder)
    tool = KnowledgeTool(kb, embedder)
    result = await tool.execute(_request(user, query="what is the refund policy", top_k=2))
    assert result.success
    first, *_ = result.data["chunks"]
    assert first["document"] == "Acme Handbook"
    assert "within 30 days of purchase" in first["text"]
    assert result.summary.startswith("According to Acme Handbook: Customers can ask for a refund")
    assert len(result.summary.splitlines()) == len(result.data["chunks"]) <= 2


async def test_search_without_documents_says_nothing_was_found(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile
) -> None:
    result = await KnowledgeTool(kb, embedder).execute(_request(user, query="refunds"))
    assert result.success and result.data["chunks"] == []
    assert "According to" not in result.summary
    assert "nothing about “refunds”" in result.summary


async def test_resolve_needs_a_query_and_bounds_top_k(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile
) -> None:
    tool = KnowledgeTool(kb, lambda: embedder)

    def resolve_request(**args: object) -> ResolveRequest:
        step = PlanStep(id="s1", capability="knowledge.search", args=dict(args))
        return ResolveRequest(turn_id="turn-1", user_id=user.user_id, step=step)

    assert (await tool.resolve(resolve_request(query="  "))).status == "not_found"
    resolved = await tool.resolve(resolve_request(query="refunds", top_k=99))
    assert resolved.args == {"query": "refunds", "top_k": 10}
