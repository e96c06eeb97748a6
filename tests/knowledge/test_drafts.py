import re

from memoir.drafting import DraftSection, DraftSections
from memoir.llm.scripted import ScriptedChatModel
from memoir.models import ExecuteRequest, ExecutionResult, PlanStep, UserProfile
from memoir.stores import Stores
from memoir.tools.drafts import DraftTool

SESSION = [
    ("user", "Patient in bed 4 reports chest pain since this morning."),
    ("agent", "Noted."),
    ("user", "BP is 150/90 and pulse 98 bpm."),
    ("user", "She appears stable now. Will recheck her BP in two hours."),
    ("user", "She is allergic to penicillin!"),
]


async def _session(
    stores: Stores, user: UserProfile, thread: str, lines: list[tuple[str, str]]
) -> None:
    for i, (actor, content) in enumerate(lines):
        await stores.interactions.save_interaction(
            key=f"{user.user_id}:{thread}:{i}",
            user_id=user.user_id,
            thread_id=thread,
            actor="user" if actor == "user" else "agent",
            content=content,
        )


async def _draft(
    stores: Stores,
    user: UserProfile,
    capability: str,
    thread: str = "t1",
    llm: ScriptedChatModel | None = None,
) -> ExecutionResult:
    step = PlanStep(id="s1", capability=capability, args={"topic": "bed 4"})
    request = ExecuteRequest(
        turn_id="turn-1",
        user_id=user.user_id,
        thread_id=thread,
        step=step,
        args={"topic": "bed 4"},
        idempotency_key="turn-1:s1",
    )
    return await DraftTool(stores.interactions, llm or ScriptedChatModel()).execute(request)


def _sections(result: ExecutionResult) -> dict[str, list[str]]:
    return result.data["sections"]


async def test_a_note_is_marked_as_a_draft_with_soap_sections_from_the_session(
    stores: Stores, user: UserProfile
) -> None:
    await _session(stores, user, "t1", SESSION)
    result = await _draft(stores, user, "notes.draft")
    assert result.success
    assert result.summary.startswith("DRAFT for review — Note: bed 4")
    assert _sections(result) == {
        "Subjective": [
            "Patient in bed 4 reports chest pain since this morning.",
            "She is allergic to penicillin!",
        ],
        "Objective": ["BP is 150/90 and pulse 98 bpm."],
        "Assessment": ["She appears stable now."],
        "Plan": ["Will recheck her BP in two hours."],
    }


async def test_a_handoff_has_key_events_pending_tasks_and_critical_alerts(
    stores: Stores, user: UserProfile
) -> None:
    await _session(stores, user, "t1", SESSION)
    result = await _draft(stores, user, "handoff.draft")
    assert result.summary.startswith("DRAFT for review — Handoff report: bed 4")
    sections = _sections(result)
    assert list(sections) == ["Key Events", "Pending Tasks", "Critical Alerts"]
    assert sections["Critical Alerts"] == ["She is allergic to penicillin!"]
    assert sections["Pending Tasks"] == ["Will recheck her BP in two hours."]
    assert "BP is 150/90 and pulse 98 bpm." in sections["Key Events"]


async def test_empty_sections_say_none_stated_in_this_session(
    stores: Stores, user: UserProfile
) -> None:
    await _session(stores, user, "t1", [("user", "Patient reports a mild headache.")])
    result = await _draft(stores, user, "handoff.draft")
    assert "Key Events: Patient reports a mild headache." in result.summary
    assert "Pending Tasks: None stated in this session." in result.summary
    assert "Critical Alerts: None stated in this session." in result.summary


async def test_a_draft_uses_only_its_own_threads_history(stores: Stores, user: UserProfile) -> None:
    await _session(stores, user, "t1", SESSION)
    await _session(stores, user, "t2", [("user", "Patient in bed 9 has a fever of 39 degrees.")])
    result = await _draft(stores, user, "notes.draft", thread="t2")
    assert "bed 9" in result.summary
    assert "chest pain" not in result.summary and "penicillin" not in result.summary


async def test_the_draft_request_and_assistant_replies_are_not_drafted(
    stores: Stores, user: UserProfile
) -> None:
    await _session(
        stores,
        user,
        "t1",
        [
            ("user", "Mr Lee slept well overnight."),
            ("agent", "Glad to hear it will help."),
            ("user", "Draft a handoff report."),
        ],
    )
    result = await _draft(stores, user, "handoff.draft")
    assert _sections(result) == {
        "Key Events": ["Mr Lee slept well overnight."],
        "Pending Tasks": [],
        "Critical Alerts": [],
    }


async def test_every_drafted_sentence_comes_from_the_users_messages(
    stores: Stores, user: UserProfile
) -> None:
    await _session(stores, user, "t1", SESSION)
    said = " ".join(text for actor, text in SESSION if actor == "user")
    for capability in ("notes.draft", "handoff.draft"):
        result = await _draft(stores, user, capability)
        for sentences in _sections(result).values():
            assert all(s in said for s in sentences)


async def test_a_fact_the_model_invents_is_dropped_from_the_draft(
    stores: Stores, user: UserProfile
) -> None:
    await _session(stores, user, "t1", SESSION)
    invented = DraftSections(
        sections=[
            DraftSection(
                name="Objective",
                sentences=["BP is 150/90 and pulse 98 bpm.", "Temperature 38.5 degrees."],
            ),
            DraftSection(name="Plan", sentences=["Start intravenous antibiotics tonight."]),
        ]
    )
    llm = ScriptedChatModel().script("DraftSections", invented)
    result = await _draft(stores, user, "notes.draft", llm=llm)
    assert _sections(result)["Objective"] == ["BP is 150/90 and pulse 98 bpm."]
    assert "Plan: None stated in this session." in result.summary
    assert not re.search(r"38\.5|antibiotics", result.summary)
    [call] = llm.calls_for("DraftSections")
    assert "chest pain" in call and "## Session" in call
