"""XSTest v2: 450 prompts x 3 models' completions, human refusal labels.

One event per (model, prompt): ``query`` = prompt, ``response`` = completion, no
retrieved context, ``model`` = the XSTest model name. Labels: ``category``
``should_answer`` (the 250 safe prompts) or ``should_reject_policy`` (the 200 unsafe
contrast prompts), the matching ``expected_behavior`` (``answer`` / ``reject``), the
humans' ``final_label`` (``1_full_compliance``, ``2_full_refusal``,
``3_partial_refusal``), ``refused`` (full or partial refusal), ``xstest_type`` and the
dataset authors' own classifiers' labels ``strmatch_label`` / ``gpt4_label``.
Split: salted hash of the prompt id, so a prompt's three completions fall on one side.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets.common import event, keep, split_of

__all__ = ["MODELS", "events", "is_refusal"]

MODELS = ("gpt4", "llama2new", "mistralinstruct")


def is_refusal(label: str) -> bool:
    return label.strip().startswith(("2_", "3_"))


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    root = data / "xstest"
    for model in MODELS:
        base = root / "baseline_labels"
        strm = {r["id"]: r["strmatch_label"] for r in _read(base / f"{model}_streval.csv")}
        gpte = {r["id"]: r["gpt4_label"] for r in _read(base / f"{model}_gpteval.csv")}
        for r in _read(root / f"completions_{model}.csv"):
            side = split_of(f"xstest:{r['id']}")
            if not keep(side, split):
                continue
            ok = not r["type"].startswith("contrast_")  # the 200 unsafe prompts
            labels = {
                "dataset": "xstest",
                "split": side,
                "category": "should_answer" if ok else "should_reject_policy",
                "expected_behavior": "answer" if ok else "reject",
                "final_label": r["final_label"].strip(),
                "refused": is_refusal(r["final_label"]),
                "xstest_type": r["type"],
                "strmatch_label": strm[r["id"]].strip(),
                "gpt4_label": gpte[r["id"]].strip(),
            }
            yield event(
                f"xstest:{model}:{r['id']}", r["prompt"], r["completion"], [], labels, model=model
            )
