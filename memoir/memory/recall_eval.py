"""The long-conversation recall eval (`memoir eval recall`): evidence recall@k of the memory path.

Input, the common long-conversation format: a JSON list of conversations (or one conversation,
or a folder of such files). A conversation has `session_N` lists of turns
`{speaker, dia_id, text}`, `session_N_date_time` strings ("1:56 pm on 8 May, 2023") and `qa`
items `{question, answer, evidence: [dia_id, …], category}`; the sessions sit either at the top
level of the object or, LoCoMo style, under its `conversation` key (with `sample_id` beside it).

Each conversation is a fresh user. Every turn, whoever says it, is that user's message
("{speaker}: {text}", the conversation is the user's life, with the speaker as the message's
`speaker_name`) and goes through what a real turn
calls around memory (`TurnStages`): stage 1 (assemble the context), stage 2 (the hot path), stage
3 (memory context), stage 12 (the remember stage's history and message records, then episodic
capture), at the
session's time plus `TURN_SPACING` per turn, one thread per session, the `dia_id` as the
`message_id` (made id-safe when needed). Then every question goes through `memory_context`, the
day after the last session, with its top-n raised to the largest k (a parameter of the call, not
a change for turns), and a retrieved item (fact, episode or message record) counts through its
`source_message_ids`.

Scores per question (questions with no evidence in the conversation are skipped and counted):
recall_any@k when at least one evidence `dia_id` is among the sources of the top k items,
recall_all@k when all of them are. The naive baseline embeds every raw turn (the same text) with
the local MiniLM and ranks them by cosine, one turn per item.
"""

from __future__ import annotations

import calendar
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from memoir.embeddings import Embedder
from memoir.memory.context_items import RECORD, ContextItem
from memoir.memory.engine import MemoryEngine
from memoir.memory.evaluation import NewUser, remember_request, turn_request
from memoir.models import (
    IncomingMessage,
    RememberRequest,
    TurnContext,
    TurnRequest,
    UserProfile,
)
from memoir.stores.interactions import InteractionStore

__all__ = [
    "DEFAULT_KS",
    "QUESTION_DELAY",
    "SYSTEMS",
    "TURN_SPACING",
    "Conversation",
    "ConversationResult",
    "DialogTurn",
    "NaiveIndex",
    "QAItem",
    "QuestionResult",
    "RecallDataError",
    "RecallReport",
    "RecallScore",
    "Session",
    "System",
    "TurnStages",
    "ask",
    "ingest_turn",
    "load_conversations",
    "parse_ks",
    "parse_session_time",
    "recall_at",
    "run_conversation",
    "run_recall_eval",
    "score",
]

System = Literal["memoir", "naive"]
SYSTEMS: tuple[System, ...] = ("memoir", "naive")
Step = Literal["turn", "question"]
Ranking = tuple[frozenset[str], ...]  # each retrieved item's dia_ids, best first

DEFAULT_KS = (5, 10, 25)
TURN_SPACING = timedelta(seconds=30)  # turn i of a session is at its time + i × this
QUESTION_DELAY = timedelta(days=1)  # questions are asked this long after the last turn
QUESTION_THREAD = "recall-questions"
TIME_FORMAT_EXAMPLE = "1:56 pm on 8 May, 2023"

# ----- the format ------------------------------------------------------------------------------


class RecallDataError(ValueError):
    """A malformed conversation file: the message names the file, conversation and field."""


class DialogTurn(BaseModel):
    """One turn of a session; a shared image's caption (`blip_caption`) counts as said."""

    model_config = ConfigDict(extra="ignore")

    speaker: str = Field(min_length=1)
    dia_id: str = Field(min_length=1)
    text: str = ""
    blip_caption: str | None = None

    @property
    def said(self) -> str:
        """The text, plus '[shares a photo: …]' when the turn shared an image."""
        if not self.blip_caption:
            return self.text
        return f"{self.text} [shares a photo: {self.blip_caption}]".strip()


class QAItem(BaseModel):
    """One question with the turns that answer it; the category may be a number or a name."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    answer: Any = None
    evidence: list[str] = Field(default_factory=list)
    category: str = "uncategorized"

    @field_validator("category", mode="before")
    @classmethod
    def _category_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("evidence", mode="before")
    @classmethod
    def _split_evidence(cls, value: Any) -> Any:
        """Some files put several ids in one string ("D8:6; D9:17"): one id per entry."""
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for item in value:
            out.extend(re.split(r"[;,\s]+", item) if isinstance(item, str) else [item])
        return [item for item in out if item != ""]


@dataclass(frozen=True)
class Session:
    """`session_N`: its number, when it took place (UTC) and its turns."""

    number: int
    at: datetime
    turns: tuple[DialogTurn, ...]


@dataclass(frozen=True)
class Conversation:
    """One conversation (one fresh user) and its questions."""

    conversation_id: str
    source: str
    sessions: tuple[Session, ...]
    qa: tuple[QAItem, ...]
    speakers: tuple[str, ...] = ()

    @property
    def turns(self) -> list[DialogTurn]:
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def last_turn_at(self) -> datetime:
        last = max(self.sessions, key=lambda s: s.at)
        return last.at + max(len(last.turns) - 1, 0) * TURN_SPACING

    def message_ids(self) -> dict[str, str]:
        """dia_id → the message id it is ingested under (`message_id` allows no ':', '/', space)."""
        ids: dict[str, str] = {}
        used: set[str] = set()
        for turn in self.turns:
            safe = re.sub(r"[\s:/]+", "-", turn.dia_id.strip()) or "turn"
            candidate, n = safe, 1
            while candidate in used:
                n += 1
                candidate = f"{safe}-{n}"
            ids[turn.dia_id] = candidate
            used.add(candidate)
        return ids


_TIME = re.compile(
    r"^\s*(\d{1,2})[:.](\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*$",
    re.I,
)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name} | {
    name.lower(): i for i, name in enumerate(calendar.month_abbr) if name
}
_MONTHS["sept"] = 9


def parse_session_time(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" (or ISO 8601) → an aware datetime, UTC unless it says else."""
    match = _TIME.match(text)
    if match is None:
        return _iso_time(text)
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        raise ValueError(f"unknown month {month_name!r} in {text!r}")
    if not 1 <= int(hour) <= 12:
        raise ValueError(f"hour {hour} is not on a 12-hour clock in {text!r}")
    hour24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), hour24, int(minute), tzinfo=UTC)


def _iso_time(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time (expected like {TIME_FORMAT_EXAMPLE!r} or ISO 8601)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# ----- loading ---------------------------------------------------------------------------------

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_TURNS = TypeAdapter(list[DialogTurn])
_QA = TypeAdapter(list[QAItem])


def load_conversations(path: Path) -> list[Conversation]:
    """Every conversation in a file (a list of them, or one) or a folder of `.json` files."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise RecallDataError(f"{path}: no .json files in this folder")
    elif path.exists():
        files = [path]
    else:
        raise RecallDataError(f"{path}: no such file or folder")
    conversations = [c for file in files for c in _load_file(file)]
    _check_unique_ids(conversations)
    return conversations


def _load_file(file: Path) -> list[Conversation]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecallDataError(f"{file}: not a readable JSON file: {error}") from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise RecallDataError(f"{file}: holds no conversation")
    default = file.stem if len(items) == 1 else None
    return [_conversation(item, file, index, default) for index, item in enumerate(items)]


def _check_unique_ids(conversations: Sequence[Conversation]) -> None:
    seen: dict[str, str] = {}
    for c in conversations:
        if c.conversation_id in seen:
            raise RecallDataError(
                f"{c.source}: conversation id {c.conversation_id!r} is also used in "
                f"{seen[c.conversation_id]}"
            )
        seen[c.conversation_id] = c.source


def _conversation(raw: Any, file: Path, index: int, default_id: str | None) -> Conversation:
    where = f"{file}: conversation {index}"
    if not isinstance(raw, dict):
        raise RecallDataError(f"{where}: expected an object, got {type(raw).__name__}")
    body = raw.get("conversation", raw)
    if not isinstance(body, dict):
        raise RecallDataError(f"{where}: `conversation` must be an object")
    cid = str(raw.get("sample_id") or raw.get("id") or default_id or f"{file.stem}-{index}")
    where = f"{where} ({cid})"
    sessions = _sessions(body, where)
    qa = _validated(_QA, raw.get("qa", []), where, "qa")
    speakers = tuple(str(body[k]) for k in ("speaker_a", "speaker_b") if body.get(k))
    conversation = Conversation(cid, str(file), sessions, tuple(qa), speakers)
    _check_unique_turns(conversation, where)
    return conversation


def _sessions(body: Mapping[str, Any], where: str) -> tuple[Session, ...]:
    numbers = sorted(int(m.group(1)) for key in body if (m := _SESSION_KEY.match(key)))
    if not numbers:
        raise RecallDataError(f"{where}: no `session_N` lists")
    sessions = []
    for number in numbers:
        key = f"session_{number}"
        turns = _validated(_TURNS, body[key], where, key)
        when = body.get(f"{key}_date_time")
        if not isinstance(when, str):
            raise RecallDataError(
                f"{where}: {key}_date_time: missing (a string such as {TIME_FORMAT_EXAMPLE!r})"
            )
        try:
            at = parse_session_time(when)
        except ValueError as error:
            raise RecallDataError(f"{where}: {key}_date_time: {error}") from None
        sessions.append(Session(number, at, tuple(turns)))
    return tuple(sessions)


def _validated(adapter: TypeAdapter[Any], value: Any, where: str, name: str) -> Any:
    try:
        return adapter.validate_python(value)
    except ValidationError as error:
        first = error.errors()[0]
        loc = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise RecallDataError(f"{where}: {loc}: {first['msg']}{more}") from None


def _check_unique_turns(conversation: Conversation, where: str) -> None:
    counts = Counter(turn.dia_id for turn in conversation.turns)
    twice = sorted(dia for dia, n in counts.items() if n > 1)
    if twice:
        raise RecallDataError(f"{where}: dia_id used more than once: {', '.join(twice[:5])}")


# ----- scoring ---------------------------------------------------------------------------------


def recall_at(
    ranking: Sequence[Collection[str]], evidence: Collection[str], k: int
) -> tuple[bool, bool]:
    """(any, all): whether one / every evidence id is among the ids of the top `k` items."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    covered: set[str] = set()
    for item in ranking[:k]:
        covered.update(item)
    return bool(covered & wanted), wanted <= covered


@dataclass(frozen=True)
class QuestionResult:
    """One scored question: its evidence and each system's ranking and query time."""

    conversation_id: str
    question: str
    category: str
    evidence: tuple[str, ...]
    rankings: Mapping[System, Ranking]
    seconds: Mapping[System, float]

    def hits(self, system: System, k: int) -> tuple[bool, bool]:
        return recall_at(self.rankings[system], self.evidence, k)


@dataclass(frozen=True)
class RecallScore:
    """recall_any@k and recall_all@k over some questions (None when there are none)."""

    questions: int
    any: Mapping[int, float | None]
    all: Mapping[int, float | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "recall_any": {str(k): v for k, v in self.any.items()},
            "recall_all": {str(k): v for k, v in self.all.items()},
        }


def score(results: Sequence[QuestionResult], system: System, ks: Sequence[int]) -> RecallScore:
    """The recall of one system at each k over `results`."""
    n = len(results)

    def rate(k: int, part: int) -> float | None:
        return sum(r.hits(system, k)[part] for r in results) / n if n else None

    return RecallScore(n, {k: rate(k, 0) for k in ks}, {k: rate(k, 1) for k in ks})


def _p50(values: Iterable[float]) -> float | None:
    data = list(values)
    return statistics.median(data) if data else None


@dataclass
class ConversationResult:
    """What one conversation gave: scored questions, timings and what the engine stored."""

    conversation_id: str
    sessions: int
    turns: int
    questions: list[QuestionResult] = field(default_factory=list)
    skipped: int = 0  # questions with no evidence in the conversation
    unknown_evidence: list[str] = field(default_factory=list)  # ids no turn has
    ingest_seconds: dict[System, list[float]] = field(
        default_factory=lambda: {s: [] for s in SYSTEMS}
    )
    memories: dict[str, int] = field(default_factory=dict)  # stored memories by kind, records
    hotpath: Counter[str] = field(default_factory=Counter)  # hot-path actions
    capture: Counter[str] = field(default_factory=Counter)  # episodic-capture actions
    sourced_turns: int = 0  # turns that some stored memory cites
    evidence_stored: int = 0  # questions with an evidence turn cited by some memory

    def ingest_total(self, system: System) -> float:
        return sum(self.ingest_seconds[system])

    def p50(self, system: System, what: Literal["ingest", "query"]) -> float | None:
        if what == "ingest":
            return _p50(self.ingest_seconds[system])
        return _p50(q.seconds[system] for q in self.questions)

    def to_dict(self, ks: Sequence[int]) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "sessions": self.sessions,
            "turns": self.turns,
            "questions": len(self.questions),
            "skipped_no_evidence": self.skipped,
            "unknown_evidence": self.unknown_evidence,
            "memories": self.memories,
            "hotpath": dict(self.hotpath),
            "capture": dict(self.capture),
            "sourced_turns": self.sourced_turns,
            "questions_with_evidence_in_a_memory": self.evidence_stored,
            "timings": {s: self._timings(s) for s in SYSTEMS},
            "recall": {s: score(self.questions, s, ks).to_dict() for s in SYSTEMS},
        }

    def _timings(self, system: System) -> dict[str, float | None]:
        return {
            "ingest_total_s": self.ingest_total(system),
            "ingest_p50_s": self.p50(system, "ingest"),
            "query_p50_s": self.p50(system, "query"),
        }


@dataclass
class RecallReport:
    """Every conversation's results; recall per category and overall, per system."""

    ks: tuple[int, ...]
    turn_top_n: int  # how many memories a real turn's context shows (MEMORY_CONTEXT_TOPN)
    conversations: list[ConversationResult]

    @property
    def questions(self) -> list[QuestionResult]:
        return [q for c in self.conversations for q in c.questions]

    @property
    def skipped(self) -> int:
        return sum(c.skipped for c in self.conversations)

    def categories(self) -> list[str]:
        """The categories in the order they first appear."""
        return list(dict.fromkeys(q.category for q in self.questions))

    def by_category(self, system: System) -> dict[str, RecallScore]:
        questions = self.questions
        return {
            category: score([q for q in questions if q.category == category], system, self.ks)
            for category in self.categories()
        }

    def overall(self, system: System) -> RecallScore:
        return score(self.questions, system, self.ks)

    def p50(self, system: System, what: Literal["ingest", "query"]) -> float | None:
        if what == "ingest":
            return _p50(t for c in self.conversations for t in c.ingest_seconds[system])
        return _p50(q.seconds[system] for q in self.questions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ks": list(self.ks),
            "turn_top_n": self.turn_top_n,
            "questions": len(self.questions),
            "skipped_no_evidence": self.skipped,
            "overall": {s: self.overall(s).to_dict() for s in SYSTEMS},
            "categories": {
                s: {c: r.to_dict() for c, r in self.by_category(s).items()} for s in SYSTEMS
            },
            "timings": {
                s: {"ingest_p50_s": self.p50(s, "ingest"), "query_p50_s": self.p50(s, "query")}
                for s in SYSTEMS
            },
            "conversations": [c.to_dict(self.ks) for c in self.conversations],
        }


def parse_ks(text: str) -> tuple[int, ...]:
    """ "5,10,25" → (5, 10, 25): positive whole numbers, sorted, each once."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"k must be whole numbers separated by commas, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise ValueError(f"k must be positive whole numbers, got {text!r}")
    return tuple(ks)


# ----- the naive baseline ----------------------------------------------------------------------


class NaiveIndex:
    """Raw turns embedded one by one; a query ranks them by cosine (exact, numpy)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._ids: list[str] = []
        self._rows: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def add(self, dia_id: str, text: str) -> None:
        self._ids.append(dia_id)
        self._rows.append(self._unit(self.embedder.embed([text])[0]))
        self._matrix = None

    def search(self, text: str, k: int) -> Ranking:
        if not self._ids:
            return ()
        if self._matrix is None:
            self._matrix = np.vstack(self._rows)
        scores = self._matrix @ self._unit(self.embedder.embed([text])[0])
        order = np.argsort(-scores, kind="stable")[:k]
        return tuple(frozenset({self._ids[int(i)]}) for i in order)

    @staticmethod
    def _unit(vector: Sequence[float]) -> np.ndarray:
        array = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(array))
        return array / norm if norm else array


# ----- running ---------------------------------------------------------------------------------

Assemble = Callable[[IncomingMessage], Awaitable[TurnContext]]
Remember = Callable[[RememberRequest], Awaitable[list[str]]]
OnStep = Callable[[Step], None]


@dataclass(frozen=True)
class TurnStages:
    """What a real turn calls around memory, given by the composition root (the CLI wires the
    activities' own functions): stage 1 `assemble` (ASSEMBLE_CONTEXT), the engine's stages 2, 3
    and episodic capture, and stage 12's `remember` (REMEMBER_TURN: the interaction history).
    `interactions` is what the episodic-capture activity reads its recent messages from."""

    engine: MemoryEngine
    assemble: Assemble
    remember: Remember
    interactions: InteractionStore


def _since(start: float) -> float:
    return time.perf_counter() - start


async def _context(stages: TurnStages, message: IncomingMessage, at: datetime) -> TurnRequest:
    """Stage 1 as the activity does it, at `at` instead of the wall clock."""
    context = await stages.assemble(message)
    return turn_request(message, context.model_copy(update={"now": at}))


async def ingest_turn(
    stages: TurnStages, message: IncomingMessage, at: datetime
) -> tuple[str, str]:
    """One turn through the memory path of a real turn; (hot-path action, capture action)."""
    engine = stages.engine
    turn = await _context(stages, message, at)
    hot = await engine.run_hotpath(turn)  # stage 2
    await engine.run_context(turn)  # stage 3 (a turn retrieves, whatever it says)
    request = remember_request(turn, reply="")
    await stages.remember(request)  # stage 12: interaction history
    recent = await stages.interactions.recent_messages(
        message.user_id, message.thread_id, limit=2 * engine.settings.episodic_window_n
    )
    captured = await engine.run_capture(request, recent, None, at)  # as the activity, at `at`
    return hot.action, captured.action


async def ask(
    stages: TurnStages, message: IncomingMessage, at: datetime, top_n: int
) -> list[ContextItem]:
    """What `memory_context` chooses for a question, best first, `top_n` of them at most."""
    engine = stages.engine
    turn = await _context(stages, message, at)
    settings = engine.settings.model_copy(
        update={
            "memory_context_topn": top_n,
            "memory_context_topk": max(engine.settings.memory_context_topk, top_n),
        }
    )
    return (await engine.run_context(turn, settings=settings)).selected


def _as_dia_ids(items: Sequence[ContextItem], dia_of: Mapping[str, str]) -> Ranking:
    return tuple(
        frozenset(dia_of[m] for m in item.source_message_ids if m in dia_of) for item in items
    )


@dataclass
class _Run:
    """One conversation under way."""

    stages: TurnStages
    conversation: Conversation
    user: UserProfile
    naive: NaiveIndex
    ks: tuple[int, ...]
    on_step: OnStep | None
    result: ConversationResult
    message_ids: dict[str, str] = field(default_factory=dict)

    @property
    def dia_of(self) -> dict[str, str]:
        return {mid: dia for dia, mid in self.message_ids.items()}

    def step(self, what: Step) -> None:
        if self.on_step is not None:
            self.on_step(what)


async def _ingest(run: _Run) -> None:
    for session in run.conversation.sessions:
        thread = f"session-{session.number}"
        for index, dialog in enumerate(session.turns):
            at = session.at + index * TURN_SPACING
            message = IncomingMessage(
                user_id=run.user.user_id,
                thread_id=thread,
                message_id=run.message_ids[dialog.dia_id],
                text=f"{dialog.speaker}: {dialog.said}",
                received_at=at,
                speaker_name=dialog.speaker,
            )
            start = time.perf_counter()
            hot, captured = await ingest_turn(run.stages, message, at)
            run.result.ingest_seconds["memoir"].append(_since(start))
            run.result.hotpath[hot] += 1
            run.result.capture[captured] += 1
            start = time.perf_counter()
            run.naive.add(dialog.dia_id, message.text)
            run.result.ingest_seconds["naive"].append(_since(start))
            run.step("turn")


async def _stored(run: _Run) -> None:
    """What the engine kept: memories by kind, message records, and which turns memories cite."""
    engine = run.stages.engine
    memories = await engine.memories.list(run.user.user_id, limit=100_000)
    run.result.memories = dict(Counter(m.kind.value for m in memories))
    records = await engine.records.count(run.user.user_id)
    if records:
        run.result.memories[RECORD] = records
    cited = {s for m in memories for s in m.source_message_ids}
    dia_of = run.dia_of
    run.result.sourced_turns = sum(1 for mid in cited if mid in dia_of)
    stored = {dia_of[mid] for mid in cited if mid in dia_of}
    run.result.evidence_stored = sum(1 for q in run.result.questions if set(q.evidence) & stored)


async def _question(run: _Run, index: int, item: QAItem, at: datetime) -> None:
    known = set(run.message_ids)
    evidence = tuple(dict.fromkeys(e for e in item.evidence if e in known))
    run.result.unknown_evidence.extend(e for e in item.evidence if e not in known)
    if not evidence:
        run.result.skipped += 1
        run.step("question")
        return
    top_n = max(run.ks)
    message = IncomingMessage(
        user_id=run.user.user_id,
        thread_id=QUESTION_THREAD,
        message_id=f"q{index}",
        text=item.question,
        received_at=at,
    )
    start = time.perf_counter()
    chosen = await ask(run.stages, message, at, top_n)
    memoir_s = _since(start)
    start = time.perf_counter()
    naive = run.naive.search(item.question, top_n)
    naive_s = _since(start)
    run.result.questions.append(
        QuestionResult(
            conversation_id=run.conversation.conversation_id,
            question=item.question,
            category=item.category,
            evidence=evidence,
            rankings={"memoir": _as_dia_ids(chosen, run.dia_of), "naive": naive},
            seconds={"memoir": memoir_s, "naive": naive_s},
        )
    )
    run.step("question")


async def run_conversation(
    stages: TurnStages,
    conversation: Conversation,
    user: UserProfile,
    naive_embedder: Embedder,
    ks: Sequence[int] = DEFAULT_KS,
    on_step: OnStep | None = None,
) -> ConversationResult:
    """Ingest every turn as `user` (Memoir and naive), then ask every question of both."""
    result = ConversationResult(
        conversation.conversation_id, len(conversation.sessions), len(conversation.turns)
    )
    run = _Run(
        stages,
        conversation,
        user,
        NaiveIndex(naive_embedder),
        tuple(ks),
        on_step,
        result,
        conversation.message_ids(),
    )
    await _ingest(run)
    asked_at = conversation.last_turn_at + QUESTION_DELAY
    for index, item in enumerate(conversation.qa):
        await _question(run, index, item, asked_at)
    await _stored(run)
    return result


async def run_recall_eval(
    stages: TurnStages,
    conversations: Sequence[Conversation],
    new_user: NewUser,
    naive_embedder: Embedder,
    ks: Sequence[int] = DEFAULT_KS,
    on_step: OnStep | None = None,
    on_conversation: Callable[[ConversationResult], None] | None = None,
) -> RecallReport:
    """Each conversation with a fresh user (UTC), in order."""
    results = []
    for conversation in conversations:
        user = await new_user(f"Recall {conversation.conversation_id}", "UTC")
        result = await run_conversation(stages, conversation, user, naive_embedder, ks, on_step)
        results.append(result)
        if on_conversation is not None:
            on_conversation(result)
    return RecallReport(tuple(ks), stages.engine.settings.memory_context_topn, results)
