"""Contacts from vCard and CSV files: every entry checked first, a bad one and nothing is stored."""

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memoir import cli
from memoir.cli import app
from memoir.contacts_import import ContactImportError, read_contacts
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.stores.contacts import NewContact

VCARD = """BEGIN:VCARD
VERSION:3.0
FN:Dan Smith
N:Smith;Dan;;;
EMAIL;TYPE=work:dan@example.com
TEL;TYPE=cell:+1 555 0100
END:VCARD
BEGIN:VCARD
VERSION:4.0
N:Ortiz;Daniel;;;
EMAIL:daniel@example.org
END:VCARD
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_vcard_cards_become_contacts(tmp_path: Path) -> None:
    contacts, source = read_contacts(write(tmp_path, "people.vcf", VCARD))
    assert source == "vcard"
    assert contacts == [
        NewContact(name="Dan Smith", email="dan@example.com", phone="+1 555 0100"),
        NewContact(name="Daniel Ortiz", email="daniel@example.org"),
    ]


def test_vcard_without_an_email_is_refused_by_card_number(tmp_path: Path) -> None:
    text = VCARD + "BEGIN:VCARD\nVERSION:3.0\nFN:No Mail\nEND:VCARD\n"
    with pytest.raises(ContactImportError) as error:
        read_contacts(write(tmp_path, "people.vcf", text))
    assert error.value.problems == ["card 3: missing email for 'No Mail'"]


def test_csv_rows_become_contacts_in_any_column_order(tmp_path: Path) -> None:
    text = "Email,Name,Phone\ndan@example.com,Dan Smith,+1 555\n\nann@example.com,Ann Lee,\n"
    contacts, source = read_contacts(write(tmp_path, "people.csv", text))
    assert source == "csv"
    assert contacts == [
        NewContact(name="Dan Smith", email="dan@example.com", phone="+1 555"),
        NewContact(name="Ann Lee", email="ann@example.com"),
    ]


def test_csv_bad_rows_are_reported_by_line_number(tmp_path: Path) -> None:
    text = (
        "name,email,phone\n"
        "Dan Smith,dan@example.com,+1 555\n"
        "Bad Address,not-an-address,\n"
        ",nobody@example.com,\n"
        "Too,many,columns,here\n"
    )
    with pytest.raises(ContactImportError) as error:
        read_contacts(write(tmp_path, "people.csv", text))
    assert error.value.problems == [
        "line 3: invalid email 'not-an-address'",
        "line 4: missing name",
        "line 5: expected 3 columns, got 4",
    ]
    assert "nothing imported" in str(error.value)


def test_csv_needs_a_header(tmp_path: Path) -> None:
    with pytest.raises(ContactImportError, match="line 1: the header"):
        read_contacts(write(tmp_path, "people.csv", "Dan Smith,dan@example.com\n"))


def test_other_file_types_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ContactImportError, match="unsupported file type"):
        read_contacts(write(tmp_path, "people.txt", "Dan"))


async def _cli(args: list[str]) -> tuple[int, str]:
    """`memoir ARGS` in a thread of its own (the CLI runs its own event loop)."""
    result = await asyncio.to_thread(CliRunner().invoke, app, args)
    return result.exit_code, result.output


async def test_cli_imports_a_file_and_a_bad_row_imports_nothing(
    tmp_path: Path, stores: Stores, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "get_settings", lambda: Settings(database_url=database_url))
    user, _ = await stores.users.create_user("Importer")
    bad = write(tmp_path, "bad.csv", "name,email,phone\nDan,dan@example.com,\nEve,eve@,\n")
    code, output = await _cli(["contacts", "import", str(bad), "--user", user.user_id])
    assert code == 1 and "line 3: invalid email 'eve@'" in output
    assert await stores.contacts.list(user.user_id) == []

    good = write(tmp_path, "people.vcf", VCARD)
    code, output = await _cli(["contacts", "import", str(good), "--user", user.user_id])
    assert code == 0, output
    assert "2 contact(s) imported" in output
    assert [(c.name, c.source) for c in await stores.contacts.list(user.user_id)] == [
        ("Dan Smith", "vcard"),
        ("Daniel Ortiz", "vcard"),
    ]
    code, output = await _cli(["contacts", "list", "--user", user.user_id])
    assert code == 0 and "dan@example.com" in output and "daniel@example.org" in output
