"""Facts with deterministic keys: the rules of memoir/data/memory_facts.yaml, applied. A rule's
patterns capture slots, cleaned by kind (a name, a place, "what" said of the user), rendered into
its summary, key and slot (`extract_facts`); `read_summary` reads a summary back through the same
rules, so summaries written earlier, or by another model, can be compared.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import takewhile
from typing import Any

from memoir.llm import tables
from memoir.llm.offline_clauses import WORDS, gerund, proper_name
from memoir.llm.tables import entries, lines
from memoir.text import swap_words

I = re.I  # noqa: E741
Entities = tuple[dict[str, tuple[str, str]], str | None]  # name → (pet | person, noun); the last
_REF = re.compile(r"\{(@?)([a-z_]+)(?:=([a-z_|]+))?\}")
_FIELD = re.compile(r"\{(\w+)(?:\|(\w+))?(?::(\w+))?\}")
FACTS: dict[str, Any] = tables.table("memory_facts")  # memory_facts.yaml, read once
PERSON = r"^person:([^:]+):"  # a named speaker's key: person:maya:city


@dataclass
class Fact:
    """One stable fact: what it is about, how it reads, and how to tell it apart from others."""

    rule: str
    category: str
    summary: str
    importance: float
    slot: tuple[str, str]  # (entity, attribute): the same slot is the same fact
    key: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    allows_time: bool = True
    user_only: bool = False

    def describe(self) -> str:
        """ "the pet luna's age": the slot in words."""
        return f"the {self.slot[0].replace(':', ' ')}'s {self.slot[1]}"


@dataclass(frozen=True)
class Rule:
    """One rule of the table, compiled."""

    name: str
    spec: dict[str, Any]
    patterns: tuple[re.Pattern[str], ...]
    needs: tuple[re.Pattern[str], ...]
    values: dict[str, str]  # what was said → its canonical value


def _expand(pattern: str, slots: dict[str, str]) -> str:
    """`{@fragment}`, `{slot}`, `{slot=list}` and `{list}` written out as regular expressions."""

    def one(m: re.Match[str]) -> str:
        fragment, name, source = m.groups()
        if fragment:
            return _expand(FACTS["fragments"][name].replace(" ", r"\s+"), slots)
        words = [
            slots.get(s) or "|".join(map(re.escape, sorted(WORDS[s], key=len)[::-1]))
            for s in (source or name).split("|")
        ]
        body = _expand("|".join(words), slots)
        return f"(?P<{name}>{body})" if source or name in slots else f"(?:{body})"

    return _REF.sub(one, pattern)


def _compile(block: str, slots: dict[str, str]) -> tuple[re.Pattern[str], ...]:
    """One pattern a line: a space is any white space, slots and lists written out."""
    return tuple(re.compile(_expand(line.replace(" ", r"\s+"), slots), I) for line in lines(block))


@cache
def rules() -> tuple[Rule, ...]:
    """The rules of the table, in order, compiled."""
    out = []
    for spec in FACTS["facts"]:
        slots = {**FACTS["slots"], **spec.get("slots", {})}
        values = {s: c for c, said in spec.get("values", {}).items() for s in entries(said)}
        patterns, needs = _compile(spec["when"], slots), _compile(spec.get("needs", ""), slots)
        out.append(Rule(spec["rule"], spec, patterns, needs, values))
    return tuple(out)


# ----- slots -----------------------------------------------------------------------------------


def _title(word: str) -> str:
    return word if any(c.isupper() for c in word) else word[:1].upper() + word[1:]


def _name(raw: str) -> str | None:
    """A person's or pet's name from the words after "named" / "my dog": one or two words."""
    words, stops = raw.strip().rstrip(".,!?;:").split(), WORDS["name_stops"]
    if not words or words[0].lower().strip("'") in stops or not words[0][0].isalpha():
        return None
    name = _title(re.sub(r"'s$", "", words[0].strip(",.'\"")))
    second = words[1] if len(words) > 1 else ""
    if second[:1].isupper() and second.lower() not in stops:
        name += " " + second.strip(",.'\"")
    return name


def _place(raw: str) -> str | None:
    """A place from the words after "live in" / "from": up to three, capitalized, no "the"."""
    stops = WORDS["name_stops"] - {"new", "old"} | WORDS["place_stops"]
    words = list(takewhile(lambda w: w.lower().strip(",.") not in stops, raw.rstrip(".").split()))
    words = words[1:] if len(words) > 1 and words[0].lower() == "the" else words
    return " ".join(w if w.isupper() else _title(w) for w in words[:3]) or None


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _who(raw: str, rule: Rule, context: Entities) -> dict[str, str] | None:
    """The person or pet a bare name or pronoun stands for, if it is of the rule's kind."""
    entities, last = context
    name = last if raw.lower() in ("she", "he", "it") else raw  # a name: never one of not_names
    kind_of, kind = entities.get((name or "").lower(), ("pet", "pet"))
    return {"name": name, "kind": kind} if name and kind_of == rule.spec["who"] else None


def _slots(rule: Rule, m: re.Match[str], context: Entities) -> dict[str, str] | None:
    """The slots of one match, cleaned by kind; None when one is not what it should be."""
    attrs: dict[str, str] = dict(rule.spec.get("set", {}))
    for group, raw in m.groupdict().items():
        value: str | None = raw.strip() if raw else None
        if raw is None or group == "who":
            found = _who(raw, rule, context) if raw else {}
            if found is None:
                return None
            attrs.update(found)
            continue
        if group == "name":
            value = _name(m.string[m.start(group) :])
        elif group == "place":
            value = _place(raw)
        elif group == "what":
            value = swap_words(raw.strip(), WORDS["first_to_third"])  # my → their
            value = value[:1].lower() + value[1:] if m.start(group) == 0 else value
            value = None if value.lower() in WORDS["pronoun_objects"] else value
        elif group == "job":
            job = raw.strip()
            value = job if re.match(r"^(?:an?|the)\s", job, I) else f"{_article(job)} {job}"
        elif group == "language":
            value = raw.capitalize()
        elif group != "tz":
            said = " ".join(raw.lower().split())
            value = rule.values.get(said, said)
        if not value:
            return None
        attrs[group] = value
    if "unit" in attrs and attrs.get("age") != "1":  # "1 year", "3 months"
        attrs["unit"] += "s"
    return attrs


# ----- facts -----------------------------------------------------------------------------------


_FILTERS: dict[str, Callable[[str], str]] = {  # {slot:filter} in a template
    "slug": lambda v: re.sub(r"[^a-z0-9]+", "-", v.lower()).strip("-") or "x",
    "words": lambda v: " ".join(sorted(content_words(v))),  # sorted content words
    "canon": lambda v: str(WORDS["canonical_relations"].get(v.lower(), v.lower())),  # mom → mother
    "a": _article,  # "a" or "an" before it
    "ing": gerund,  # book → booking
    "lower": lambda v: v if proper_name(v.split()[0]) else v[:1].lower() + v[1:],  # 1st letter
}


def _field(m: re.Match[str], attrs: dict[str, str]) -> str | None:
    """One `{slot|fallback:filter}` of a template, its filter (`_FILTERS`) applied."""
    name, fallback, how = m.groups()
    value = attrs.get(name) or attrs.get(fallback or "")
    return _FILTERS[how](value) if value and how else value


def render(template: str, attrs: dict[str, str]) -> str | None:
    """`template` filled in ("[…]" left out where a slot is missing); None when one is needed."""

    def optional(m: re.Match[str]) -> str:
        return m[1] if all(_field(f, attrs) for f in _FIELD.finditer(m[1])) else ""

    text = re.sub(r"\[([^\]]*)\]", optional, template)
    if not all(_field(f, attrs) for f in _FIELD.finditer(text)):
        return None
    return _FIELD.sub(lambda f: _field(f, attrs) or "", text)


def _fact(rule: Rule, sentence: str, context: Entities) -> Fact | None:
    """The fact of the rule's first pattern that matches with valid slots."""
    spec = rule.spec
    for m in (m for p in rule.patterns for m in p.finditer(sentence)):
        attrs = _slots(rule, m, context) or {}  # {}: every summary needs a slot
        said, slot = render(spec["says"], attrs), render(spec["slot"], attrs)
        if said and slot:
            key = render(spec["key"], attrs) if "key" in spec else None
            entity, _, attribute = slot.partition(" ")
            where = (rule.name, spec["category"], said, spec["importance"], (entity, attribute))
            timeless, user_only = spec.get("timeless", False), spec.get("user only", False)
            return Fact(*where, key, attrs, not timeless, user_only)
    return None


def extract_facts(
    sentence: str, entities: dict[str, tuple[str, str]] | None = None, last: str | None = None
) -> list[Fact]:
    """Every fact a sentence states, most important first; one per slot and per rule group."""
    facts: list[Fact] = []
    groups: set[str] = set()
    for rule in rules():
        group = rule.spec.get("group", rule.name)
        if group in groups or not all(p.search(sentence) for p in rule.needs):
            continue
        fact = _fact(rule, sentence, (entities or {}, last))
        if fact is not None and all(f.slot != fact.slot for f in facts):
            facts.append(fact)
            groups.add(group)
    return sorted(facts, key=lambda f: -f.importance)


# ----- sentences and summaries -----------------------------------------------------------------


def content_words(text: str) -> set[str]:
    """The lower-cased words of `text` that carry meaning (for 'says the same thing' checks)."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {w.rstrip("s") if len(w) > 3 else w for w in words if w not in WORDS["stopwords"]}


def sentences(text: str) -> list[str]:
    """The sentences of a message (cut after . ! ? ; and at line breaks)."""
    return [p.strip() for p in re.split(r"(?<=[.!?;])\s+|\n+", text.strip()) if p.strip()]


def read_summary(summary: str, key: str | None = None, owner: str | None = None) -> Fact | None:
    """The fact a third-person summary states (the one with `key` when several), else None; a
    named speaker's (`owner`) read as the user's: "Maya's dog" → "User's dog", person:maya:…
    keys → profile:…"""
    text = summary.strip()
    if owner:
        text = re.sub(rf"^{re.escape(owner)}\b", "User", text, count=1, flags=I)
        key = re.sub(PERSON, "profile:", key or "") or None
    for line in lines(FACTS["first_person"]):
        pattern, _, repl = line.partition("=>")
        text = re.sub(pattern.strip(), repl.strip(), text, count=1)
    facts = extract_facts(text) if text else []
    return next((f for f in facts if key and f.key == key), facts[0] if facts else None)
