"""Offline drafter (seed 004 notes and handoffs) over the typed `DraftRequest`.

Each sentence of the user's own messages goes under the first section of the template whose cue
(`memoir/data/draft_sections.yaml`) it matches, else the default section; requests to draft,
small talk and questions are left out, and nothing else is ever written.
"""

from __future__ import annotations

import re
from typing import Any

from memoir.drafting import TEMPLATES, DraftKind, DraftRequest, DraftSection, DraftSections
from memoir.drafting import draft_table as _table
from memoir.embeddings import Embedder


def user_sentences(request: DraftRequest) -> list[str]:
    """The statements of the user's own messages: requests, small talk and questions left out."""
    skip = _table()["skip"]
    out: list[str] = []
    for said in request.session:
        if said.role != "user":
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", said.text.strip()):
            sentence = sentence.strip()
            if (
                len(sentence.split()) < 2
                or sentence.endswith("?")
                or re.search(skip["request"], sentence, re.I)
                or re.match(skip["small_talk"], sentence, re.I)
            ):
                continue
            out.append(sentence if sentence[-1] in ".!" else sentence + ".")
    return out


def _section_for(sentence: str, kind: DraftKind) -> str:
    """The first section, in filing order, whose cue the sentence matches; else the default."""
    sections: dict[str, dict[str, Any]] = _table()["templates"][kind]
    for name, section in sections.items():
        if section.get("cue") and re.search(section["cue"], sentence, re.I):
            return name
    return next(name for name, section in sections.items() if section.get("default"))


def draft_offline(request: DraftRequest, embedder: Embedder | None = None) -> DraftSections:
    """Each user sentence under its section; every section of the template is given."""
    filed: dict[str, list[str]] = {name: [] for name in TEMPLATES[request.kind]}
    for sentence in user_sentences(request):
        filed[_section_for(sentence, request.kind)].append(sentence)
    return DraftSections(
        sections=[DraftSection(name=name, sentences=sentences) for name, sentences in filed.items()]
    )
