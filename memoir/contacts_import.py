"""Read contacts from a vCard (.vcf) or CSV file, checking every entry before anything is stored.

CSV: a header row is required and must name the columns `name`, `email` and optionally `phone`
(any order, any case). vCard: each card's `FN` (or `N`), first `EMAIL` and first `TEL`.
A bad entry is reported with its line number (CSV) or card number (vCard); one bad entry and the
whole file is refused, so an import is never half done.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import vobject

from memoir.stores.contacts import NewContact

_EMAIL = re.compile(
    r"^[^\s<>@\",;:()\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+$"
)


class ContactImportError(ValueError):
    """The file cannot be imported; `problems` lists every bad entry (e.g. 'line 3: ...')."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{path}: nothing imported:\n" + "\n".join(f"  {p}" for p in problems))


def read_contacts(path: Path) -> tuple[list[NewContact], str]:
    """The contacts of a .vcf/.vcard or .csv file and their source ('vcard' or 'csv')."""
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8-sig")
    if suffix in (".vcf", ".vcard"):
        return parse_vcard(text, path), "vcard"
    if suffix == ".csv":
        return parse_csv(text, path), "csv"
    raise ContactImportError(path, [f"unsupported file type '{suffix}' (use .vcf or .csv)"])


def _check(name: str, email: str, where: str) -> str | None:
    if not name.strip():
        return f"{where}: missing name"
    if not email.strip():
        return f"{where}: missing email for {name.strip()!r}"
    if not _EMAIL.match(email.strip()):
        return f"{where}: invalid email {email.strip()!r}"
    return None


def parse_csv(text: str, path: Path | str = "<csv>") -> list[NewContact]:
    """Contacts of a CSV with a header naming `name`, `email` (and optionally `phone`)."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    columns = [c.strip().lower() for c in header or []]
    if "name" not in columns or "email" not in columns:
        raise ContactImportError(
            path, ["line 1: the header must name the columns name,email (and optionally phone)"]
        )
    index = {c: i for i, c in enumerate(columns)}
    contacts: list[NewContact] = []
    problems: list[str] = []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            problems.append(f"line {line}: expected {len(columns)} columns, got {len(row)}")
            continue
        name, email = row[index["name"]], row[index["email"]]
        phone = row[index["phone"]] if "phone" in index else ""
        problem = _check(name, email, f"line {line}")
        if problem:
            problems.append(problem)
            continue
        contacts.append(NewContact(name=name.strip(), email=email.strip(), phone=phone.strip()))
    if problems:
        raise ContactImportError(path, problems)
    return contacts


def _value(card: Any, key: str) -> str:
    entries = card.contents.get(key) or []
    return str(entries[0].value).strip() if entries else ""


def _name(card: Any) -> str:
    full = _value(card, "fn")
    if full:
        return full
    entries = card.contents.get("n") or []
    if not entries:
        return ""
    n = entries[0].value
    return " ".join(str(p).strip() for p in (n.given, n.additional, n.family) if str(p).strip())


def parse_vcard(text: str, path: Path | str = "<vcard>") -> list[NewContact]:
    """Contacts of a vCard file: each card's name, first email and first phone."""
    try:
        cards = list(vobject.readComponents(text))
    except Exception as error:  # vobject raises ParseError and friends
        raise ContactImportError(path, [f"not a readable vCard file: {error}"]) from error
    contacts: list[NewContact] = []
    problems: list[str] = []
    for number, card in enumerate(cards, start=1):
        if card.name.upper() != "VCARD":
            problems.append(f"card {number}: not a VCARD ({card.name})")
            continue
        name, email = _name(card), _value(card, "email")
        problem = _check(name, email, f"card {number}")
        if problem:
            problems.append(problem)
            continue
        contacts.append(NewContact(name=name, email=email, phone=_value(card, "tel")))
    if not cards:
        problems.append("no vCard in the file")
    if problems:
        raise ContactImportError(path, problems)
    return contacts
