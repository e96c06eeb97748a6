"""Split markdown or plain text into retrieval chunks of about 800 characters.

Headings (`#`..`######`) start sections; a chunk never spans two sections and carries its
heading path ("Handbook > Refunds"). Inside a section, paragraphs are packed together up to the
target size; a paragraph longer than that is cut on sentence (then word) boundaries. Consecutive
chunks of one section overlap by a short tail (the last sentence, at most `overlap` characters)
so a fact cut at a boundary is still found whole in one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TARGET_CHARS = 800
OVERLAP_CHARS = 120

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    heading: str
    text: str

    def embedding_text(self) -> str:
        """What gets embedded: the heading path, then the text."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading path, paragraphs) per section, in order; empty sections dropped."""
    sections: list[tuple[str, list[str]]] = []
    path: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False

    def end_paragraph() -> None:
        if current:
            paragraphs.append("\n".join(current).strip())
            current.clear()

    def end_section() -> None:
        end_paragraph()
        kept = [p for p in paragraphs if p]
        if kept:
            sections.append((" > ".join(title for _, title in path), kept))
        paragraphs.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            end_section()
            level = len(heading.group(1))
            path = [(lvl, title) for lvl, title in path if lvl < level]
            path.append((level, heading.group(2).strip()))
        elif not line.strip() and not in_fence:
            end_paragraph()
        else:
            current.append(line.rstrip())
    end_section()
    return sections


def _pieces(paragraph: str, target: int) -> list[str]:
    """A paragraph cut into pieces of at most `target` characters (sentences, then words)."""
    if len(paragraph) <= target:
        return [paragraph]
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > target:
            cut = sentence.rfind(" ", 0, target)
            cut = cut if cut > 0 else target
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            pieces.append(sentence)
    return pieces


def _tail(text: str, overlap: int) -> str:
    """The overlap carried into the next chunk: the last sentence, if short enough."""
    if overlap <= 0:
        return ""
    last = _SENTENCE_END.split(text)[-1].strip()
    return last if 0 < len(last) <= overlap and last != text.strip() else ""


def chunk_text(text: str, target: int = TARGET_CHARS, overlap: int = OVERLAP_CHARS) -> list[Chunk]:
    """The chunks of a markdown or plain-text document, numbered from 0."""
    chunks: list[Chunk] = []
    for heading, paragraphs in _sections(text):
        pieces = [piece for p in paragraphs for piece in _pieces(p, target)]
        body: list[str] = []
        size = 0
        fresh = False  # whether `body` holds anything beyond the overlap
        for piece in pieces:
            if body and fresh and size + len(piece) + 2 > target:
                joined = "\n\n".join(body)
                chunks.append(Chunk(len(chunks), heading, joined))
                tail = _tail(joined, overlap)
                body = [tail] if tail else []
                size = len(tail)
                fresh = False
            body.append(piece)
            size += len(piece) + 2
            fresh = True
        if body and fresh:
            chunks.append(Chunk(len(chunks), heading, "\n\n".join(body)))
    return chunks


def document_title(text: str, fallback: str) -> str:
    """The first level-1 heading, else `fallback` made readable ("team_handbook" → "Team
    Handbook")."""
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m and len(m.group(1)) == 1:
            return m.group(2).strip()
    words = re.sub(r"[_\-]+", " ", fallback).split()
    return " ".join(w[:1].upper() + w[1:] for w in words) or fallback
