"""The offline extractor's grammar: a sentence cut into clauses, each read as its subject (I,
we, my sister Ngozi, a name, a pronoun, you; none for an imperative), its verb with the tense
its auxiliaries and form give, and the rest. The words are memoir/data/memory_words.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from itertools import repeat
from typing import Any, Literal

from lemminflect import getAllLemmas, getInflection, getLemma

from memoir.llm.tables import entries, lines, table

Tense = Literal["past", "present", "perfect", "progressive", "future", "modal", "imperative"]


# memory_words.yaml: a string is a set of entries ("|"- or space-separated), maps stay
WORDS: dict[str, Any] = {
    k: frozenset(entries(v)) if isinstance(v, str) else v for k, v in table("memory_words").items()
}


def pattern(name: str) -> re.Pattern[str]:
    """A pattern of memory_words.yaml (one alternative a line), case-insensitive."""
    return re.compile("|".join(f"(?:{line})" for line in lines(WORDS["patterns"][name])), re.I)


_BE, _DO = WORDS["be_present"] | WORDS["be_past"], WORDS["do_present"] | WORDS["do_past"]
_AUX = _BE | _DO | WORDS["have"] | WORDS["modals"] | WORDS["future"]
_SOFT = WORDS["adverbs"] | WORDS["negations"]
_NOT_NAME = WORDS["not_names"].union(
    *(WORDS[k] for k in ("speaker", "group", "listener", "personal", "possessives"))
)
_CUT, _JOINER, _WHEN = pattern("cut"), pattern("joiner"), pattern("leading_when")


@dataclass(frozen=True)
class Subject:
    """Who a clause is about: its kind, its words, and for "my X" the noun and name."""

    kind: str  # speaker, group, possessed, name, pronoun, listener, none
    text: str = ""
    noun: str = ""  # "sister" of "my sister Ngozi"
    name: str = ""  # "Ngozi" of "my sister Ngozi", "Luna" of "Luna"
    plural: bool = False
    owner: str = ""  # "Carmen" of "Carmen's highlight" (empty: the speaker's "my")
    partner: str = ""  # "Priscilla" of "he and Priscilla", "Tom" of "Tom and I"


@dataclass(frozen=True)
class Clause:
    """One clause: subject, the verb's words (auxiliaries included), lemma, tense, the rest."""

    text: str
    subject: Subject
    verb_phrase: str = ""
    lemma: str = ""
    tense: Tense = "present"
    negated: bool = False
    copula: bool = False  # "is a nurse": the rest is a complement
    rest: str = ""


# ----- verb forms ------------------------------------------------------------------------------


@cache
def _lemma(word: str) -> str:
    """A verb form's lemma (lemminflect's dictionary, else its rules): went → go."""
    w = word.lower().strip("'’")
    return str(next(iter(getLemma(w, upos="VERB")), w)) if w.isalpha() else w


def _inflected(lemma: str, tag: str) -> str:
    """The form of `lemma` with this Penn tag (VBD, VBG, VBZ), or `lemma` when it has none."""
    return str(next(iter(getInflection(lemma, tag)), lemma)) if lemma.isalpha() else lemma


def _is_past(word: str, participle: bool = False) -> bool:
    """Whether `word` is a simple past (went) or, with `participle`, also a past participle."""
    w, tags = word.lower(), ("VBD", "VBN") if participle else ("VBD",)
    return w.isalpha() and any(w in getInflection(_lemma(w), tag) for tag in tags)


def is_verb_of(word: str, kind: str) -> bool:
    """Whether a verb form, as written or by its lemma, is one of a verb list: event_verbs
    (went, adopted, started), opinion_verbs (think, guessed, hope: the speaker's mind, the talk)."""
    return bool({word.lower(), _lemma(word)} & WORDS[kind])


def known_verb(word: str) -> bool:
    """Whether the dictionary knows `word` as a verb form: book, schedule, thanks; not Dan."""
    return bool(getAllLemmas(word.lower(), upos="VERB"))


def proper_name(word: str) -> bool:
    """A capitalized word that is no word of the dictionary: Alice, Luna; not Meetings, The."""
    return _is_name(word) and not getAllLemmas(word.lower().strip(",.!?;:"))


def past_form(word: str) -> str:
    """The simple past of a verb form: started → started, gone → went."""
    return _inflected(_lemma(word), "VBD") if _is_past(word, participle=True) else word


def gerund(word: str) -> str:
    """The "-ing" form of a verb: book → booking, schedule → scheduling, plan → planning."""
    return _inflected(word.lower(), "VBG")


def third_person_verb(word: str) -> str:
    """The third-person singular present of a first-person form: drive → drives, am → is."""
    w = word.lower()
    if w in WORDS["third_person"]:
        return str(WORDS["third_person"][w])
    if w in WORDS["modals"] or w in WORDS["future"] or _is_past(w) or w.endswith("n't"):
        return word
    return _inflected(w, "VBZ")


def is_strong_verb(word: str) -> bool:
    """An auxiliary, a modal or a past form: a verb whatever comes before it."""
    return word.lower() in _AUX or _is_past(word, participle=True)  # had, got: past forms


def _looks_like_verb(word: str, plural_before: bool = False) -> bool:
    """Whether `word` can start a predicate after a noun: an auxiliary, a past or "-s" form."""
    w = word.lower()
    if is_strong_verb(w) or w in ("just", "never", "always", "also", "still", "finally"):
        return True
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 2:
        return True
    return plural_before and w.isalpha() and w not in WORDS["not_names"] and len(w) > 2


def is_adverb(word: str) -> bool:
    """A word that only colours the verb: just, already, really, finally, …"""
    return word.lower() in _SOFT or (word.lower().endswith("ly") and len(word) > 4)


def expand_contraction(word: str, following: str = "") -> str:
    """ "'s" → "is" (or "has" before a participle), "'re" → "are", "'ve" → "have", …"""
    if word.lower() == "'s":  # "been" is a participle too
        return "has" if _is_past(following, participle=True) else "is"
    return str(WORDS["contractions"].get(word.lower(), word))


# ----- clauses ---------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Words, with contractions split off ("I'm" → "I", "'m"; "don't" stays one word)."""
    out: list[str] = []
    for token in re.findall(r"[\w’'-]+|[^\w\s]", text.replace("’", "'")):
        m = re.match(r"^(\w+)('m|'re|'ve|'ll|'d|'s)$", token, re.I)
        out.extend([m.group(1), m.group(2)] if m and not token.endswith("n't") else [token])
    return out


def _join(words: list[str]) -> str:
    text = re.sub(r"\s+([,.!?;:])", r"\1", " ".join(words))
    return re.sub(r"\s+('(?:m|re|ve|ll|d|s))\b", r"\1", text)


def _is_name(word: str) -> bool:
    w = word.lower()
    return word[:1].isupper() and w not in _NOT_NAME and not w.endswith("ly")


def starts_clause(text: str) -> bool:
    """Whether `text` opens with a subject and a verb (where a sentence may be cut)."""
    words = _words(text)
    subject, used = _subject(words)
    rest = words[used:]
    if subject.kind == "none" or not rest:
        return False
    if subject.kind in ("speaker", "group", "listener", "pronoun"):
        return rest[0][:1].isalpha() or rest[0].startswith("'")
    return _looks_like_verb(rest[0], subject.plural)


def split_clauses(sentence: str) -> list[str]:
    """The clauses of a sentence: cut at strong marks (a part with no clause of its own says
    more of the last), and at joiners followed by a subject ("Tom and I went" stays whole)."""
    parts: list[str] = []
    for part in _CUT.split(sentence):
        if parts and part and not starts_clause(part) and parse_clause(parts[-1]).verb_phrase:
            parts[-1] += f": {part}"
        else:
            parts.append(part)
    clauses: list[str] = []
    for part in parts:
        start = 0
        for m in _JOINER.finditer(part):
            if m.start() < start or not starts_clause(part[m.end() :]):
                continue
            left = parse_clause(part[start : m.start()])
            if left.subject.kind == "none" or left.verb_phrase:
                clauses.append(part[start : m.start()])
                start = m.end()
        clauses.append(part[start:])
    return [c.strip(" ,.!?") for c in clauses if c.strip(" ,.!?")]


def _subject(words: list[str]) -> tuple[Subject, int]:
    """The subject at the start of a clause (memory_grammar.yaml) and how many words it took."""
    rules = table("memory_grammar")["subject"]
    rule = next((r for r in rules if _shaped(r["shape"], words)), {"shape": [], "kind": "none"})
    if rule.get("read") == "possessed":
        return _possessed(words)
    shaped = list(enumerate(words[: len(rule["shape"])]))
    said = {f"w{k}": w for k, w in shaped} | {f"l{k}": w.lower() for k, w in shaped}
    parts: dict[str, Any] = {
        k: v.format(**said) if isinstance(v, str) else v for k, v in rule.items()
    }
    used = parts.pop("used", len(parts.pop("shape")))
    return Subject(**parts), used


def _shaped(shape: list[str], words: list[str]) -> bool:
    """Whether the first words fit a subject's shape, one test a word."""
    return len(words) >= len(shape) and all(map(_holds, shape, words, repeat(_NOBODY)))


def _possessed(words: list[str]) -> tuple[Subject, int]:
    """ "my sister Ngozi", "my best friend Tom", "my dog", "our kids": noun, name, plural."""
    nouns: list[str] = []
    i = 1
    while i < len(words) and len(nouns) < 3 and re.match(r"^[\w-]+$", words[i]):
        if nouns and (_is_name(words[i]) or _looks_like_verb(words[i], nouns[-1].endswith("s"))):
            break
        nouns.append(words[i].lower())
        i += 1
    if not nouns:
        return Subject("none"), 0
    names: list[str] = []
    if i + 1 < len(words) and words[i] == "," and _is_name(words[i + 1]):
        names, i = [words[i + 1]], i + 2 + (i + 2 < len(words) and words[i + 2] == ",")
    while i < len(words) and _is_name(words[i]) and len(names) < 2:
        names.append(words[i])
        i += 1
    noun = " ".join(nouns)
    plural = nouns[-1].endswith("s") and not nouns[-1].endswith("ss") and not names
    text = " ".join([words[0], noun, *names])
    return Subject("possessed", text, noun=noun, name=" ".join(names), plural=plural), i


def parse_clause(text: str) -> Clause:
    """Subject, verb (with its auxiliaries), tense, negation and the rest of one clause."""
    lead = _WHEN.match(text)
    if lead and starts_clause(text[lead.end() :]):
        return replace(parse_clause(text[lead.end() :]), text=text)
    words = _words(text)
    subject, used = _subject(words)
    if subject.kind == "none":
        if not (words and _holds("event_form", words[0], subject)):
            return Clause(text, subject, tense="imperative" if words else "present")
        subject = Subject("speaker")  # "Lost my job yesterday": the speaker, left out
    return _predicate(text, subject, words, used)


# ----- the tests of memory_grammar.yaml's rules ------------------------------------------------

_NOBODY = Subject("none")
_CHECKS: dict[str, Callable[[str, Subject], bool]] = {
    "any": lambda w, s: bool(w),
    "event_form": lambda w, s: _is_past(w) and is_verb_of(w, "event_verbs"),  # lost, went, adopted
    "past": lambda w, s: w in WORDS["do_past"] or _is_past(w),  # was, did, didn't, went
    "gerund": lambda w, s: w.endswith("ing") and len(w) > 4,
    "participle": lambda w, s: _is_past(w, participle=True),
    "event_past": lambda w, s: (
        _is_past(w) and w not in WORDS["stative"] and is_verb_of(w, "event_verbs")
    ),
    "verb_like": lambda w, s: _looks_like_verb(w, s.plural),
    "proper": lambda w, s: _is_name(w),
    "lowercase": lambda w, s: w.isalpha() and w.islower(),
    "strong": lambda w, s: is_strong_verb(w),
    "not_a_verb": lambda w, s: (
        not re.match(r"^[a-z][\w-]*$", w) or (w in WORDS["not_names"] and not is_strong_verb(w))
    ),
}


def _holds(test: str, word: str, subject: Subject) -> bool:
    """Whether a test holds of `word`: one of its alternatives, all its "&"-joined parts; each a
    check, a word list or the word itself, "!" before it negating it."""
    if " " in test:
        return any(_holds(t, word, subject) for t in test.split())
    if "&" in test:
        return all(_holds(t, word, subject) for t in test.split("&"))
    if test.startswith("!"):
        return not _holds(test[1:], word, subject)
    if test in _CHECKS:
        return _CHECKS[test](word, subject)
    return word.lower() in WORDS[test] if test in WORDS else word.lower() == test


def _fits(rule: dict[str, Any], said: dict[str, str], subject: Subject) -> bool:
    """Whether each test of a verb-group rule holds (one of its alternatives)."""
    return all(_holds(str(rule[k]), word, subject) for k, word in said.items() if k in rule)


def _predicate(text: str, subject: Subject, words: list[str], i: int) -> Clause:
    """The verb group after the subject, read by the first rule of memory_grammar.yaml that fits."""
    start = i
    while i < len(words) and is_adverb(words[i]):
        i += 1
    j = i + 1
    while j < len(words) and words[j].lower() in _SOFT:
        j += 1
    at = {"verb": i, "next": j, "then": j + 1}
    said = {k: words[n].lower() if n < len(words) else "" for k, n in at.items()}
    said["subject"] = subject.kind
    rule = next(r for r in table("memory_grammar")["verb_group"] if _fits(r, said, subject))
    if "tense" not in rule:
        return Clause(text, subject)  # no verb where one should be ("Grumpy as ever")
    end, lemma = at[rule.get("end", "verb")], rule.get("lemma", "")
    phrase = words[i] if rule.get("bare") else _join(words[start : end + 1])
    past, _, other = rule["tense"].partition("/")
    tense = past if not other or _holds("past", said["verb"], subject) else other
    negated = any(x.lower() in WORDS["negations"] or x.endswith("n't") for x in words[start:j])
    rest = _join(words[at[rule["rest"]] if "rest" in rule else end + 1 :])
    lemma = _lemma(said[lemma]) if lemma in at else lemma
    return Clause(text, subject, phrase, lemma, tense, negated, rule.get("copula", False), rest)
