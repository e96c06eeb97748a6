from pathlib import Path

from memoir.embeddings import Embedder
from memoir.knowledge import KnowledgeStore, ingest_path
from memoir.models import UserProfile
from memoir.stores import Stores


async def test_ingesting_the_same_file_twice_is_a_no_op(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    first = await ingest_path(handbook, user.user_id, kb, embedder)
    second = await ingest_path(handbook, user.user_id, kb, embedder)
    assert [o for _, o in first.documents] == ["added"]
    assert [o for _, o in second.documents] == ["unchanged"]
    [document] = await kb.list_documents(user.user_id)
    assert document.title == "Acme Handbook"
    assert document.chunks == len(await kb.chunks(user.user_id, document.document_id)) > 0


async def test_a_changed_file_replaces_its_chunks(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    await ingest_path(handbook, user.user_id, kb, embedder)
    handbook.write_text("# Acme Handbook\n\nRefunds are no longer offered.\n", encoding="utf-8")
    report = await ingest_path(handbook, user.user_id, kb, embedder)
    assert [o for _, o in report.documents] == ["replaced"]
    [document] = await kb.list_documents(user.user_id)
    assert await kb.chunks(user.user_id, document.document_id) == ["Refunds are no longer offered."]


async def test_a_folder_ingests_its_markdown_and_text_files_with_progress(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\nalpha facts.\n")
    (folder / "sub" / "b.txt").write_text("beta facts.\n")
    (folder / "c.pdf").write_bytes(b"%PDF")
    seen: list[tuple[int, int, str]] = []
    await ingest_path(
        folder,
        user.user_id,
        kb,
        embedder,
        lambda i, n, _f, outcome, _d: seen.append((i, n, outcome)),
    )
    assert seen == [(1, 2, "added"), (2, 2, "added")]
    assert [d.title for d in await kb.list_documents(user.user_id)] == ["Alpha", "B"]


async def test_search_returns_the_relevant_chunk_with_its_document_title(
    kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    await ingest_path(handbook, user.user_id, kb, embedder)
    [query] = embedder.embed(["how long do I have to get my money back?"])
    [best, *_] = await kb.search(user.user_id, query, top_k=3)
    assert best.title == "Acme Handbook"
    assert best.heading == "Acme Handbook > Refunds"
    assert "within 30 days of purchase" in best.text
    assert 0 < best.score <= 1


async def test_search_stays_within_the_user(
    stores: Stores, kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    await ingest_path(handbook, user.user_id, kb, embedder)
    other, _ = await stores.users.create_user("Other")
    [query] = embedder.embed(["refund policy"])
    assert await kb.search(other.user_id, query, top_k=5) == []
    assert all(h.document_id for h in await kb.search(user.user_id, query, top_k=5))


async def test_deleting_the_user_deletes_its_documents(
    stores: Stores, kb: KnowledgeStore, embedder: Embedder, user: UserProfile, handbook: Path
) -> None:
    await ingest_path(handbook, user.user_id, kb, embedder)
    async with stores.pool.connection() as conn:
        await conn.execute("DELETE FROM users WHERE user_id = %s", (user.user_id,))
        cur = await conn.execute(
            "SELECT count(*) AS n FROM kb_chunks WHERE user_id = %s", (user.user_id,)
        )
        row = await cur.fetchone()
    assert row is not None and row["n"] == 0
