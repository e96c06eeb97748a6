"""A message read as clauses: who does what, in which tense and mood (the offline model's parser).

Not one pattern per sentence, but a small grammar of English clauses:

- `split_clauses` cuts a sentence where a new clause starts: at ";", ":", dashes, and at ",",
  "and", "but", "so", "because" … when a subject follows ("My dog Luna is 3 and I live in
  Lisbon" → two clauses; "I love hiking and cycling" stays one).
- `parse_clause` finds the subject at the start (I, we, my sister Ngozi, my dog, a name, a
  pronoun, you; none for an imperative; an implied "I" for a diary-style "Lost my job …"), then
  adverbs, auxiliaries and negation, then the verb: its tense (past, present, perfect,
  progressive, future, modal) comes from the auxiliaries and the verb's form (a table of
  irregular verbs and the regular "-ed"), and what follows is the object.
- `is_event_verb` tells events (went, lost, adopted, started, moved, bought, visited, …) from
  other past verbs (thought, said, felt); `is_opinion_verb` tells talk about the conversation
  (think, guess, hope, mean, know) from statements about the world.

Verb forms are turned into the third person by `third_person_verb` (drive → drives, have →
has, am → is), so a first-person clause can be said about its speaker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "EVENT_VERBS",
    "Clause",
    "Subject",
    "expand_contraction",
    "gerund",
    "is_adverb",
    "is_strong_verb",
    "is_event_verb",
    "is_opinion_verb",
    "lemma_candidates",
    "parse_clause",
    "past_form",
    "split_clauses",
    "third_person_verb",
]

SubjectKind = Literal["speaker", "group", "possessed", "name", "pronoun", "listener", "none"]
Tense = Literal["past", "present", "perfect", "progressive", "future", "modal", "imperative"]


def _vocabulary(words: str) -> frozenset[str]:
    """A set of words written as one string, separated by white space."""
    return frozenset(words.split())


# lemma, past, past participle
_IRREGULAR_TABLE = """
be was been|become became become|begin began begun|break broke broken|bring brought brought
build built built|buy bought bought|catch caught caught|choose chose chosen|come came come
cut cut cut|do did done|draw drew drawn|drink drank drunk|drive drove driven|eat ate eaten
fall fell fallen|feel felt felt|fight fought fought|find found found|fly flew flown
forget forgot forgotten|get got gotten|give gave given|go went gone|grow grew grown
have had had|hear heard heard|hide hid hidden|hit hit hit|hold held held|hurt hurt hurt
keep kept kept|know knew known|lead led led|leave left left|lend lent lent|let let let
lose lost lost|make made made|mean meant meant|meet met met|pay paid paid|put put put
quit quit quit|read read read|ride rode ridden|ring rang rung|rise rose risen|run ran run
say said said|see saw seen|sell sold sold|send sent sent|set set set|shoot shot shot
show showed shown|shut shut shut|sing sang sung|sit sat sat|sleep slept slept|speak spoke spoken
spend spent spent|split split split|stand stood stood|steal stole stolen|swim swam swum
take took taken|teach taught taught|tell told told|think thought thought|throw threw thrown
understand understood understood|wake woke woken|wear wore worn|win won won|write wrote written
bake baked baked|bet bet bet|bite bit bitten|blow blew blown|dig dug dug|feed fed fed
forgive forgave forgiven|freeze froze frozen|hang hung hung|light lit lit|seek sought sought
shake shook shaken|sink sank sunk|slide slid slid|spin spun spun|stick stuck stuck
sting stung stung|strike struck struck|swear swore sworn|sweep swept swept|tear tore torn
upset upset upset|weave wove woven|wind wound wound|undergo underwent undergone
overcome overcame overcome|withdraw withdrew withdrawn|rebuild rebuilt rebuilt
"""
_IRREGULAR: dict[str, tuple[str, str]] = {
    forms[0]: (forms[1], forms[2])
    for forms in (entry.split() for entry in _IRREGULAR_TABLE.replace("\n", "|").split("|"))
    if len(forms) == 3
}
_PAST_OF: dict[str, str] = {past: lemma for lemma, (past, _p) in _IRREGULAR.items()}
_PARTICIPLE_OF: dict[str, str] = {part: lemma for lemma, (_p, part) in _IRREGULAR.items()}

# Events people tell of: things that happened to them or that they did, once.
EVENT_VERBS = _vocabulary(
    """
    go visit travel fly drive ride move relocate leave arrive return come
    lose adopt rescue buy purchase sell rent order get receive win earn find
    start begin launch open found establish create build finish complete end close quit
    retire resign join enroll enrol register sign apply graduate pass fail
    meet marry wed divorce separate propose engage date split break
    attend celebrate host throw organize organise perform play compete enter run hike climb
    swim cycle race
    take give bring sprain twist gain accept
    hire promote fire lay
    hurt injure break fall crash die recover undergo operate
    learn teach publish release record write paint bake cook plant grow renovate decorate
    book cancel switch change pick try decide volunteer donate raise save
    land score sing speak present pitch
    """
)
# Verbs about the conversation or the speaker's mind, not about the world.
OPINION_VERBS = _vocabulary(
    """
    think guess hope mean know suppose believe reckon wonder bet imagine feel wish agree
    doubt suspect understand see hear say tell ask promise admit remember forget realize
    realise notice appreciate love like miss need want care mind thank sound look seem
    can't cannot
    """
)
_STATIVE_ADJECTIVES = _vocabulary(
    """
    married single divorced engaged widowed pregnant retired unemployed vegan vegetarian
    pescatarian diabetic allergic sober adopted left-handed right-handed bilingual
    self-employed
    """
)
_MODALS = _vocabulary(
    "can could would should might may must shall can't couldn't wouldn't shouldn't mustn't"
)
_FUTURE = _vocabulary("will 'll won't gonna")
_BE_PRESENT = _vocabulary("am is are 'm 's 're")
_BE_PAST = _vocabulary("was were")
_HAVE = _vocabulary("have has 've")
_DO_PRESENT = _vocabulary("do does don't doesn't")
_DO_PAST = _vocabulary("did didn't")
_NEGATIONS = _vocabulary("not never n't")
_ADVERBS = _vocabulary(
    """
    just also still finally recently really actually now already even ever never always usually
    often sometimes both all literally officially basically honestly totally definitely
    probably currently mostly again then only soon once twice too so very
    """
)
_PERSONAL = {"he", "she", "they", "it", "this", "that", "there", "these", "those"}
_LISTENER = {"you", "you're", "you've", "you'll", "you'd", "your", "yours", "u", "ya", "y'all"}
_SPEAKER = {"i", "i'm", "i've", "i'll", "i'd", "im", "ive"}
_GROUP = {"we", "we're", "we've", "we'll", "we'd"}
_POSSESSIVES = {"my", "our"}
_NOT_NAMES = _vocabulary(
    """
    the a an and but so or if then when while because since though although yes no yeah yep
    nope ok okay oh ah aw aww wow haha lol omg hey hi hello thanks thank congrats congratulations
    sorry please well sure great good nice cool awesome amazing happy merry dear sounds seems
    looks tell let what who where why how which whose is are was were do does did have has had
    can could would should will might must also just still maybe perhaps actually honestly
    anyway besides same speaking talking everyone everybody someone somebody nobody nothing
    something everything anything today tomorrow yesterday tonight last next this that these
    those there here not never always both all some many most his her their its one two three
    four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred half
    first second third last every each another other big little new old
    """
)
_CLAUSE_CUT = re.compile(r"\s*(?:;|:|\s[-–—]\s)\s*")
_LEADING_ADVERBS = re.compile(
    r"(?:(?:now|then|also|still|later|finally|anyway|actually)\s+)*", re.I
)
# A time or a sequence said before the subject: "Yesterday I …", "Last week, my sister …",
# "On Monday we …", "Two days ago I …", "After work I …".
_LEADING_WHEN = re.compile(
    r"^\s*(?:yesterday|today|tonight|earlier|recently|lately|finally|then|later|eventually|"
    r"(?:last|this|next|that)\s+\w+|(?:the\s+)?day\s+before\s+yesterday|"
    r"(?:on|in|at|during|after|before|since|over)\s+(?:the\s+)?[\w'-]+(?:\s+\d{1,4})?|"
    r"(?:\w+|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|months?|years?)\s+ago)\s*,?\s+",
    re.I,
)
_JOINERS = re.compile(
    r"(?:,\s*(?:and|but|so|then|because|though|although|while|since)?|"
    r"\s(?:and|but|so|then|because|though|although|while|since|plus)|"
    r"\s(?:and|but|so)\s+then)\s+",
    re.I,
)


@dataclass(frozen=True)
class Subject:
    """Who a clause is about, as said: its kind, its words, and for "my X" the noun and name."""

    kind: SubjectKind
    text: str = ""
    noun: str = ""  # "sister" of "my sister Ngozi", "dog" of "my dog"
    name: str = ""  # "Ngozi" of "my sister Ngozi", "Luna" of "Luna"
    plural: bool = False
    owner: str = ""  # "Carmen" of "Carmen's highlight" (empty: the speaker's "my")
    partner: str = ""  # "Priscilla" of "he and Priscilla", "Tom" of "Tom and I"


@dataclass(frozen=True)
class Clause:
    """One clause: subject, the verb's words as said (auxiliaries included), lemma, tense, rest."""

    text: str
    subject: Subject
    verb_phrase: str = ""
    lemma: str = ""
    tense: Tense = "present"
    negated: bool = False
    copula: bool = False  # "is a nurse": the rest is a complement, not an object
    rest: str = ""

    @property
    def has_verb(self) -> bool:
        return bool(self.verb_phrase)


# ----- morphology ------------------------------------------------------------------------------


def lemma_candidates(word: str) -> set[str]:
    """The lemmas a verb form may have: went → {go}; adopted → {adopt, adopte}; tries → {try}."""
    w = word.lower().strip("'’")
    out = {w}
    if w in _PAST_OF:
        out.add(_PAST_OF[w])
    if w in _PARTICIPLE_OF:
        out.add(_PARTICIPLE_OF[w])
    if w.endswith("ied"):
        out.add(w[:-3] + "y")
    if w.endswith("ed"):
        out |= {w[:-2], w[:-1]}
        if len(w) > 4 and w[-3] == w[-4]:
            out.add(w[:-3])  # stopped → stop
    if w.endswith("ies"):
        out.add(w[:-3] + "y")
    if w.endswith("es"):
        out.add(w[:-2])
    if w.endswith("s"):
        out.add(w[:-1])
    if w.endswith("ing"):
        out |= {w[:-3], w[:-3] + "e"}
        if len(w) > 5 and w[-4] == w[-5]:
            out.add(w[:-4])
    return out


def _is_past_form(word: str) -> bool:
    w = word.lower()
    return w in _PAST_OF or (w.endswith("ed") and len(w) > 3 and w not in ("need", "seed", "bed"))


def _is_participle(word: str) -> bool:
    w = word.lower()
    return w in _PARTICIPLE_OF or _is_past_form(w)


def _lemma(word: str) -> str:
    w = word.lower()
    if w in _PAST_OF:
        return _PAST_OF[w]
    if w in _PARTICIPLE_OF:
        return _PARTICIPLE_OF[w]
    for lemma in sorted(lemma_candidates(w), key=len):
        if lemma in EVENT_VERBS or lemma in OPINION_VERBS or lemma in _IRREGULAR:
            return lemma
    if w.endswith("ied"):
        return w[:-3] + "y"
    if w.endswith("ed"):
        return w[:-2] if not w[:-2].endswith(("at", "iv", "ov", "ag", "rs")) else w[:-1]
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    if w.endswith("ing") and len(w) > 5:
        return w[:-4] if w[-4] == w[-5] else w[:-3]
    return w


def is_event_verb(word: str) -> bool:
    """Whether a verb form (went, adopted, started) is of an event verb."""
    return bool(lemma_candidates(word) & EVENT_VERBS)


def is_opinion_verb(word: str) -> bool:
    """Whether a verb form (think, guessed, hope) is about the speaker's mind or the talk."""
    return bool(lemma_candidates(word) & OPINION_VERBS)


def past_form(word: str) -> str:
    """The simple past of a verb form: started → started, gone → went, got → got."""
    w = word.lower()
    lemma = _PARTICIPLE_OF.get(w) or _PAST_OF.get(w)
    if lemma is not None:
        return _IRREGULAR[lemma][0]
    return word


def gerund(word: str) -> str:
    """The "-ing" form of a verb: book → booking, schedule → scheduling, plan → planning."""
    w = word.lower()
    if w.endswith("ie"):
        return w[:-2] + "ying"
    if w.endswith("e") and w not in ("be", "see", "free", "agree"):
        return w[:-1] + "ing"
    if len(w) <= 4 and re.search(r"(?:^|[^aeiou])[aeiou][^aeiouwxy]$", w):
        return w + w[-1] + "ing"
    return w + "ing"


def third_person_verb(word: str) -> str:
    """The third-person singular present of a first-person form: drive → drives, am → is."""
    w = word.lower()
    special = {
        "am": "is",
        "'m": "is",
        "are": "is",
        "'re": "is",
        "were": "was",
        "have": "has",
        "'ve": "has",
        "do": "does",
        "don't": "doesn't",
        "go": "goes",
    }
    if w in special:
        return special[w]
    if w in _MODALS or w in _FUTURE or _is_past_form(w) or w.endswith("n't"):
        return word
    if re.search(r"(?:s|sh|ch|x|z|o)$", w):
        return word + "es"
    if re.search(r"[^aeiou]y$", w):
        return word[:-1] + "ies"
    return word + "s"


# ----- clauses ---------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Words, with contractions split off ("I'm" → "I", "'m"; "don't" stays one word)."""
    raw = re.findall(r"[\w’'-]+|[^\w\s]", text.replace("’", "'"))
    out: list[str] = []
    for token in raw:
        m = re.match(r"^(\w+)('m|'re|'ve|'ll|'d|'s)$", token, re.I)
        if m and not token.lower().endswith("n't"):
            out.extend([m.group(1), m.group(2)])
        else:
            out.append(token)
    return out


def _looks_like_verb(word: str, previous_plural: bool = False) -> bool:
    """Whether `word` can start a predicate after a noun: an auxiliary, a past or "-s" form."""
    w = word.lower()
    if w in _BE_PRESENT | _BE_PAST | _HAVE | _DO_PRESENT | _DO_PAST | _MODALS | _FUTURE:
        return True
    if w in ("had", "got", "just", "never", "always", "also", "still", "finally", "recently"):
        return True
    if _is_past_form(w) or w in _PARTICIPLE_OF:
        return True
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 2:
        return True
    return previous_plural and w.isalpha() and w not in _NOT_NAMES and len(w) > 2


def is_strong_verb(word: str) -> bool:
    """An auxiliary, a modal, or a past form: a verb whatever comes before it (unlike "runs",
    which may be a plural noun)."""
    w = word.lower()
    if w in _BE_PRESENT | _BE_PAST | _HAVE | _DO_PRESENT | _DO_PAST | _MODALS | _FUTURE:
        return True
    return w in ("had", "got") or _is_past_form(w) or w in _PARTICIPLE_OF


def is_adverb(word: str) -> bool:
    """A word that only colours the verb: just, already, really, finally, …"""
    w = word.lower()
    return w in _ADVERBS or w in _NEGATIONS or (w.endswith("ly") and len(w) > 4)


def expand_contraction(word: str, following: str = "") -> str:
    """ "'s" → "is" (or "has" before a participle), "'re" → "are", "'ve" → "have", …"""
    w = word.lower()
    if w == "'s":
        return "has" if following and (_is_participle(following) or following == "been") else "is"
    return {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would"}.get(w, word)


def _is_name(word: str) -> bool:
    return (
        word[:1].isupper()
        and word.isalpha() is not False
        and word.lower() not in _NOT_NAMES
        and word.lower() not in _SPEAKER | _GROUP | _LISTENER | _PERSONAL | _POSSESSIVES
        and not word.lower().endswith("ly")
    )


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
    """The clauses of a sentence: cut at strong marks, and at joiners followed by a subject
    (never leaving a subject without its verb behind: "Tom and I went" stays whole)."""
    clauses: list[str] = []
    for part in _CLAUSE_CUT.split(sentence):
        start = 0
        for m in _JOINERS.finditer(part):
            lead = _LEADING_ADVERBS.match(part, m.end())
            after = lead.end() if lead else m.end()
            if m.start() < start or not starts_clause(part[after:]):
                continue
            left = parse_clause(part[start : m.start()])
            if left.subject.kind != "none" and not left.verb_phrase:
                continue
            clauses.append(part[start : m.start()])
            start = after
        clauses.append(part[start:])
    return [c.strip(" ,.!?") for c in clauses if c.strip(" ,.!?")]


def _subject(words: list[str]) -> tuple[Subject, int]:
    """The subject at the start of a clause and how many words it took."""
    if not words:
        return Subject("none"), 0
    first = words[0].lower()
    if _is_past_form(words[0]) and is_event_verb(words[0]) and first not in _NOT_NAMES:
        return Subject("none"), 0  # "Lost my job …": a verb, the subject left out
    if first in ("i", "im", "ive"):
        return Subject("speaker", "I"), 1
    if first == "we":
        return Subject("group", "we", plural=True), 1
    if first in ("you", "u", "ya", "y'all", "your"):
        return Subject("listener", words[0]), 1
    if first in _POSSESSIVES:
        return _possessed(words)
    if first in ("he", "she", "they"):
        return _compound(Subject("pronoun", first, plural=first == "they"), words, 1)
    if _is_name(words[0]):
        return _named(words)
    return Subject("none"), 0


def _named(words: list[str]) -> tuple[Subject, int]:
    """ "Ngozi", "Carmen and I", "Carmen's highlight", "Anna Silva"."""
    name, used = words[0], 1
    if len(words) > 1 and _is_name(words[1]) and not _looks_like_verb(words[1]):
        name, used = f"{name} {words[1]}", 2
    rest = words[used:]
    possessive = len(rest) > 2 and rest[0] == "'s" and rest[1].isalpha() and rest[1].islower()
    if possessive and is_strong_verb(rest[2]):  # "Carmen's highlight was …", not "Carmen is"
        noun = rest[1].lower()
        return Subject("possessed", f"{name}'s {noun}", noun=noun, owner=name), used + 2
    return _compound(Subject("name", name, name=name), words, used)


def _compound(subject: Subject, words: list[str], used: int) -> tuple[Subject, int]:
    """ "Tom and I" (the speaker with Tom), "he and Priscilla" (two people)."""
    if used + 1 >= len(words) or words[used].lower() != "and":
        return subject, used
    other = words[used + 1]
    if other.lower() in ("i", "me"):
        partner = subject.name or subject.text
        return Subject("group", f"{subject.text} and I", partner=partner, plural=True), used + 2
    if _is_name(other):
        text = f"{subject.text} and {other}"
        return Subject(subject.kind, text, name=subject.name, partner=other, plural=True), used + 2
    return subject, used


def _possessed(words: list[str]) -> tuple[Subject, int]:
    """ "my sister Ngozi", "my best friend Tom", "my dog", "our kids": noun, name, plural."""
    owner = words[0]
    nouns: list[str] = []
    i = 1
    while i < len(words) and len(nouns) < 3:
        word = words[i]
        if not re.match(r"^[\w-]+$", word) or word.lower() in ("'s",):
            break
        if nouns and (_is_name(word) or _looks_like_verb(word, nouns[-1].endswith("s"))):
            break
        nouns.append(word.lower())
        i += 1
    if not nouns:
        return Subject("none"), 0
    name_words: list[str] = []
    if i < len(words) and words[i] == ",":
        j = i + 1
        if j < len(words) and _is_name(words[j]):
            name_words, i = [words[j]], j + 1
            if i < len(words) and words[i] == ",":
                i += 1
    while i < len(words) and _is_name(words[i]) and len(name_words) < 2:
        name_words.append(words[i])
        i += 1
    noun = " ".join(nouns)
    text = " ".join([owner, noun, *name_words])
    plural = nouns[-1].endswith("s") and not nouns[-1].endswith("ss") and not name_words
    return Subject("possessed", text, noun=noun, name=" ".join(name_words), plural=plural), i


def parse_clause(text: str) -> Clause:
    """Subject, verb (with its auxiliaries), tense, negation and the rest of one clause."""
    lead = _LEADING_WHEN.match(text)
    if lead and starts_clause(text[lead.end() :]):
        return replace(parse_clause(text[lead.end() :]), text=text)
    words = _words(text)
    subject, used = _subject(words)
    if subject.kind == "none":
        if words and _is_past_form(words[0]) and is_event_verb(words[0]):
            subject, used = Subject("speaker", "", plural=False), 0  # "Lost my job yesterday"
        else:
            return Clause(text, subject, tense="imperative" if words else "present")
    return _predicate(text, subject, words, used)


def _predicate(text: str, subject: Subject, words: list[str], i: int) -> Clause:
    aux: list[str] = []
    negated = False
    while i < len(words):
        w = words[i].lower()
        if w in _NEGATIONS or w.endswith("n't"):
            negated = negated or w in _NEGATIONS or w.endswith("n't")
        if w in _ADVERBS or w in _NEGATIONS or (w.endswith("ly") and len(w) > 4):
            aux.append(words[i])
            i += 1
            continue
        if w in _FUTURE or (w == "going" and i + 1 < len(words) and words[i + 1] == "to"):
            return Clause(text, subject, words[i], "", "future", negated, rest=_join(words[i:]))
        if w in _MODALS or w == "'d":
            return Clause(text, subject, words[i], "", "modal", negated, rest=_join(words[i + 1 :]))
        if w in _BE_PRESENT | _BE_PAST:
            return _after_be(text, subject, words, i, aux, negated)
        if w in _HAVE and _got_after(words, i + 1):  # "I've got a dog": having, not getting
            j = _got_after(words, i + 1)
            phrase = _join([*aux, words[i], *words[i + 1 : j + 1]])
            rest = _join(words[j + 1 :])
            return Clause(text, subject, phrase, "have", "present", negated, rest=rest)
        if w in _HAVE and i + 1 < len(words) and _participle_after(words, i + 1):
            j = _participle_after(words, i + 1)
            phrase = _join([*aux, words[i], *words[i + 1 : j + 1]])
            kind: Tense = "progressive" if words[j].lower().endswith("ing") else "perfect"
            return Clause(
                text, subject, phrase, _lemma(words[j]), kind, negated, rest=_join(words[j + 1 :])
            )
        if w in _DO_PRESENT | _DO_PAST and i + 1 < len(words):
            negated = negated or w.endswith("n't") or words[i + 1].lower() in _NEGATIONS
            j = i + 1
            while j < len(words) and (words[j].lower() in _ADVERBS | _NEGATIONS):
                j += 1
            if j >= len(words):
                break
            when: Tense = "past" if w in _DO_PAST else "present"
            phrase = _join([*aux, *words[i : j + 1]])
            return Clause(
                text, subject, phrase, _lemma(words[j]), when, negated, rest=_join(words[j + 1 :])
            )
        break
    if i >= len(words) or not re.match(r"^[a-z][\w-]*$", words[i], re.I):
        return Clause(text, subject)
    verb = words[i]
    if verb.lower() in _NOT_NAMES and not is_strong_verb(verb):
        return Clause(text, subject)  # "he and …", "she the …": no verb where one should be
    if subject.kind in ("name", "possessed") and not _looks_like_verb(verb, subject.plural):
        return Clause(text, subject)  # "Grumpy as ever": no verb, no clause
    if verb.lower() == "used" and i + 2 < len(words) and words[i + 1].lower() == "to":
        phrase = _join([*aux, *words[i : i + 3]])
        lemma = _lemma(words[i + 2])
        return Clause(text, subject, phrase, lemma, "past", negated, rest=_join(words[i + 3 :]))
    tense: Tense = "past" if _is_past_form(verb) else "present"
    phrase = _join([*aux, verb])
    return Clause(text, subject, phrase, _lemma(verb), tense, negated, rest=_join(words[i + 1 :]))


def _got_after(words: list[str], j: int) -> int:
    """Index of "got" right after "have" (adverbs skipped), else 0."""
    while j < len(words) and words[j].lower() in _ADVERBS:
        j += 1
    return j if j < len(words) and words[j].lower() == "got" else 0


def _participle_after(words: list[str], j: int) -> int:
    """Index of the participle after "have" (adverbs skipped), else 0."""
    while j < len(words) and words[j].lower() in _ADVERBS | _NEGATIONS:
        j += 1
    if j < len(words) and (_is_participle(words[j]) or words[j].lower() == "been"):
        if words[j].lower() == "been" and j + 1 < len(words) and words[j + 1].endswith("ing"):
            return j + 1
        return j
    return 0


def _after_be(
    text: str, subject: Subject, words: list[str], i: int, aux: list[str], negated: bool
) -> Clause:
    """ "is a nurse" (copula), "was walking" (progressive), "got married" / "was fired"."""
    be = words[i]
    past = be.lower() in _BE_PAST
    j = i + 1
    while j < len(words) and words[j].lower() in _ADVERBS | _NEGATIONS:
        negated = negated or words[j].lower() in _NEGATIONS
        j += 1
    nxt = words[j] if j < len(words) else ""
    if nxt.lower() == "going" and j + 1 < len(words) and words[j + 1].lower() == "to":
        return Clause(
            text,
            subject,
            _join(words[i : j + 2]),
            "",
            "future",
            negated,
            rest=_join(words[j + 2 :]),
        )
    if nxt.lower().endswith("ing") and len(nxt) > 4:
        tense: Tense = "past" if past else "progressive"
        phrase = _join([*aux, *words[i : j + 1]])
        rest = _join(words[j + 1 :])
        return Clause(text, subject, phrase, _lemma(nxt), tense, negated, rest=rest)
    if nxt and _is_past_form(nxt) and nxt.lower() not in _STATIVE_ADJECTIVES and is_event_verb(nxt):
        # passive of an event: "was fired", "got married" is handled as "get"
        phrase = _join([*aux, *words[i : j + 1]])
        return Clause(
            text,
            subject,
            phrase,
            _lemma(nxt),
            "past" if past else "perfect",
            negated,
            rest=_join(words[j + 1 :]),
        )
    phrase = _join([*aux, be])
    return Clause(
        text,
        subject,
        phrase,
        "be",
        "past" if past else "present",
        negated,
        True,
        _join(words[i + 1 :]),
    )


def _join(words: list[str]) -> str:
    text = " ".join(words)
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    return re.sub(r"\s+('(?:m|re|ve|ll|d|s))\b", r"\1", text)
