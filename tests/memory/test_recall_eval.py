"""The recall eval: both file shapes load, times parse, bad files say where they are bad, recall
is scored right on hand-made rankings, the naive baseline ranks, and a tiny conversation runs
through the real engine and the turn's own activities.

These tests check the eval, not how well the engine does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from activities.context import ContextActivities
from activities.deps import Deps
from activities.remember import RememberActivities
from memoir.cli import app
from memoir.embeddings import LocalEmbedder
from memoir.llm import OfflineChatModel
from memoir.memory.recall_eval import (
    SYSTEMS,
    ConversationResult,
    DialogTurn,
    NaiveIndex,
    QuestionResult,
    RecallDataError,
    RecallReport,
    TurnStages,
    load_conversations,
    parse_ks,
    parse_session_time,
    recall_at,
    run_recall_eval,
    score,
)
from memoir.models import UserProfile
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from tests.memory.conftest import EngineFactory

TINY = Path(__file__).parent / "fixtures" / "recall_tiny.json"


def flat(**extra: Any) -> dict[str, Any]:
    """A conversation in the flat shape: session keys at the top level."""
    return {
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I live in Porto."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I have a cat called Miso."},
        ],
        "session_1_date_time": "9:00 am on 3 March, 2024",
        "qa": [{"question": "Who has a cat?", "evidence": ["D1:2"], "category": 4}],
        **extra,
    }


def write(folder: Path, name: str, data: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ----- loading ---------------------------------------------------------------------------------


def test_the_locomo_shape_loads_with_its_sessions_times_and_questions() -> None:
    [conversation] = load_conversations(TINY)
    assert conversation.conversation_id == "tiny-1"
    assert conversation.speakers == ("Nadia", "Tom")
    assert [s.number for s in conversation.sessions] == [1, 2]
    assert conversation.sessions[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.dia_id for t in conversation.turns][:2] == ["D1:1", "D1:2"]
    assert len(conversation.turns) == 8
    assert [q.category for q in conversation.qa] == ["1", "1", "2", "other-speaker", "5"]
    assert conversation.qa[2].evidence == ["D2:1", "D2:2"]


def test_the_flat_shape_and_a_folder_load_with_ids_from_the_file(tmp_path: Path) -> None:
    write(tmp_path, "one.json", flat())
    write(tmp_path, "two.json", [flat(sample_id="b"), flat()])
    write(tmp_path, "notes.txt", "not a conversation")
    conversations = load_conversations(tmp_path)
    assert [c.conversation_id for c in conversations] == ["one", "b", "two-1"]
    assert conversations[0].sessions[0].at == datetime(2024, 3, 3, 9, 0, tzinfo=UTC)
    assert conversations[0].qa[0].category == "4"


def test_evidence_given_as_one_string_is_split_into_ids(tmp_path: Path) -> None:
    data = flat(qa=[{"question": "q", "evidence": ["D1:1; D1:2"], "category": "x"}])
    [conversation] = load_conversations(write(tmp_path, "c.json", data))
    assert conversation.qa[0].evidence == ["D1:1", "D1:2"]


def test_dia_ids_become_id_safe_message_ids_without_collisions(tmp_path: Path) -> None:
    data = flat()
    data["session_1"].append({"speaker": "Ana", "dia_id": "D1-1", "text": "Same id once safe."})
    [conversation] = load_conversations(write(tmp_path, "c.json", data))
    assert conversation.message_ids() == {"D1:1": "D1-1", "D1:2": "D1-2", "D1-1": "D1-1-2"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
        ("12:05 am on 1 Jan, 2024", datetime(2024, 1, 1, 0, 5, tzinfo=UTC)),
        ("12:30 PM on 9 Sept 2022", datetime(2022, 9, 9, 12, 30, tzinfo=UTC)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ],
)
def test_session_times_parse(text: str, expected: datetime) -> None:
    assert parse_session_time(text) == expected


@pytest.mark.parametrize(
    "text", ["yesterday", "1:56 pm on 8 Maytember, 2023", "13:10 pm on 1 May, 2023"]
)
def test_an_unreadable_session_time_is_an_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_session_time(text)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["session_1"][1].pop("dia_id"),
            r"bad\.json: conversation 0 \(bad\): session_1\[1\]\.dia_id: Field required",
        ),
        (
            lambda d: d.update(session_1_date_time="sometime in spring"),
            r"conversation 0 \(bad\): session_1_date_time: cannot read 'sometime in spring'",
        ),
        (lambda d: d.pop("session_1_date_time"), r"session_1_date_time: missing"),
        (lambda d: d["qa"][0].pop("question"), r"qa\[0\]\.question: Field required"),
        (lambda d: d["session_1"].append(dict(d["session_1"][0])), r"more than once: D1:1"),
        (lambda d: d.update(conversation=[1]), r"`conversation` must be an object"),
    ],
)
def test_a_malformed_file_names_the_file_the_conversation_and_the_field(
    tmp_path: Path, change: Callable[[dict[str, Any]], Any], message: str
) -> None:
    data = flat()
    change(data)
    with pytest.raises(RecallDataError, match=message):
        load_conversations(write(tmp_path, "bad.json", data))


def test_a_file_that_is_not_json_or_not_there_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(RecallDataError, match=r"broken\.json: not a readable JSON file"):
        load_conversations(broken)
    with pytest.raises(RecallDataError, match="no such file"):
        load_conversations(tmp_path / "missing.json")
    with pytest.raises(RecallDataError, match="no session_N|no `session_N` lists"):
        load_conversations(write(tmp_path, "empty.json", {"qa": []}))


def test_the_shipped_dataset_is_big_enough_and_every_evidence_id_exists() -> None:
    import memoir

    conversations = load_conversations(Path(memoir.__file__).parent / "data" / "recall_eval")
    assert len(conversations) >= 4
    questions = [q for c in conversations for q in c.qa]
    assert len(questions) >= 150
    for c in conversations:
        assert 4 <= len(c.sessions) <= 6 and 60 <= len(c.turns) <= 120, c.conversation_id
        ids = {t.dia_id for t in c.turns}
        for q in c.qa:
            assert q.evidence and set(q.evidence) <= ids, (c.conversation_id, q.question)


# ----- scoring ---------------------------------------------------------------------------------


def test_recall_any_and_all_count_the_ids_of_the_top_k_items() -> None:
    ranking = [{"a"}, {"b", "c"}, set(), {"d"}]
    assert recall_at(ranking, {"c", "d"}, 1) == (False, False)
    assert recall_at(ranking, {"c", "d"}, 2) == (True, False)
    assert recall_at(ranking, {"c", "d"}, 3) == (True, False)
    assert recall_at(ranking, {"c", "d"}, 4) == (True, True)
    assert recall_at(ranking, {"c", "d"}, 25) == (True, True)
    assert recall_at([], {"a"}, 5) == (False, False)
    with pytest.raises(ValueError):
        recall_at(ranking, set(), 5)


def question(category: str, evidence: set[str], memoir: list[set[str]]) -> QuestionResult:
    naive = [frozenset({e}) for e in sorted(evidence)]  # the naive ranking always finds it all
    return QuestionResult(
        "c",
        "q",
        category,
        tuple(sorted(evidence)),
        {"memoir": tuple(frozenset(i) for i in memoir), "naive": tuple(naive)},
        {"memoir": 0.02, "naive": 0.01},
    )


def test_scores_per_category_and_overall_on_hand_made_rankings() -> None:
    results = [
        question("a", {"x"}, [{"x"}]),  # found at 1
        question("a", {"x", "y"}, [{"z"}, {"x"}, {"q"}, {"r"}, {"s"}, {"y"}]),  # any@2, all@6
        question("b", {"y"}, [{"z"}]),  # never
    ]
    conversation = ConversationResult("c", 1, 3, questions=results, skipped=1)
    conversation.ingest_seconds = {"memoir": [0.1, 0.3, 0.2], "naive": [0.01, 0.02, 0.03]}
    report = RecallReport((1, 5, 10), 8, [conversation])
    memoir = report.by_category("memoir")
    assert report.categories() == ["a", "b"]
    assert memoir["a"].any == {1: 0.5, 5: 1.0, 10: 1.0}
    assert memoir["a"].all == {1: 0.5, 5: 0.5, 10: 1.0}
    assert memoir["b"].any == {1: 0.0, 5: 0.0, 10: 0.0}
    assert report.overall("memoir").any[5] == pytest.approx(2 / 3)
    assert report.overall("naive").all[1] == pytest.approx(2 / 3)
    assert report.overall("naive").all[5] == 1.0
    assert (report.p50("memoir", "ingest"), report.p50("naive", "query")) == (0.2, 0.01)
    figures = report.to_dict()
    assert figures["skipped_no_evidence"] == 1
    assert figures["overall"]["memoir"]["recall_all"]["10"] == pytest.approx(2 / 3)
    assert score([], "memoir", (5,)).any == {5: None}


def test_k_parses_from_a_comma_list() -> None:
    assert parse_ks("25, 5,10,5") == (5, 10, 25)
    for bad in ("", "0,5", "five"):
        with pytest.raises(ValueError):
            parse_ks(bad)


# ----- the naive baseline and the engine -------------------------------------------------------


def test_the_naive_baseline_ranks_the_turn_a_question_repeats_first(
    local_embedder: LocalEmbedder,
) -> None:
    index = NaiveIndex(local_embedder)
    [conversation] = load_conversations(TINY)
    for turn in conversation.turns:
        index.add(turn.dia_id, f"{turn.speaker}: {turn.text}")
    exact = "Tom: My sister Clara lives in Porto, she watched it on TV."
    ranking = index.search(exact, 5)
    assert ranking[0] == frozenset({"D2:3"})
    assert len(ranking) == 5 and len(set(ranking)) == 5
    assert len(index.search(exact, 25)) == 8


@pytest.fixture
def new_user(make_user: Callable[..., Any]) -> Callable[[str, str], Any]:
    async def make(name: str, timezone: str) -> UserProfile:
        profile: UserProfile = await make_user(name, timezone=timezone)
        return profile

    return make


async def test_the_tiny_conversation_runs_through_the_engine_and_the_turn_activities(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    local_embedder: LocalEmbedder,
    new_user: Callable[[str, str], Any],
) -> None:
    engine = make_engine(offline)
    deps = Deps(engine.settings, stores, offline, ToolRegistry({}))
    stages = TurnStages(
        engine=engine,
        assemble=ContextActivities(deps).assemble_context,
        remember=RememberActivities(deps).remember_turn,
        interactions=stores.interactions,
    )
    conversations = load_conversations(TINY)
    steps: list[str] = []
    users: list[UserProfile] = []

    async def fresh_user(name: str, timezone: str) -> UserProfile:
        users.append(await new_user(name, timezone))
        return users[-1]

    report = await run_recall_eval(
        stages, conversations, fresh_user, local_embedder, (1, 5, 25), steps.append
    )
    [result] = report.conversations
    assert steps.count("turn") == 8 and steps.count("question") == 5
    assert (len(result.questions), result.skipped, result.unknown_evidence) == (4, 1, [])
    assert sum(result.hotpath.values()) == sum(result.capture.values()) == 8
    assert len(result.ingest_seconds["memoir"]) == len(result.ingest_seconds["naive"]) == 8
    for system in SYSTEMS:
        overall = report.overall(system)
        for value in (*overall.any.values(), *overall.all.values()):
            assert value is not None and 0.0 <= value <= 1.0
        query = report.p50(system, "query")
        assert query is not None and query > 0
    known = {t.dia_id for t in conversations[0].turns}
    for q in result.questions:
        assert all(item <= known for item in q.rankings["memoir"])
        assert len(q.rankings["naive"]) == min(25, 8)
    history = await stores.interactions.recent_messages(users[0].user_id, "session-2", limit=10)
    assert [m.content for m in history][0] == "Tom: How was the marathon in Lisbon last weekend?"
    assert result.memories["record"] == 8  # every turn kept as a message record
    assert all(any(q.rankings["memoir"]) for q in result.questions)  # records cite their turn
    json.dumps(report.to_dict())  # serialisable as --json prints it


def test_cli_eval_recall_prints_json_and_a_bad_file_exits_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "recall", str(TINY), "--json", "--k", "1,5"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert figures["ks"] == [1, 5] and figures["questions"] == 4
    assert figures["skipped_no_evidence"] == 1
    assert 0.0 <= figures["overall"]["naive"]["recall_any"]["5"] <= 1.0
    bad = write(tmp_path, "bad.json", flat(session_1_date_time="soon"))
    failed = CliRunner().invoke(app, ["eval", "recall", str(bad)])
    assert failed.exit_code == 1
    assert "session_1_date_time" in failed.output
    assert CliRunner().invoke(app, ["eval", "recall", str(TINY), "--k", "0"]).exit_code == 2


def test_a_shared_photo_caption_counts_as_said_and_an_image_only_turn_loads() -> None:
    turn = DialogTurn.model_validate(
        {"speaker": "Maya", "dia_id": "D1:3", "text": "", "blip_caption": "a dog on a beach"}
    )
    assert turn.said == "[shares a photo: a dog on a beach]"
    plain = DialogTurn.model_validate({"speaker": "Maya", "dia_id": "D1:4", "text": "hi"})
    assert plain.said == "hi"
