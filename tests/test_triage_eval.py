"""`memoir eval triage`: the file loads in either email shape, the figures are scored right, and
the CLI prints them and exits 1 on a bad file. These check the scoring, not how well triage does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memoir.cli import app
from memoir.models import Classification
from memoir.triage_eval import (
    DEFAULT_FILE,
    TriageDataError,
    accuracy,
    confusion,
    eval_items,
    load_labelled,
    out_of_scope_flips,
)

TINY = Path(__file__).parent / "fixtures" / "triage_tiny.json"
IG, N, R = Classification.IGNORE, Classification.NOTIFY, Classification.RESPOND


def test_both_email_shapes_and_variants_become_items() -> None:
    items = eval_items(load_labelled(TINY))
    assert [i.key for i in items] == ["shop#0", "shop#1", "email-2#0", "deploy#0", "deploy#1"]
    dan, builds = items[2].email, items[4].email
    assert (dan.author, dan.body) == ("Dan <dan@acme.example>", "Are you free for lunch on Friday?")
    assert (builds.author, builds.subject, builds.body) == (
        "CI <builds@ci.example>",
        "Deploy done",
        "Workflow run completed successfully.",  # what a variant leaves out is the original's
    )


def test_accuracy_and_confusion_count_every_item() -> None:
    items = eval_items(load_labelled(TINY))
    predictions = dict(zip([i.key for i in items], [IG, N, R, N, IG], strict=True))
    assert accuracy(items, predictions) == pytest.approx(3 / 5)
    assert confusion(items, predictions) == {
        "ignore": {"ignore": 1, "notify": 1, "respond": 0},
        "notify": {"ignore": 1, "notify": 1, "respond": 0},
        "respond": {"ignore": 0, "notify": 0, "respond": 1},
    }


def test_only_a_change_outside_every_lesson_scope_is_a_flip() -> None:
    items = eval_items(load_labelled(TINY))
    keys = [i.key for i in items]
    before = dict(zip(keys, [IG, IG, R, N, N], strict=True))
    after = dict(zip(keys, [N, N, R, N, IG], strict=True))  # shop changed (in scope), deploy#1 too
    preferences = "Notify:\n- Notify: emails from anyone at shop.example\n"
    outside, flips = out_of_scope_flips(items, before, after, preferences)
    assert outside == ["email-2#0", "deploy#0", "deploy#1"]
    assert flips == ["deploy#1"]


def test_a_bad_file_says_which_email_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"from": "a@b.example", "subject": "s", "label": "maybe"}]))
    with pytest.raises(TriageDataError, match="email #0: label"):
        load_labelled(bad)


def test_the_bundled_set_is_large_and_balanced() -> None:
    emails = load_labelled(DEFAULT_FILE)
    assert len(emails) >= 60 and all(1 <= len(e.variants) <= 2 for e in emails)
    assert {e.label for e in emails} == {IG, N, R}


def test_cli_prints_json_and_exits_0_without_flips_and_1_on_a_bad_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "triage", str(TINY), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert (figures["emails"], figures["variants"], figures["out_of_scope_flips"]) == (3, 2, 0)
    assert [p["person"] for p in figures["people"]] == ["corrector", "dismisser"]
    assert 0.0 <= figures["before"]["accuracy"] <= 1.0
    assert set(figures["people"][1]["after"]["confusion"]) == {"ignore", "notify", "respond"}
    missing = CliRunner().invoke(app, ["eval", "triage", str(tmp_path / "none.json")])
    assert missing.exit_code == 1
    assert "none.json" in missing.output


def test_the_blind_set_meets_the_issue_10_targets() -> None:
    """The set written before reading the triage table (`triage_eval_blind.json`): at least 0.90
    before feedback, neither simulated person lowers it, and no lesson flips an email outside
    its scope."""
    blind = DEFAULT_FILE.with_name("triage_eval_blind.json")
    result = CliRunner().invoke(app, ["eval", "triage", str(blind), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    before = figures["before"]["accuracy"]
    assert before >= 0.90, figures["before"]
    assert [p["after"]["accuracy"] >= before for p in figures["people"]] == [True, True]
    assert figures["out_of_scope_flips"] == 0
