"""Facts with deterministic keys: the table of `memoir/data/memory_facts.yaml`, applied.

`extract_facts(sentence)` tries each rule of the table (name, city, a pet's age, a partner,
likes, …) on one sentence or clause: its patterns capture slots, which are cleaned by kind
(a name, a place, an age, "what" said of the user) and rendered into the rule's summary, key
and slot. `read_summary` reads a third-person summary back (in the first person, through the
same rules), so summaries written earlier, or by another model, can be compared and composed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

from memoir.llm.offline_clauses import vocab

__all__ = [
    "Fact",
    "content_words",
    "extract_facts",
    "read_summary",
    "render",
    "sentences",
    "strip_lead",
    "third_person",
]

I = re.I  # noqa: E741
_REF = re.compile(r"\{(@?)([a-z_]+)(?:=([a-z_|]+))?\}")
_FIELD = re.compile(r"\{(\w+)(?:\|(\w+))?(?::(\w+))?\}")
_CUT = re.compile(
    r",|;|\s+(?:and|but|so|because|since|while|although|though|which|who)\s+|\s+[-—]\s+", I
)
_PRONOUNS = {"", "it", "that", "this", "them", "you", "yours"}
_THIRD = {"my": "their", "me": "them", "i": "they", "myself": "themselves", "mine": "theirs"}
_THIRD |= {"i'm": "they're", "i've": "they've", "am": "are"}


@dataclass
class Fact:
    """One stable fact: what it is about, how it reads, and how to tell it apart from others."""

    rule: str
    category: str
    summary: str
    importance: float
    slot: tuple[str, str]
    key: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    allows_time: bool = True
    user_only: bool = False

    def describe(self) -> str:
        """ "the pet luna's age": the slot in words."""
        entity, attribute = self.slot
        who = "the user" if entity == "user" else f"the {entity.replace(':', ' ')}"
        return f"{who}'s {attribute}"


@dataclass(frozen=True)
class Rule:
    """One rule of the table, compiled."""

    name: str
    spec: dict[str, Any]
    patterns: tuple[re.Pattern[str], ...]
    needs: tuple[re.Pattern[str], ...]
    values: dict[str, dict[str, str]]  # slot → what was said → canonical


def _entries(text: str) -> list[str]:
    return [" ".join(p.split()) for p in (text.split("|") if "|" in text else text.split())]


@cache
def table() -> dict[str, Any]:
    """memory_facts.yaml, read once."""
    text = resources.files("memoir.data").joinpath("memory_facts.yaml").read_text()
    raw: dict[str, Any] = yaml.safe_load(text)
    return raw


def _expand(pattern: str, slots: dict[str, str]) -> str:
    """`{@fragment}`, `{slot}`, `{slot=list}` and `{list}` written out as regular expressions."""

    def one(m: re.Match[str]) -> str:
        fragment, name, source = m.groups()
        if fragment:
            return _expand(table()["fragments"][name].replace(" ", r"\s+"), slots)
        words = vocab()
        alternatives = [
            slots[s]
            if s in slots
            else "|".join(re.escape(w) for w in sorted(words[s], key=len)[::-1])
            for s in (source or name).split("|")
        ]
        body = _expand("|".join(alternatives), slots)
        return f"(?P<{name}>{body})" if source or name in slots else f"(?:{body})"

    return _REF.sub(one, pattern)


def _compile(block: str, slots: dict[str, str]) -> tuple[re.Pattern[str], ...]:
    """One pattern a line: spaces are any white space, slots and lists written out."""
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    return tuple(re.compile(_expand(line.replace(" ", r"\s+"), slots), I) for line in lines)


@cache
def rules() -> tuple[Rule, ...]:
    """The rules of the table, in order, compiled."""
    out = []
    for spec in table()["facts"]:
        slots = {**table()["slots"], **spec.get("slots", {})}
        said = {s: c for c, said_as in spec.get("values", {}).items() for s in _entries(said_as)}
        values = {slot: said for slot in spec.get("slots", {})}
        patterns = _compile(spec["when"], slots)
        out.append(
            Rule(spec["rule"], spec, patterns, _compile(spec.get("needs", ""), slots), values)
        )
    return tuple(out)


# ----- slots -----------------------------------------------------------------------------------


def _clause(text: str) -> str:
    """`text` up to the end of its first clause, without trailing punctuation."""
    return _CUT.split(text, maxsplit=1)[0].strip().rstrip(".!?;:,").strip()


def _title(word: str) -> str:
    return word if any(c.isupper() for c in word) else word[:1].upper() + word[1:]


def _name(raw: str, caps: bool) -> str | None:
    """A person's or pet's name from the words after "named" / "my dog": one or two words."""
    words = raw.strip().rstrip(".,!?;:").split()
    stops = vocab()["name_stops"]
    if not words or words[0].lower().strip("'") in stops or not words[0][0].isalpha():
        return None
    name = _title(re.sub(r"'s$", "", words[0].strip(",.'\"")))
    second = words[1] if len(words) > 1 else ""
    if caps and second[:1].isupper() and second.lower() not in stops:
        name += " " + second.strip(",.'\"")
    return name


def _looks_named(sentence: str, m: re.Match[str], group: str) -> bool:
    """A word said where a name may be is one when capitalized, or followed by "is", "," …"""
    after = sentence[m.end(group) :].split()
    follower = after[0].lower().strip(",.!?;:") if after else ""
    ends = not after or sentence[m.end(group) :].lstrip()[:1] in ",.!?;:"
    return m.group(group)[:1].isupper() or ends or follower in vocab()["name_followers"]


def _place(raw: str) -> str | None:
    stops = vocab()["name_stops"] - {"new", "old"} | vocab()["place_stops"]
    words: list[str] = []
    for word in _clause(raw).split():
        if word.lower().strip(",.") in stops:
            break
        words.append(word)
    words = words[1:] if len(words) > 1 and words[0].lower() == "the" else words
    return " ".join(w if w.isupper() else _title(w) for w in words[:3]) or None


def _job(raw: str) -> str:
    job = re.split(r"\s+(?:at|for|in)\s+", _clause(raw), maxsplit=1, flags=I)[0].strip()
    return job if re.match(r"^(?:an?|the)\s", job, I) else f"{_article(job)} {job}"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def third_person(text: str) -> str:
    """ "my mom's cooking" → "their mom's cooking": the user's words, about the user."""
    pattern = r"\b(?:my|me|myself|mine|i'm|i've|i|am)\b"
    return re.sub(pattern, lambda m: _THIRD.get(m.group(0).lower(), m.group(0)), text, flags=I)


def _who(
    raw: str, rule: Rule, entities: dict[str, tuple[str, str]], last: str | None
) -> dict[str, str] | None:
    """The person or pet a bare name or pronoun stands for, if it is of the rule's kind."""
    pronoun = raw.lower() in ("she", "he", "it")
    name = last if pronoun else raw
    if not name or (not pronoun and raw.lower() in vocab()["not_names"]):
        return None
    kind_of, kind = entities.get(name.lower(), ("pet", "pet"))
    return {"name": name, "kind": kind} if kind_of == rule.spec["who"] else None


def _slots(
    rule: Rule,
    m: re.Match[str],
    sentence: str,
    context: tuple[dict[str, tuple[str, str]], str | None],
) -> dict[str, str] | None:
    """The slots of one match, cleaned by kind; None when one is not what it should be."""
    caps = any(c.isupper() for c in sentence[1:])
    attrs: dict[str, str] = dict(rule.spec.get("set", {}))
    for group, raw in m.groupdict().items():
        if raw is None:
            continue
        value: str | None = raw.strip()
        if group == "who":
            found = _who(raw, rule, *context)
            if found is None:
                return None
            attrs.update(found)
            continue
        if group in ("name", "lname"):
            if group == "lname" and not _looks_named(sentence, m, group):
                return None
            value, group = _name(sentence[m.start(group) :], caps), "name"
        elif group == "place":
            value = _place(raw)
        elif group == "what":
            value = third_person(_clause(raw))
            value = value[:1].lower() + value[1:] if m.start(group) == 0 else value
            value = None if value.lower() in _PRONOUNS else value
        elif group == "job":
            value = _job(raw)
        elif group == "language":
            value = raw.capitalize()
        elif group == "age":
            value = str(vocab()["numbers"].get(raw.lower(), raw))
        elif group in rule.values or group in ("kind", "relation"):
            said = " ".join(raw.lower().split())
            value = rule.values.get(group, {}).get(said, said)
        if not value:
            return None
        attrs[group] = value
    if "age" in attrs:
        unit = attrs.get("unit", "years").lower()
        base = (
            "month" if unit.startswith("month") else "week" if unit.startswith("week") else "year"
        )
        attrs["unit"] = base if attrs["age"] == "1" else base + "s"
    return attrs


# ----- rendering -------------------------------------------------------------------------------


def _field(m: re.Match[str], attrs: dict[str, str]) -> str | None:
    name, fallback, how = m.groups()
    value = attrs.get(name) or (attrs.get(fallback) if fallback else None)
    if not value or not how:
        return value
    if how == "slug":
        return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "x"
    if how == "words":
        return " ".join(sorted(content_words(value)))
    if how == "canon":
        return str(vocab()["canonical_relations"].get(value.lower(), value.lower()))
    return _article(value)  # "a"


def render(template: str, attrs: dict[str, str]) -> str | None:
    """`template` with `attrs` filled in ("[…]" left out where a slot is missing); None when a
    slot it needs is missing."""

    def optional(m: re.Match[str]) -> str:
        return m.group(1) if all(_field(f, attrs) for f in _FIELD.finditer(m.group(1))) else ""

    text = re.sub(r"\[([^\]]*)\]", optional, template)
    if not all(_field(f, attrs) for f in _FIELD.finditer(text)):
        return None
    return _FIELD.sub(lambda f: _field(f, attrs) or "", text)


def render_fact(rule_name: str, attrs: dict[str, str]) -> str | None:
    """The summary of a fact of the rule named `rule_name` with `attrs`."""
    rule = next((r for r in rules() if r.name == rule_name), None)
    return render(rule.spec["says"], attrs) if rule else None


def _fact(rule: Rule, attrs: dict[str, str]) -> Fact | None:
    spec = rule.spec
    summary, slot = render(spec["says"], attrs), render(spec["slot"], attrs)
    if summary is None or slot is None:
        return None
    entity, _, attribute = slot.partition(" ")
    key = render(spec["key"], attrs) if "key" in spec else None
    timeless, user_only = spec.get("timeless", False), spec.get("user only", False)
    return Fact(
        rule.name,
        spec["category"],
        summary,
        spec["importance"],
        (entity, attribute),
        key,
        attrs,
        not timeless,
        user_only,
    )


def extract_facts(
    sentence: str,
    entities: dict[str, tuple[str, str]] | None = None,
    last_entity: str | None = None,
) -> list[Fact]:
    """Every fact one sentence states, most important first (ties: table order); one per slot,
    and one per group of rules."""
    facts: list[Fact] = []
    groups: set[str] = set()
    for rule in rules():
        group = rule.spec.get("group")
        if group in groups or not all(p.search(sentence) for p in rule.needs):
            continue
        fact = _first(rule, sentence, (entities or {}, last_entity))
        if fact is not None and all(f.slot != fact.slot for f in facts):
            facts.append(fact)
            groups |= {group} if group else set()
    order = {id(f): i for i, f in enumerate(facts)}
    return sorted(facts, key=lambda f: (-f.importance, order[id(f)]))


def _first(
    rule: Rule, sentence: str, context: tuple[dict[str, tuple[str, str]], str | None]
) -> Fact | None:
    """The fact of the rule's first pattern that matches with valid slots."""
    for pattern in rule.patterns:
        for m in pattern.finditer(sentence):
            attrs = _slots(rule, m, sentence, context)
            fact = _fact(rule, attrs) if attrs is not None else None
            if fact is not None:
                return fact
    return None


# ----- sentences and summaries -----------------------------------------------------------------


def content_words(text: str) -> set[str]:
    """The lower-cased words of `text` that carry meaning (for 'says the same thing' checks)."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    stop = vocab()["stopwords"]
    return {w.rstrip("s") if len(w) > 3 else w for w in words if w not in stop}


def strip_lead(sentence: str) -> str:
    """A sentence without its lead-in ("btw", "please remember that", "update:")."""
    return re.sub(table()["lead_in"].strip(), "", sentence, flags=I)


def sentences(text: str) -> list[str]:
    """The sentences of a message (cut after . ! ? ; and at line breaks)."""
    return [p.strip() for p in re.split(r"(?<=[.!?;])\s+|\n+", text.strip()) if p.strip()]


def read_summary(summary: str, key: str | None = None) -> Fact | None:
    """The fact a third-person summary states (the one with `key` when several), else None."""
    text = summary.strip()
    for line in table()["first_person"].splitlines():
        pattern, _, repl = line.partition("=>")
        if pattern.strip():
            text = re.sub(pattern.strip(), repl.strip(), text, count=1)
    facts = extract_facts(text) if text else []
    return next((f for f in facts if key and f.key == key), facts[0] if facts else None)
