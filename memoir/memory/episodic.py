"""Stage 12, episodic capture (seeds 001, 003): an episode from a turn's outcome, or a skip.

In order, first reason wins:
1. routine turn: no outcome (no action ran, no recap asked for: `asks_for_recap`, a question or
   request to the assistant, never a statement or a relayed line "Maya: … last time …") → skip,
   before any model call;
2. cooldown: fewer than `EPISODIC_COOLDOWN_TURNS` turns and fewer than
   `EPISODIC_COOLDOWN_MINUTES` minutes since the last episode → skip;
3. daily cap: `EPISODIC_MAX_PER_DAY` episodes already on the user's local day → skip;
4. the summarizer (`EpisodicSummary`, last `EPISODIC_WINDOW_N` user/assistant messages) says it
   is not notable → skip;
5. novelty = 1 - the best similarity to recent episodes (dated within `NOVELTY_LOOKBACK_DAYS`).
   Below `EPISODIC_NOVELTY_MIN`, the similar episode is merged into when it was updated within
   `EPISODIC_MERGE_WINDOW_HOURS`, else the turn is skipped as a repeat; otherwise a new episode
   is created.

The summary reads exactly "On {YYYY-MM-DD} (W{WW}, {YYYY}) we discussed {topic}. Approach:
{approach}." (the topic in words, "booking the dentist", never the request quoted) with the
date, ISO week and ISO year of the user's local day (also stored as
`date_iso`, `week`, `year`, so "last week" can filter on them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel

from memoir.embeddings import Embedder
from memoir.llm.offline_memory import episodic_offline
from memoir.memory.episodic_state import (
    EpisodicState,
    EpisodicStateStore,
    cooldown_reason,
    daily_cap_reason,
)
from memoir.memory.events import (
    EPISODIC_CREATE,
    EPISODIC_DECIDE,
    EPISODIC_MERGE,
    EPISODIC_SKIP,
    EventLog,
)
from memoir.memory.llm_calls import ask, embed_one, episode_messages, stable_memory_id
from memoir.memory.models import Memory, MemoryKind
from memoir.memory.requests import EmailBrief, EpisodeAction, EpisodeRequest
from memoir.memory.schemas import EpisodicSummary
from memoir.memory.speakers import message_speaker
from memoir.memory.timephrases import asks_for_recap
from memoir.models import ExecutionResult, RecentMessage, RememberRequest
from memoir.settings import Settings
from memoir.stores.memories import MemoryStore
from memoir.text import one_line, second_person

__all__ = [
    "EPISODE_CATEGORY",
    "NOVELTY_LOOKBACK_DAYS",
    "NOVELTY_TOPK",
    "CaptureResult",
    "DateBucket",
    "date_bucket",
    "describe_action",
    "episode_sentence",
    "episodic_capture",
    "merge_phrases",
    "novelty",
    "episode_request",
    "outcome_signals",
]

EPISODE_CATEGORY = "episode"
NOVELTY_TOPK = 5  # the most similar recent episodes compared with a new one ...
NOVELTY_LOOKBACK_DAYS = 7  # ... "recent": dated within this many days of the user's today
PART_LIMIT = 240  # characters of a topic or an approach

CaptureAction = Literal["skip", "merge", "create"]


@dataclass(frozen=True)
class DateBucket:
    """The user's local day of an episode, its ISO week and ISO year."""

    date_iso: date
    week: int
    year: int


@dataclass
class CaptureResult:
    """What capture did: skip (with the reason), merge or create, and the episode written."""

    action: CaptureAction
    reason: str
    memory: Memory | None = None
    replaced: Memory | None = None
    novelty: float | None = None
    events: list[str] = field(default_factory=list)


def date_bucket(now: datetime, timezone: str) -> DateBucket:
    """The date bucket of `now` in the user's timezone."""
    local = now.astimezone(ZoneInfo(timezone)).date()
    iso = local.isocalendar()
    return DateBucket(local, iso.week, iso.year)


def _part(text: str) -> str:
    return one_line(text, PART_LIMIT).strip().rstrip(".!;:, ").strip() or "a short exchange"


def episode_sentence(bucket: DateBucket, topic: str, approach: str) -> str:
    """ "On 2025-01-15 (W03, 2025) we discussed {topic}. Approach: {approach}." """
    return (
        f"On {bucket.date_iso.isoformat()} (W{bucket.week:02d}, {bucket.year}) we discussed "
        f"{_part(topic)}. Approach: {_part(approach)}."
    )


def episode_text(topic: str, approach: str) -> str:
    """What an episode's vector embeds: its content without the date (dates are metadata)."""
    return f"We discussed {_part(topic)}. Approach: {_part(approach)}."


def novelty(max_similarity: float | None) -> float:
    """1 - the best similarity to a past episode (1.0 when there is none)."""
    return 1.0 if max_similarity is None else max(0.0, 1.0 - max_similarity)


def merge_phrases(older: str, newer: str, joiner: str) -> str:
    """Two topics or approaches as one: the older one, then the newer unless already said."""
    old, new = _part(older), _part(newer)
    if new.casefold() in old.casefold():
        return old
    if old.casefold() in new.casefold():
        return new
    return f"{old}{joiner}{new}"


def _local(value: Any, timezone: str) -> str:
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        return f"{moment:%Y-%m-%d %H:%M}"
    return f"{moment.astimezone(ZoneInfo(timezone)):%Y-%m-%d %H:%M}"


def describe_action(result: ExecutionResult, timezone: str) -> str:
    """One executed step in the past tense, with absolute local times (no "today")."""
    args: dict[str, Any] = {**result.args, **result.data}
    cap = result.capability
    label = str(args.get("title") or args.get("text") or args.get("query") or "it")
    if not result.success:
        why = one_line(result.error or result.summary or "unknown error", 160)
        return f"{cap} failed: {why}"
    if cap == "reminders.create":
        text = f"set a reminder to {second_person(str(args.get('text', label)))}"
        return text + (f" for {_local(args['due_at'], timezone)}" if args.get("due_at") else "")
    if cap == "reminders.complete":
        return f"marked the reminder “{label}” as done"
    if cap == "reminders.delete":
        return (
            "deleted all your reminders" if args.get("all") else f"deleted the reminder “{label}”"
        )
    if cap == "reminders.list":
        return "listed your reminders"
    if cap == "email.send":
        text = f"sent an email to {args.get('to', 'them')}"
        return text + (
            f" about “{one_line(str(args['subject']), 80)}”" if args.get("subject") else ""
        )
    if cap == "calendar.schedule":
        text = f"scheduled “{label}”"
        return text + (f" for {_local(args['start'], timezone)}" if args.get("start") else "")
    if cap == "calendar.update":
        return f"moved “{label}”" + (
            f" to {_local(args['start'], timezone)}" if args.get("start") else ""
        )
    if cap == "calendar.cancel":
        return f"cancelled “{label}”"
    if cap == "calendar.availability":
        return "checked your calendar"
    return one_line(result.summary, 200) or f"ran {cap}"


def outcome_signals(request: RememberRequest) -> list[str]:
    """What happened in the turn that is worth an episode: actions, or a recap asked for."""
    signals = [f"{r.capability}: {'ok' if r.success else 'failed'}" for r in request.results]
    speaker, text = message_speaker(request.message)
    if speaker is None and asks_for_recap(text):
        signals.append("recap asked for")
    return signals


def episode_request(
    request: RememberRequest, recent: Sequence[RecentMessage], timezone: str, window: int
) -> EpisodeRequest:
    """The summarizer's question: the last `window` user/assistant messages, status, actions,
    reply, and the request."""
    conversation = [m for m in recent if m.role in ("user", "assistant")][-window:]
    actions = [
        EpisodeAction(ok=r.success, capability=r.capability, text=describe_action(r, timezone))
        for r in request.results
    ]
    email = request.message.email
    brief = (
        EmailBrief(author=email.author, subject=email.subject, body=email.body) if email else None
    )
    return EpisodeRequest(
        conversation=conversation,
        status=request.status.value,
        actions=actions,
        reply=request.reply,
        request=request.message.text,
        email=brief,
    )


async def episodic_capture(
    request: RememberRequest,
    *,
    recent: Sequence[RecentMessage],
    timezone: str,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    states: EpisodicStateStore,
    now: datetime,
) -> CaptureResult:
    """Stage 12 for one turn: skip, merge into a recent similar episode, or create one."""
    user_id = request.message.user_id
    log = EventLog(user_id, request.turn_id)
    state = await states.count_turn(user_id, request.turn_id)
    bucket = date_bucket(now, timezone)
    result = await _capture(
        request, recent, timezone, settings, llm, embedder, memories, state, bucket, log, now
    )
    if result.action != "skip":
        await states.record_write(user_id, now, bucket.date_iso, created=result.action == "create")
    result.events = list(log.names)
    return result


def _skip(log: EventLog, reason: str, **fields: Any) -> CaptureResult:
    log.emit(EPISODIC_SKIP, reason=reason, **fields)
    return CaptureResult("skip", reason, novelty=fields.get("novelty"))


async def _capture(
    request: RememberRequest,
    recent: Sequence[RecentMessage],
    timezone: str,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    state: EpisodicState,
    bucket: DateBucket,
    log: EventLog,
    now: datetime,
) -> CaptureResult:
    user_id = request.message.user_id
    signals = outcome_signals(request)
    minutes = (
        round((now - state.last_created_at).total_seconds() / 60.0, 1)
        if state.last_created_at
        else None
    )
    log.emit(
        EPISODIC_DECIDE,
        signals=signals,
        status=request.status.value,
        turns_since_last=state.turns_since_last,
        minutes_since_last=minutes,
        day=bucket.date_iso.isoformat(),
    )
    if not signals:
        return _skip(log, "routine turn: no outcome (no action, no recap)")
    cooldown = cooldown_reason(
        state,
        now,
        turns=settings.episodic_cooldown_turns,
        minutes=settings.episodic_cooldown_minutes,
    )
    if cooldown:
        return _skip(log, cooldown)
    cap = daily_cap_reason(state, bucket.date_iso, max_per_day=settings.episodic_max_per_day)
    if cap:
        return _skip(log, cap)
    question = episode_request(request, recent, timezone, settings.episodic_window_n)
    summary = await ask(
        llm, EpisodicSummary, question, render=episode_messages, offline=episodic_offline
    )
    if summary is None:
        return _skip(log, "no valid summary")
    if not summary.notable:
        return _skip(log, f"not notable: {one_line(summary.reasoning, 200)}")
    embedding = await embed_one(embedder, episode_text(summary.topic, summary.approach))
    lookback = bucket.date_iso - timedelta(days=NOVELTY_LOOKBACK_DAYS)
    hits = await memories.search(
        user_id,
        embedding,
        kind=MemoryKind.EPISODIC,
        top_k=NOVELTY_TOPK,
        filter={"date_iso": {"$gte": lookback.isoformat()}},
    )
    best = hits[0] if hits else None
    new_score = novelty(best[1] if best else None)
    similar = [(m, s) for m, s in hits if novelty(s) < settings.episodic_novelty_min]
    if similar:
        since = now - timedelta(hours=settings.episodic_merge_window_hours)
        recent_similar = [(m, s) for m, s in similar if m.updated_at >= since]
        if not recent_similar:
            old, score = similar[0]
            return _skip(
                log,
                f"a repeat of episode {old.memory_id} (novelty {novelty(score):.2f} < "
                f"{settings.episodic_novelty_min:.2f}) outside the merge window",
                novelty=new_score,
            )
        target, score = recent_similar[0]
        return await _merge(
            request, summary, target, score, bucket, embedder, memories, log, now, user_id
        )
    importance = 0.7 if request.results else 0.6
    topic, approach = _part(summary.topic), _part(summary.approach)
    memory = Memory(
        memory_id=stable_memory_id(request.turn_id, "episodic"),
        user_id=user_id,
        kind=MemoryKind.EPISODIC,
        category=EPISODE_CATEGORY,
        summary=episode_sentence(bucket, topic, approach),
        importance=importance,
        source_message_ids=[request.message.message_id],
        created_at=now,
        updated_at=now,
        date_iso=bucket.date_iso,
        week=bucket.week,
        year=bucket.year,
        metadata={
            "topic": topic,
            "approach": approach,
            "turn_ids": [request.turn_id],
            "status": request.status.value,
            "capabilities": sorted({r.capability for r in request.results}),
        },
    )
    stored = await memories.add(memory, embedding)
    log.emit(
        EPISODIC_CREATE,
        memory_id=stored.memory_id,
        novelty=new_score,
        date_iso=bucket.date_iso.isoformat(),
        summary=stored.summary,
    )
    return CaptureResult("create", "a notable, novel outcome", memory=stored, novelty=new_score)


def _episode_parts(memory: Memory) -> tuple[str, str]:
    """(topic, approach) of a stored episode (metadata, else read from its summary)."""
    topic, approach = memory.metadata.get("topic"), memory.metadata.get("approach")
    if isinstance(topic, str) and isinstance(approach, str):
        return topic, approach
    m = re.match(r"^On .*? we discussed (?P<t>.*?)\. Approach: (?P<a>.*?)\.?$", memory.summary)
    return (m.group("t"), m.group("a")) if m else (memory.summary, "")


async def _merge(
    request: RememberRequest,
    summary: EpisodicSummary,
    old: Memory,
    score: float,
    bucket: DateBucket,
    embedder: Embedder,
    memories: MemoryStore,
    log: EventLog,
    now: datetime,
    user_id: str,
) -> CaptureResult:
    """Fold this turn into a recent similar episode: a new record in today's date bucket (the
    store keeps date buckets as inserted), with both provenances; the old one is deleted."""
    old_topic, old_approach = _episode_parts(old)
    topic = merge_phrases(old_topic, summary.topic, "; ")
    approach = merge_phrases(old_approach, summary.approach, "; then ")
    text = episode_sentence(bucket, topic, approach)
    embedding = await embed_one(embedder, episode_text(topic, approach))
    merged = Memory(
        memory_id=stable_memory_id(request.turn_id, "episodic", "merge", old.memory_id),
        user_id=user_id,
        kind=MemoryKind.EPISODIC,
        category=old.category,
        summary=text,
        importance=max(old.importance, 0.7 if request.results else 0.6),
        pinned=old.pinned,
        source_message_ids=[*old.source_message_ids, request.message.message_id],
        created_at=old.created_at,
        updated_at=now,
        date_iso=bucket.date_iso,
        week=bucket.week,
        year=bucket.year,
        metadata={
            **old.metadata,
            "topic": _part(topic),
            "approach": _part(approach),
            "turn_ids": [*old.metadata.get("turn_ids", []), request.turn_id],
            "first_date_iso": old.metadata.get(
                "first_date_iso", old.date_iso.isoformat() if old.date_iso else None
            ),
            "replaces": old.memory_id,
        },
    )
    new = await memories.replace(old, merged, embedding)
    log.emit(
        EPISODIC_MERGE,
        memory_id=new.memory_id,
        merged_into=old.memory_id,
        similarity=score,
        novelty=novelty(score),
        summary=new.summary,
    )
    return CaptureResult(
        "merge", "similar to a recent episode", new, replaced=old, novelty=novelty(score)
    )
