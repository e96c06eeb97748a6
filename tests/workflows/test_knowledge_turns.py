"""`knowledge.search`, `notes.draft` and `handoff.draft` turns: the offline planner picks the
tool, the real tool runs on Postgres, and the reply is grounded in what it found."""

from pathlib import Path

from memoir.embeddings import get_local_embedder
from memoir.knowledge import KnowledgeStore, ingest_path
from memoir.models import TurnStatus
from temporal import scenarios as plans
from temporal.harness import Harness

HANDBOOK = """# Acme Handbook

## Refunds

Customers can ask for a refund within 30 days of purchase.

## Holidays

Every employee gets 25 days of paid holiday per year.
"""


async def _connect(harness: Harness) -> None:
    harness.user = await harness.stores.users.set_capabilities(
        harness.user.user_id, ["reminders", "knowledge", "notes", "handoff"]
    )


async def test_handbook_question_replies_with_the_attributed_passage(
    harness: Harness, tmp_path: Path
) -> None:
    await _connect(harness)
    (tmp_path / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    await ingest_path(
        tmp_path, harness.user.user_id, KnowledgeStore(harness.stores.pool), get_local_embedder()
    )
    routed = await harness.send("what does the handbook say about refunds")
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert [a.capability for a in result.actions] == ["knowledge.search"]
    reply = result.reply or ""
    assert reply.startswith(
        "According to Acme Handbook: Customers can ask for a refund within 30 days of purchase."
    )
    assert "25 days of paid holiday" not in reply.split("\n\n")[0]


async def test_handoff_request_replies_with_a_draft_from_the_session(harness: Harness) -> None:
    await _connect(harness)
    harness.llm.script("Plan", plans.chat())  # a statement: nothing to do but remember it
    first = await harness.send("Mr Lee in room 12 is allergic to latex.")
    await harness.result(first.turn_id or "")
    routed = await harness.send("write a handoff report")
    result = await harness.result(routed.turn_id or "")
    assert [a.capability for a in result.actions] == ["handoff.draft"]
    reply = result.reply or ""
    assert "DRAFT for review" in reply
    assert "Critical Alerts: Mr Lee in room 12 is allergic to latex." in reply
    assert "Pending Tasks: None stated in this session." in reply


async def test_note_request_replies_with_a_soap_draft_marked_for_review(harness: Harness) -> None:
    await _connect(harness)
    harness.llm.script("Plan", plans.chat())
    first = await harness.send("Patient reports mild nausea. BP is 120/80.")
    await harness.result(first.turn_id or "")
    routed = await harness.send("draft a note")
    result = await harness.result(routed.turn_id or "")
    assert [a.capability for a in result.actions] == ["notes.draft"]
    reply = result.reply or ""
    assert "DRAFT for review — Note" in reply
    assert "Subjective: Patient reports mild nausea." in reply
    assert "Objective: BP is 120/80." in reply
    assert "Plan: None stated in this session." in reply
