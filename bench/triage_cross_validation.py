"""How the offline triage does on a persona nobody tuned it on: leave one persona out.

The labelled emails of `model.training` (memoir/data/triage_eval*.json) come from several
personas (the id prefix of triage_eval_fresh.json: a1-, a2- are persona a; the bundled sets and
f2- to f11- share one). For each persona, the model is fitted on the other personas' emails only
and decides that persona's emails in its branches (organisation, no_ask, ask); the other branches
are the table's rules, which were written with every set in view (so the figure flatters them).
Prints each persona's accuracy (originals, and all items) and the mean.

    .venv/bin/python bench/triage_cross_validation.py    # ~1 minute
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

import numpy as np

from memoir import fitting
from memoir.embeddings import get_local_embedder
from memoir.llm import offline_triage as triage


def persona(email_id: str) -> str:
    """`a1-…` and `a2-…` are persona a; every other set shares the Northwind persona."""
    found = re.match(r"([a-eg-z])\d+-", email_id)
    return found.group(1) if found else "northwind"


def main() -> None:
    embedder = get_local_embedder()
    from memoir.triage_eval import labelled_items

    items = labelled_items(triage.DATA / name for name in triage.table()["model"]["training"])
    emails = [
        triage.TriageEmail(i.email.author, i.email.to, i.email.subject, i.email.body) for i in items
    ]
    print(f"{len(items)} labelled items; embedding them …", flush=True)
    vectors = np.asarray(embedder.embed([triage.model_text(e) for e in emails]), dtype=np.float32)
    rows = [
        (triage.branch(e), triage.signals(e), i.label) for e, i in zip(emails, items, strict=True)
    ]
    groups = [persona(i.email_id) for i in items]
    right: dict[str, list[bool]] = defaultdict(list)
    originals: dict[str, list[bool]] = defaultdict(list)
    for held in sorted(set(groups)):
        keep = [k for k, g in enumerate(groups) if g != held]
        weights = triage.fit([rows[k] for k in keep], vectors[keep], embedder)
        for k in (k for k, g in enumerate(groups) if g == held):
            where = rows[k][0]
            if where in weights:
                features = np.append(vectors[k], rows[k][1])
                action = triage.decide(fitting.predict(weights[where], features))
            else:
                action = triage.classify(emails[k], embedder)[0]
            right[held].append(action is items[k].label)
            if items[k].variant == 0:
                originals[held].append(action is items[k].label)
        print(
            f"{held:10s} originals {statistics.mean(originals[held]):.3f} "
            f"all {statistics.mean(right[held]):.3f} ({len(right[held])} items)",
            flush=True,
        )
    letters = [g for g in right if g != "northwind"]
    print(
        f"mean over the {len(letters)} other personas: originals "
        f"{statistics.mean(statistics.mean(originals[g]) for g in letters):.3f}, all "
        f"{statistics.mean(statistics.mean(right[g]) for g in letters):.3f}"
    )


if __name__ == "__main__":
    main()
