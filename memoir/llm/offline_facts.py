"""Stable facts in a user's words, as rules: the offline memory skills' reader and writer.

`extract_facts(sentence)` matches one sentence (or clause) against the fact rules below; a
message as a whole is read by `memoir.llm.offline_extract`, which uses these rules for facts
with deterministic keys and its clause grammar for the rest. A `Fact` has a category, a
third-person summary rendered from its attributes, an importance, a deterministic key when it
has one (`profile:pet:luna:age`, `profile:city`, `profile:name`, …) and a slot (entity,
attribute) that decides whether two facts are the same fact. `read_summary` reads a summary
back into a `Fact` (third person → first person, then the same rules), so summaries written
earlier, or by another model, can be compared and composed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "LANGUAGE_CODES",
    "PET_KINDS",
    "Fact",
    "content_words",
    "extract_facts",
    "read_summary",
    "render_fact",
    "sentences",
    "strip_lead",
]

I = re.I  # noqa: E741

PET_KINDS = (
    "guinea pig|dog|puppy|cat|kitten|bird|parrot|budgie|rabbit|bunny|hamster|fish|turtle|"
    "tortoise|horse|pony|snake|lizard|ferret|pet"
)
PARTNERS = "wife|husband|partner|girlfriend|boyfriend|fiancée|fiancee|fiancé|fiance|spouse"
PARENTS = "mother|mom|mum|father|dad"
RELATIVES = (
    "sister|brother|son|daughter|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin|"
    "niece|nephew|best friend|friend|boss|colleague|roommate|flatmate"
)
_CANONICAL_RELATION = {"mom": "mother", "mum": "mother", "dad": "father"}
LANGUAGES = (
    "English|Spanish|Portuguese|French|German|Italian|Dutch|Polish|Swedish|Norwegian|Danish|"
    "Finnish|Greek|Turkish|Russian|Ukrainian|Arabic|Hebrew|Hindi|Chinese|Mandarin|Cantonese|"
    "Japanese|Korean|Vietnamese|Thai|Indonesian|Catalan|Czech|Romanian|Hungarian"
)
LANGUAGE_CODES = {
    "english": "en",
    "spanish": "es",
    "portuguese": "pt",
    "french": "fr",
    "german": "de",
    "italian": "it",
    "dutch": "nl",
    "polish": "pl",
    "swedish": "sv",
    "norwegian": "no",
    "danish": "da",
    "finnish": "fi",
    "greek": "el",
    "turkish": "tr",
    "russian": "ru",
    "ukrainian": "uk",
    "arabic": "ar",
    "hebrew": "he",
    "hindi": "hi",
    "chinese": "zh",
    "mandarin": "zh",
    "cantonese": "zh",
    "japanese": "ja",
    "korean": "ko",
    "vietnamese": "vi",
    "thai": "th",
    "indonesian": "id",
    "catalan": "ca",
    "czech": "cs",
    "romanian": "ro",
    "hungarian": "hu",
}
JOBS = (
    "software engineer|engineer|developer|programmer|designer|teacher|nurse|doctor|physician|"
    "surgeon|lawyer|attorney|accountant|manager|consultant|student|architect|writer|journalist|"
    "chef|cook|scientist|researcher|analyst|founder|entrepreneur|freelancer|photographer|artist|"
    "musician|pharmacist|dentist|therapist|psychologist|electrician|plumber|carpenter|mechanic|"
    "pilot|professor|lecturer|salesperson|marketer|product manager|data scientist|translator|"
    "veterinarian|vet|paramedic|firefighter|police officer|editor|recruiter|cto|ceo|cfo"
)
_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
}
_AGE = r"(?P<age>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_AGE_UNIT = r"(?:\s+(?P<unit>years?|yrs?|months?|weeks?)(?:\s+old)?|\s+y/?o)?"

# Words that are never a name (the word after "my dog" in "my dog is 3").
_NOT_NAMES = {
    "is",
    "was",
    "has",
    "had",
    "and",
    "just",
    "now",
    "turned",
    "loves",
    "likes",
    "hates",
    "will",
    "would",
    "can",
    "could",
    "does",
    "did",
    "who",
    "which",
    "that",
    "the",
    "a",
    "an",
    "of",
    "in",
    "at",
    "on",
    "to",
    "for",
    "with",
    "from",
    "but",
    "so",
    "too",
    "also",
    "really",
    "still",
    "got",
    "gets",
    "needs",
    "i",
    "it",
    "he",
    "she",
    "they",
    "we",
    "you",
    "my",
    "your",
    "his",
    "her",
    "their",
    "our",
    "this",
    "these",
    "those",
    "there",
    "here",
    "what",
    "when",
    "where",
    "why",
    "how",
    "if",
    "then",
    "today",
    "tomorrow",
    "yesterday",
    "always",
    "never",
    "name",
    "named",
    "called",
    "years",
    "old",
    "new",
}
_CLAUSE_END = re.compile(
    r",|;|\s+(?:and|but|so|because|since|while|although|though|which|who)\s+|\s+-\s+|\s+—\s+", I
)


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
    source: str = ""
    allows_time: bool = True

    def describe(self) -> str:
        """ "the pet luna's age": the slot in words."""
        entity, attribute = self.slot
        who = "the user" if entity == "user" else f"the {entity.replace(':', ' ')}"
        return f"{who}'s {attribute}"


# ----- small helpers -------------------------------------------------------------------------


def _clause(text: str) -> str:
    """`text` up to the end of its first clause, without trailing punctuation."""
    head = _CLAUSE_END.split(text, maxsplit=1)[0]
    return head.strip().rstrip(".!?;:,").strip()


def _title(word: str) -> str:
    return word if any(c.isupper() for c in word) else word[:1].upper() + word[1:]


def _name(raw: str, sentence_has_capitals: bool) -> str | None:
    """A person's or pet's name from the words after "named" / "my dog": one or two words."""
    words = raw.strip().rstrip(".,!?;:").split()
    if not words or words[0].lower().strip("'") in _NOT_NAMES or not words[0][0].isalpha():
        return None
    name = _title(re.sub(r"'s$", "", words[0].strip(",.'\"")))
    second = words[1] if len(words) > 1 else ""
    if sentence_has_capitals and second[:1].isupper() and second.lower() not in _NOT_NAMES:
        name += " " + second.strip(",.'\"")
    return name


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _age(raw: str) -> str:
    return _NUMBER_WORDS.get(raw.lower(), raw)


def _unit(raw: str | None, age: str) -> str:
    unit = (raw or "years").lower()
    base = "month" if unit.startswith("month") else "week" if unit.startswith("week") else "year"
    return base if age == "1" else base + "s"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


_THIRD = {
    "my": "their",
    "me": "them",
    "i": "they",
    "myself": "themselves",
    "mine": "theirs",
    "i'm": "they're",
    "i've": "they've",
    "am": "are",
}


def third_person(text: str) -> str:
    """ "my mom's cooking" → "their mom's cooking": the user's words, about the user."""
    return re.sub(
        r"\b(?:my|me|myself|mine|i'm|i've|i|am)\b",
        lambda m: _THIRD.get(m.group(0).lower(), m.group(0)),
        text,
        flags=I,
    )


_STOPWORDS = {
    "user",
    "users",
    "user's",
    "the",
    "a",
    "an",
    "is",
    "are",
    "of",
    "to",
    "in",
    "and",
    "their",
    "they",
    "has",
    "very",
    "really",
    "now",
    "my",
    "i",
    "i'm",
    "am",
}


def content_words(text: str) -> set[str]:
    """The lower-cased words of `text` that carry meaning (for 'says the same thing' checks)."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {w.rstrip("s") if len(w) > 3 else w for w in words if w not in _STOPWORDS}


# ----- rendering -----------------------------------------------------------------------------


def render_fact(rule: str, a: dict[str, str]) -> str | None:
    """The third-person summary of a fact of `rule` with attributes `a` (None if incomplete)."""
    try:
        return _RENDER[rule](a)
    except KeyError:
        return None


def _render_entity_age(a: dict[str, str]) -> str:
    who = f"{a['kind']} {a['name']}" if a.get("name") else a["kind"]
    return f"User's {who} is {a['age']} {_unit(a.get('unit'), a['age'])} old."


def _render_family(a: dict[str, str]) -> str:
    if a["relation"] in ("mother", "father", "mom", "mum", "dad"):
        return f"User's {a['relation']} is named {a['name']}."
    return f"User has {_article(a['relation'])} {a['relation']} named {a['name']}."


_RENDER: dict[str, Callable[[dict[str, str]], str]] = {
    "name": lambda a: f"User's name is {a['name']}.",
    "city": lambda a: f"User lives in {a['city']}.",
    "hometown": lambda a: f"User is from {a['place']}.",
    "timezone": lambda a: f"User's timezone is {a['timezone']}.",
    "age": lambda a: f"User is {a['age']} years old.",
    "job": lambda a: f"User works as {a['job']}.",
    "employer": lambda a: f"User works at {a['employer']}.",
    "partner": lambda a: f"User's {a['relation']} is named {a['name']}.",
    "family": _render_family,
    "pet": lambda a: f"User has {_article(a['kind'])} {a['kind']} named {a['name']}.",
    "pet age": _render_entity_age,
    "person age": _render_entity_age,
    "diet": lambda a: f"User is {a['diet']}.",
    "allergy": lambda a: f"User is allergic to {a['what']}.",
    "language": lambda a: f"User speaks {a['language']}.",
    "reply length": lambda a: f"User prefers {a['length']} replies.",
    "tone": lambda a: f"User prefers {_article(a['tone'])} {a['tone']} tone.",
    "reply language": lambda a: f"User prefers replies in {a['language']}.",
    "instruction": lambda a: f"User wants you to {a['what']}.",
    "preference": lambda a: f"User {a.get('verb', 'prefers')} {a['what']}.",
    "like": lambda a: f"User {a['verb']} {a['what']}.",
    "goal": lambda a: f"User's goal is to {a['what']}.",
    "learning": lambda a: f"User is {a['verb']} {a['what']}.",
    "interest": lambda a: f"User is interested in {a['what']}.",
}

# ----- the rules -----------------------------------------------------------------------------

Rule = Callable[[str, bool], list[Fact]]


def _fact(
    rule: str,
    category: str,
    importance: float,
    slot: tuple[str, str],
    attrs: dict[str, str],
    key: str | None = None,
    allows_time: bool = True,
) -> Fact:
    summary = render_fact(rule, attrs) or ""
    return Fact(rule, category, summary, importance, slot, key, attrs, allows_time=allows_time)


def _rule_name(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\b(?:my name is|my name's|call me|i go by|i(?:'m| am) called|people call me)\s+"
        r"(?P<n>[\w'-]+(?:\s+[\w'-]+)?)",
        s,
        I,
    )
    name = _name(m.group("n"), caps) if m else None
    if not name:
        return []
    return [_fact("name", "profile", 0.9, ("user", "name"), {"name": name}, "profile:name")]


_PLACE = r"(?P<place>(?:the\s+)?[\w'.-]+(?:[ -][\w'.-]+){0,3})"


_NOT_PLACES = {
    "right",
    "currently",
    "nowadays",
    "near",
    "days",
    "last",
    "next",
    "ago",
    "recently",
    "since",
    "year",
    "years",
    "month",
    "months",
    "week",
    "weeks",
    "for",
    "by",
    "as",
}

_PLACE_STOPS = (_NOT_NAMES - {"new", "old"}) | _NOT_PLACES


def _place(raw: str) -> str | None:
    words = []
    for word in _clause(raw).split():
        if word.lower().strip(",.") in _PLACE_STOPS:
            break
        words.append(word)
    if words and words[0].lower() == "the" and len(words) > 1:
        words = words[1:]
    if not words:
        return None
    return " ".join(_title(w) if not w.isupper() else w for w in words[:3])


def _rule_city(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\b(?:i\s+(?:now\s+|currently\s+)?(?:live|reside)\s+in|"
        r"i(?:'m|\s+am)\s+(?:now\s+|currently\s+)?(?:living|based|located|settled)\s+in|"
        r"i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to|"
        r"my\s+(?:home\s+)?city\s+is|i\s+call\s+home|my\s+home\s+is\s+in|"
        r"home\s+for\s+me\s+is)\s+" + _PLACE,
        s,
        I,
    )
    city = _place(m.group("place")) if m else None
    if not city:
        return []
    return [_fact("city", "profile", 0.85, ("user", "city"), {"city": city}, "profile:city")]


def _rule_hometown(s: str, caps: bool) -> list[Fact]:
    m = re.search(r"\bi(?:'m|\s+am|\s+come)\s+(?:originally\s+)?from\s+" + _PLACE, s, I)
    m = m or re.search(r"\bi\s+grew\s+up\s+in\s+" + _PLACE, s, I)
    place = _place(m.group("place")) if m else None
    if not place:
        return []
    attrs = {"place": place}
    return [_fact("hometown", "profile", 0.7, ("user", "hometown"), attrs, "profile:hometown")]


def _rule_timezone(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\bmy\s+time\s?zone\s+is\s+(?P<tz>[A-Za-z_]+(?:/[A-Za-z_+-]+){1,2}|UTC|GMT)\b", s, I
    )
    if not m:
        return []
    attrs = {"timezone": m.group("tz")}
    return [_fact("timezone", "profile", 0.8, ("user", "timezone"), attrs, "profile:timezone")]


def _rule_age(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\b(?:i(?:'m|\s+am)\s+(?:now\s+)?|i\s+(?:just\s+)?turned\s+|my\s+age\s+is\s+)"
        r"(?P<age>\d{1,3})(?P<rest>\s+(?:years?\s+old|y/?o)\b)?",
        s,
        I,
    )
    if not m or not (m.group("rest") or "turned" in m.group(0).lower() or "age" in m.group(0)):
        return []
    return [_fact("age", "profile", 0.7, ("user", "age"), {"age": m.group("age")}, "profile:age")]


def _rule_job(s: str, caps: bool) -> list[Fact]:
    facts = []
    m = re.search(
        r"\b(?:i\s+work\s+as|my\s+(?:job|profession|occupation|job\s+title)\s+is)\s+"
        r"(?P<job>.+)",
        s,
        I,
    )
    job = None
    if m:
        job = re.split(r"\s+(?:at|for|in)\s+", _clause(m.group("job")), maxsplit=1, flags=I)[0]
    else:
        m = re.search(rf"\bi(?:'m|\s+am)\s+(?:an?\s+)(?P<job>(?:[\w-]+\s+)?(?:{JOBS}))\b", s, I)
        job = m.group("job") if m else None
    if job:
        job = job.strip()
        if not re.match(r"^(?:an?|the)\s", job, I):
            job = f"{_article(job)} {job}"
        facts.append(_fact("job", "work", 0.75, ("user", "job"), {"job": job}, "profile:job"))
    m = re.search(r"\bi\s+(?:work|am\s+working|'m\s+working)\s+(?:at|for)\s+" + _PLACE, s, I)
    m = m or re.search(r"\bi\s+work\s+as\s+.+?\s+(?:at|for)\s+" + _PLACE, s, I)
    employer = _place(m.group("place")) if m else None
    if employer:
        facts.append(
            _fact(
                "employer",
                "work",
                0.7,
                ("user", "employer"),
                {"employer": employer},
                "profile:employer",
            )
        )
    return facts


_NAME_FOLLOWERS = re.compile(
    r"\s*(?:$|[,.!?;:]|(?:is|'s|was|has|just|turned|and|who|will|loves|likes|hates|needs|"
    r"got|gets|lives|works)\b)",
    I,
)


def _name_at(s: str, m: re.Match[str], caps: bool, *, named: bool) -> str | None:
    """The name in group "n" of `m`: after "named" / "called" any word, else a word that looks
    like a name (capitalized, or followed by "is", "turned", "," or the end)."""
    raw = m.group("n") or ""
    if not raw:
        return None
    if not named and not raw[:1].isupper() and not _NAME_FOLLOWERS.match(s, m.end("n")):
        return None
    return _name(s[m.start("n") :], caps)


def _rule_people(s: str, caps: bool) -> list[Fact]:
    facts: list[Fact] = []
    relations = f"{PARTNERS}|{PARENTS}|{RELATIVES}"
    patterns = [
        (
            rf"\bmy\s+(?P<rel>{relations})(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|"
            r"\s+named|\s+called)\s+(?P<n>[\w'-]+)",
            True,
        ),
        (rf"\bi\s+have\s+an?\s+(?P<rel>{relations})\s+(?:named|called)\s+(?P<n>[\w'-]+)", True),
        (rf"\bmy\s+(?P<rel>{relations})\s*,?\s+(?P<n>[\w'-]+)", False),
    ]
    for pattern, named in patterns:
        for m in re.finditer(pattern, s, I):
            name = _name_at(s, m, caps, named=named)
            if not name:
                continue
            rel = m.group("rel").lower()
            attrs = {"relation": rel, "name": name}
            if re.fullmatch(PARTNERS, rel, I):
                slot, key = ("partner", "name"), "profile:partner"
                facts.append(_fact("partner", "relationship", 0.85, slot, attrs, key))
            else:
                canonical = _CANONICAL_RELATION.get(rel, rel)
                if re.fullmatch(PARENTS, rel, I):
                    slot, key = (canonical, "name"), f"profile:family:{_slug(canonical)}"
                else:
                    ident = f"{_slug(canonical)}:{_slug(name)}"
                    slot, key = (ident, "name"), f"profile:family:{ident}"
                facts.append(
                    _fact("family", "relationship", 0.8, slot, attrs, key, allows_time=False)
                )
            end = m.start("n") + len(name)
            age = _AGE_AFTER.match(s, end)
            if age:
                facts.insert(0, _person_age(name, rel, age))
        if facts:
            break
    return facts


def _person_age(name: str, relation: str, m: re.Match[str]) -> Fact:
    age = _age(m.group("age"))
    attrs = {"kind": relation, "name": name, "age": age, "unit": _unit(m.group("unit"), age)}
    slot = (f"person:{_slug(name)}", "age")
    key = f"profile:person:{_slug(name)}:age"
    return _fact("person age", "relationship", 0.8, slot, attrs, key)


def _pet_age(name: str | None, kind: str, m: re.Match[str]) -> Fact:
    age = _age(m.group("age"))
    attrs = {"kind": kind, "age": age, "unit": _unit(m.group("unit"), age)}
    if name:
        attrs["name"] = name
    ident = _slug(name or kind)
    return _fact("pet age", "pet", 0.8, (f"pet:{ident}", "age"), attrs, f"profile:pet:{ident}:age")


_AGE_AFTER = re.compile(
    rf"\s*(?:,\s*)?(?:is|'s|just\s+turned|turned|is\s+now|has\s+(?:just\s+)?turned)\s+"
    rf"(?:now\s+|just\s+)?{_AGE}{_AGE_UNIT}\b",
    I,
)


def _rule_pets(s: str, caps: bool) -> list[Fact]:
    patterns = [
        (
            rf"\bmy\s+(?P<kind>{PET_KINDS})(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|"
            r"\s+named|\s+called)\s+(?P<n>[\w'-]+)",
            True,
        ),
        (
            rf"\bi\s+(?:have|got|adopted|own)\s+an?\s+(?:new\s+)?(?P<kind>{PET_KINDS})"
            r"(?:\s+(?:named|called)\s+(?P<n>[\w'-]+))?",
            True,
        ),
        (rf"\bmy\s+(?P<kind>{PET_KINDS})\s*,?\s+(?P<n>[\w'-]+)", False),
        (rf"\bmy\s+(?P<kind>{PET_KINDS})\b(?P<n>)", False),
    ]
    for pattern, named in patterns:
        for m in re.finditer(pattern, s, I):
            kind = m.group("kind").lower()
            name = _name_at(s, m, caps, named=named)
            if m.group("n") and not name:
                continue
            facts: list[Fact] = []
            end = m.start("n") + len(name) if name else m.end("kind")
            age = _AGE_AFTER.match(s, end)
            if age:
                facts.append(_pet_age(name, kind, age))
            if name and (kind != "pet" or not age):
                ident = _slug(name)
                slot, key = (f"pet:{ident}", "kind"), f"profile:pet:{ident}:kind"
                attrs = {"kind": kind, "name": name}
                facts.append(_fact("pet", "pet", 0.75, slot, attrs, key, allows_time=False))
            if facts:
                return facts
    return []


_BARE_AGE = re.compile(
    rf"\b(?P<n>[A-Z][\w'-]+|she|he|it)\s+(?P<verb>just\s+turned|turned|is\s+now|"
    rf"has\s+(?:just\s+)?turned|is)\s+(?:now\s+)?{_AGE}{_AGE_UNIT}",
)


def _rule_named_age(
    s: str, caps: bool, entities: dict[str, tuple[str, str]], last: str | None
) -> list[Fact]:
    """ "Luna turned 4", "She is now 4": an age of an entity named here or in earlier turns."""
    for m in _BARE_AGE.finditer(s):
        raw = m.group("n")
        is_pronoun = raw.lower() in ("she", "he", "it")
        if not is_pronoun and raw.lower() in _NOT_NAMES:
            continue
        if m.group("verb").lower() == "is" and not m.group("unit"):
            continue  # "Luna is 4" needs "years old"; "turned" / "is now" are enough
        name = last if is_pronoun else raw
        if not name:
            continue
        kind_of, kind = entities.get(name.lower(), ("pet", "pet"))
        if kind_of == "person":
            return [_person_age(name, kind, m)]
        return [_pet_age(name, kind, m)]
    return []


def _rule_language(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        rf"\b(?:(?:please\s+)?(?:reply|respond|answer|write|talk|speak)(?:\s+to\s+me)?\s+in|"
        rf"i(?:'d|\s+would)?\s+prefer\s+(?:to\s+(?:speak|talk|write)\s+(?:in\s+)?|replies\s+in\s+|"
        rf"answers\s+in\s+)?)\s*(?P<lang>{LANGUAGES})\b",
        s,
        I,
    )
    if m:
        attrs = {"language": m.group("lang").capitalize()}
        return [
            _fact(
                "reply language",
                "preference",
                0.75,
                ("user", "reply language"),
                attrs,
                "preference:language",
            )
        ]
    m = re.search(
        rf"\b(?:my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is|i\s+speak)\s+"
        rf"(?P<lang>{LANGUAGES})\b",
        s,
        I,
    )
    if not m:
        return []
    attrs = {"language": m.group("lang").capitalize()}
    return [_fact("language", "profile", 0.7, ("user", "language"), attrs, "profile:language")]


_PREFER = r"\b(?:prefer|like|love|want|rather|keep|be|make|always|please|use|work\s+best)\b"


def _rule_reply_style(s: str, caps: bool) -> list[Fact]:
    if not re.search(_PREFER, s, I):
        return []
    subject = re.search(
        r"\b(?:repl(?:y|ies)|answers?|responses?|messages?|summar(?:y|ies)|texts?)\b", s, I
    )
    length = re.search(
        r"\b(?P<l>short(?:er)?|brief(?:er)?|concise|succinct|terse|to the point|long(?:er)?|"
        r"detailed|in-depth|thorough)\b",
        s,
        I,
    )
    if subject and length:
        word = length.group("l").lower()
        value = (
            "detailed"
            if word in ("long", "longer", "detailed", "in-depth", "thorough")
            else ("short")
        )
        return [
            _fact(
                "reply length",
                "preference",
                0.7,
                ("user", "reply length"),
                {"length": value},
                "preference:reply_length",
            )
        ]
    tone = re.search(
        r"\b(?P<t>formal|informal|casual|friendly|professional|direct|warm|polite|playful|"
        r"serious)\b(?=.*\b(?:tone|style|voice|manner|repl|answer|respon)|\s+(?:tone|style))",
        s,
        I,
    )
    if tone:
        attrs = {"tone": tone.group("t").lower()}
        return [_fact("tone", "preference", 0.7, ("user", "tone"), attrs, "preference:tone")]
    return []


# What makes a standing instruction one for the assistant: it names the user, or something the
# assistant does (replies, reminders, emails, meetings, the calendar).
_FOR_THE_ASSISTANT = re.compile(
    r"\b(?:me|my|i|mine|myself|remind\w*|send\w*|e-?mails?|schedul\w*|book\w*|cancel\w*|"
    r"meetings?|calendar|events?|appointments?|repl(?:y|ies)|answers?|respon\w*|messages?|"
    r"texts?|calls?|notif\w*|summar\w*|translat\w*|draft\w*|cc|bcc|forward\w*|invit\w*|"
    r"format\w*|address\w*|use|suggest\w*|recommend\w*|ask\w*|tell\w*|write|writing)\b",
    I,
)


def _rule_instruction(s: str, caps: bool) -> list[Fact]:
    m = re.match(
        r"^(?:please\s+)?(?:(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future)[,]?\s+)"
        r"(?:please\s+)?(?P<what>.+)$|^(?:please\s+)?(?P<what2>(?:always|never|don't\s+ever|"
        r"do\s+not\s+ever)\s+.+)$",
        s.strip(),
        I,
    )
    if not m:
        return []
    what = (m.group("what") or m.group("what2") or "").strip().rstrip(".!")
    style = _rule_reply_style(what, caps) or _rule_language(what, caps)
    if style:
        return style
    if not _FOR_THE_ASSISTANT.search(what):
        return []  # "never give up", "always be yourself": encouragement, not an instruction
    what = third_person(what)
    what = what[:1].lower() + what[1:]
    slot = ("user", f"instruction:{' '.join(sorted(content_words(what)))}")
    return [_fact("instruction", "preference", 0.7, slot, {"what": what})]


def _rule_diet(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\bi(?:'m|\s+am)\s+(?:an?\s+)?(?P<d>vegetarian|vegan|pescatarian|gluten[- ]free|"
        r"lactose[- ]intolerant|celiac|coeliac|diabetic)\b",
        s,
        I,
    )
    if not m:
        m = re.search(
            r"\bi\s+(?:follow|eat|keep|am\s+on)\s+an?\s+(?P<d>vegetarian|vegan|pescatarian|"
            r"gluten[- ]free)\s+diet\b",
            s,
            I,
        )
    if not m and re.search(r"\bi\s+(?:don'?t|do\s+not|never)\s+eat\s+(?:any\s+)?meat\b", s, I):
        return [
            _fact("diet", "profile", 0.8, ("user", "diet"), {"diet": "vegetarian"}, "profile:diet")
        ]
    if m:
        attrs = {"diet": m.group("d").lower()}
        return [_fact("diet", "profile", 0.8, ("user", "diet"), attrs, "profile:diet")]
    m = re.search(r"\bi(?:'m|\s+am)\s+(?:very\s+|severely\s+)?allergic\s+to\s+(?P<w>.+)", s, I)
    if not m:
        return []
    what = _clause(m.group("w"))
    slot = ("user", f"allergy {what.lower()}")
    return [
        _fact("allergy", "profile", 0.85, slot, {"what": what}, f"profile:allergy:{_slug(what)}")
    ]


def _rule_goal(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\b(?:my\s+(?:main\s+|big\s+|biggest\s+|current\s+|new\s+)?goal\s+is\s+to|"
        r"i(?:'m|\s+am)\s+(?:trying|working|hoping|aiming|planning)\s+to|"
        r"i\s+(?:want|hope|plan)\s+to\s+(?=(?:learn|become|get\s+better|improve|lose|gain|run|"
        r"save|finish|build|start|quit|stop|read|write|travel|speak|master|retire)\b))\s*"
        r"(?P<what>.+)",
        s,
        I,
    )
    if m:
        what = third_person(_clause(m.group("what")))
        slot = ("user", f"goal:{' '.join(sorted(content_words(what)))}")
        return [_fact("goal", "goal", 0.7, slot, {"what": what}, allows_time=False)]
    m = re.search(
        r"\bi(?:'m|\s+am)\s+(?:currently\s+)?(?P<verb>learning|studying|training\s+for|"
        r"practi[cs]ing)\s+(?P<what>.+)",
        s,
        I,
    )
    if not m:
        return []
    what = third_person(_clause(m.group("what")))
    verb = re.sub(r"\s+", " ", m.group("verb").lower())
    slot = ("user", f"goal:{' '.join(sorted(content_words(what)))}")
    attrs = {"verb": verb, "what": what}
    return [_fact("learning", "goal", 0.7, slot, attrs, allows_time=False)]


def _rule_interest(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\b(?:i(?:'m|\s+am)\s+(?:really\s+|very\s+|quite\s+)?(?:into|interested\s+in|"
        r"passionate\s+about|a\s+(?:big\s+|huge\s+)?fan\s+of|fascinated\s+by)|"
        r"my\s+(?:favou?rite\s+)?hobb(?:y\s+is|ies\s+are)|i\s+(?:love|enjoy)\s+(?=\w+ing\b))\s*"
        r"(?P<what>.+)",
        s,
        I,
    )
    if not m:
        return []
    what = third_person(_clause(m.group("what")))
    if what.lower() in ("it", "that", "this", "them"):
        return []
    slot = ("user", f"interest:{' '.join(sorted(content_words(what)))}")
    return [_fact("interest", "interest", 0.55, slot, {"what": what}, allows_time=False)]


_VERB3 = {
    "love": "loves",
    "like": "likes",
    "enjoy": "enjoys",
    "adore": "adores",
    "hate": "hates",
    "dislike": "dislikes",
    "can't stand": "can't stand",
    "cannot stand": "can't stand",
    "don't like": "doesn't like",
    "do not like": "doesn't like",
}


def _rule_likes(s: str, caps: bool) -> list[Fact]:
    m = re.search(
        r"\bi(?:'d|\s+would)?\s+(?:really\s+|much\s+)?(?P<verb>prefer|rather)\s+(?P<what>.+)",
        s,
        I,
    )
    if m:
        what = third_person(_clause(m.group("what")))
        verb = "would rather" if m.group("verb").lower() == "rather" else "prefers"
        slot = ("user", f"prefers:{' '.join(sorted(content_words(what)))}")
        attrs = {"what": what, "verb": verb}
        return [_fact("preference", "preference", 0.6, slot, attrs, allows_time=False)]
    m = re.search(
        r"\bi\s+(?:really\s+|absolutely\s+|truly\s+)?(?P<verb>love|like|enjoy|adore|hate|dislike|"
        r"can't\s+stand|cannot\s+stand|don't\s+like|do\s+not\s+like)\s+(?P<what>.+)",
        s,
        I,
    )
    if not m:
        return []
    what = third_person(_clause(m.group("what")))
    if what.lower() in ("it", "that", "this", "them", "you", "yours") or not what:
        return []
    verb = _VERB3[re.sub(r"\s+", " ", m.group("verb").lower())]
    negative = verb in ("hates", "dislikes", "can't stand", "doesn't like")
    polarity = "dislikes" if negative else "likes"
    slot = ("user", f"{polarity}:{' '.join(sorted(content_words(what)))}")
    return [_fact("like", "preference", 0.5, slot, {"verb": verb, "what": what}, allows_time=False)]


RULES: list[tuple[str, Rule]] = [
    ("name", _rule_name),
    ("instruction", _rule_instruction),
    ("reply style", _rule_reply_style),
    ("language", _rule_language),
    ("city", _rule_city),
    ("hometown", _rule_hometown),
    ("timezone", _rule_timezone),
    ("pets", _rule_pets),
    ("people", _rule_people),
    ("age", _rule_age),
    ("job", _rule_job),
    ("diet", _rule_diet),
    ("goal", _rule_goal),
    ("interest", _rule_interest),
    ("likes", _rule_likes),
]


def extract_facts(
    sentence: str,
    entities: dict[str, tuple[str, str]] | None = None,
    last_entity: str | None = None,
) -> list[Fact]:
    """Every fact one sentence states, most important first (ties: rule order)."""
    caps = any(c.isupper() for c in sentence[1:])
    facts: list[Fact] = []
    for _label, rule in RULES:
        facts.extend(rule(sentence, caps))
    if not any(f.rule in ("pet age", "person age") for f in facts):
        facts.extend(_rule_named_age(sentence, caps, entities or {}, last_entity))
    unique: dict[tuple[str, str], Fact] = {}
    for f in facts:
        f.source = sentence.strip()
        unique.setdefault(f.slot, f)
    order = {id(f): i for i, f in enumerate(unique.values())}
    return sorted(unique.values(), key=lambda f: (-f.importance, order[id(f)]))


# ----- reading a message ---------------------------------------------------------------------

_LEAD = re.compile(
    r"^(?:(?:(?:hi|hey|hello|ok|okay|so|well|also|btw|by\s+the\s+way|oh|actually|just\s+so\s+"
    r"you\s+know|fyi|for\s+the\s+record|for\s+your\s+information|(?:please\s+)?note\s+that|"
    r"(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:remember|keep\s+in\s+mind|"
    r"don't\s+forget|note)(?:\s+that)?)[,!:.]?|(?:quick\s+update|update|correction|news)[,!:.])"
    r"\s+)+",
    I,
)


def strip_lead(sentence: str) -> str:
    """A sentence without its lead-in ("btw", "please remember that", "update:")."""
    return _LEAD.sub("", sentence)


def sentences(text: str) -> list[str]:
    """The sentences of a message (cut after . ! ? ; and at line breaks)."""
    parts = re.split(r"(?<=[.!?;])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p.strip()]


# ----- reading a summary back ----------------------------------------------------------------

_FIRST_PERSON = [
    (r"^User's\b", "my"),
    (r"^User\s+is\b", "I am"),
    (r"^User\s+has\b", "I have"),
    (r"^User\s+wants\s+you\s+to\s+(?!always\b|never\b)", "from now on, "),
    (r"^User\s+wants\s+you\s+to\s+", ""),
    (r"^User\s+wants\b", "I want"),
    (r"^User\s+doesn't\b", "I don't"),
    (r"^User\s+would\b", "I would"),
    (r"^User\s+can't\b", "I can't"),
    (r"^User\s+speaks\b", "I speak"),
    (r"^User\s+(\w+?)s\b", r"I \1"),
    (r"\btheir\b", "my"),
    (r"\bthey're\b", "I'm"),
]


def read_summary(summary: str, key: str | None = None) -> Fact | None:
    """The fact a third-person summary states (the one with `key` when several), else None."""
    text = summary.strip()
    if not text:
        return None
    first = text
    for pattern, repl in _FIRST_PERSON:
        first = re.sub(pattern, repl, first, count=1)
    facts = extract_facts(first)
    if not facts:
        facts = _rule_named_age(first, True, {}, None)
    if not facts:
        return None
    if key:
        for f in facts:
            if f.key == key:
                return f
    return facts[0]
