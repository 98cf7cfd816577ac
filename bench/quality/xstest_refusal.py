"""Measure the `refusal` detector on XSTest v2 completions against human labels.

Run from the repo root::

    python -m bench.quality.xstest_refusal [--data DIR] [--json PATH] [--show-errors N]

For each model (gpt4, llama2new, mistralinstruct) every completion becomes an Event
through the adapter ``bench.datasets.xstest`` (query = prompt, response = completion),
with ``labels.expected_behavior`` forced to "answer" (so the "declined" rule runs on
every row), and goes through :class:`RefusalDetector`. A row is a refusal when the
humans' ``final_label`` is ``2_full_refusal`` or ``3_partial_refusal``; ours says
refusal when the detector emits category ``refusal``. A second table checks the
detector's "declined instead of answering" rule (what it reports as ``false_rejection``
on an answerable question) against the humans' ``2_full_refusal`` alone: partial
refusals answered in part, so they count as negatives there.
Precision / recall / F1 sit next to the dataset authors' baselines scored the same way
(``strmatch_label``, ``gpt4_label`` in ``baseline_labels/``). "False refusals on safe"
counts the safe prompts (type not ``contrast_*``) whose completion the humans labelled
full compliance and a classifier calls a refusal (``false_refusal_safe`` = that count
over all safe prompts). Results also per split (``dev`` / ``test``, a salted hash of the
prompt id) and written to ``bench/results/xstest_refusal.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from detectors.refusal import RefusalDetector
from stream.contract.events import Event, EventLimits
from tests.support.datasets import DATA, xstest
from tests.support.datasets.xstest import MODELS, is_refusal

RESULTS = Path(__file__).resolve().parents[1] / "results" / "xstest_refusal.json"
_LIMITS = EventLimits(max_text_chars=1_000_000)


@dataclass
class Scores:
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    false_refusal_safe: float  # share of ALL safe prompts (the table's historic figure)
    false_refusals_safe: int  # safe prompt, humans: complied, classifier: refusal
    safe_complied: int  # safe prompts the model fully complied with (the denominator's pool)


def score(gold: list[bool], pred: list[bool], safe: list[bool]) -> Scores:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    n_safe = sum(safe)
    false_ref = sum(s and p and not g for g, p, s in zip(gold, pred, safe, strict=True))
    complied = sum(s and not g for g, s in zip(gold, safe, strict=True))
    return Scores(
        prec, rec, f1, tp, fp, fn, false_ref / n_safe if n_safe else 0.0, false_ref, complied
    )


def _event(raw: dict[str, Any]) -> Event:
    """The adapted event with ``expected_behavior`` forced to "answer" (see module doc)."""
    labels = dict(raw["labels"]) | {"expected_behavior": "answer"}
    return Event.model_validate(raw | {"labels": labels}, context={"limits": _LIMITS})


def evaluate(data: Path, detector: RefusalDetector, show_errors: int = 0) -> dict[str, Any]:
    by_model: dict[str, list[dict[str, Any]]] = {m: [] for m in MODELS}
    for raw in xstest.events("all", data):
        by_model[raw["model"]].append(raw)
    results: dict[str, Any] = {}
    for model, rows in by_model.items():
        labs = [r["labels"] for r in rows]
        gold = [bool(lab["refused"]) for lab in labs]
        gold_full = [lab["final_label"].startswith("2_") for lab in labs]
        complied = [lab["final_label"].startswith("1_") for lab in labs]
        safe = [lab["category"] == "should_answer" for lab in labs]
        ours: list[bool] = []
        ours_full: list[bool] = []
        cutoff = 0
        errors: list[str] = []
        t0 = time.perf_counter()
        for r, g in zip(rows, gold, strict=True):
            cats = {d.category: d for d in detector(_event(r))}
            pred = "refusal" in cats
            cutoff += "training_cutoff_excuse" in cats
            ours.append(pred)
            ours_full.append("false_rejection" in cats)
            if pred != g and len(errors) < show_errors:
                why = cats["refusal"].evidence if pred else "-"
                head = " ".join(r["response"].split())[:200]
                errors.append(
                    f"{'FP' if pred else 'FN'} {r['event_id']} {r['labels']['final_label']} "
                    f"[{why}] {head}"
                )
        elapsed = time.perf_counter() - t0
        strm = [is_refusal(lab["strmatch_label"]) for lab in labs]
        gpte = [is_refusal(lab["gpt4_label"]) for lab in labs]
        sides = {}
        for side in ("dev", "test"):
            sel = [lab["split"] == side for lab in labs]

            def pick(xs: list[bool], sel: list[bool] = sel) -> list[bool]:
                return [x for x, k in zip(xs, sel, strict=True) if k]

            sides[side] = {
                "rows": sum(sel),
                "ours": asdict(score(pick(gold), pick(ours), pick(safe))),
                "strmatch": asdict(score(pick(gold), pick(strm), pick(safe))),
                "gpt4_judge": asdict(score(pick(gold), pick(gpte), pick(safe))),
            }
        results[model] = {
            "rows": len(rows),
            "human_refusals": sum(gold),
            "safe_prompts": sum(safe),
            "safe_complied": sum(s and not g for s, g in zip(safe, gold, strict=True)),
            "ours": asdict(score(gold, ours, safe)),
            "strmatch": asdict(score(gold, strm, safe)),
            "gpt4_judge": asdict(score(gold, gpte, safe)),
            "by_split": sides,
            "declined_vs_full_refusal": asdict(score(gold_full, ours_full, safe)),
            "human_full_refusals": sum(gold_full),
            "declined_on_compliance": sum(
                p and c for p, c in zip(ours_full, complied, strict=True)
            ),
            "human_compliance": sum(complied),
            "training_cutoff_excuse": cutoff,
            "us_per_event": 1e6 * elapsed / max(1, len(rows)),
            "errors": errors,
        }
    return results


def markdown(results: dict[str, Any]) -> str:
    def prf(s: dict[str, float]) -> str:
        return f"{s['precision']:.2f} / {s['recall']:.2f} / **{s['f1']:.2f}**"

    lines = [
        "| model | refusals (human) | ours P / R / F1 | string match P / R / F1 "
        "| GPT-4 judge P / R / F1 | false refusals on safe, complied: ours / strmatch / GPT-4 "
        "| cutoff excuses | µs/event |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model, r in results.items():
        fr = (
            " / ".join(f"{r[k]['false_refusals_safe']}" for k in ("ours", "strmatch", "gpt4_judge"))
            + f" of {r['safe_complied']} ({r['safe_prompts']} safe prompts)"
        )
        cells = [
            model,
            f"{r['human_refusals']}/{r['rows']}",
            prf(r["ours"]),
            prf(r["strmatch"]),
            prf(r["gpt4_judge"]),
            fr,
            str(r["training_cutoff_excuse"]),
            f"{r['us_per_event']:.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        '| model | full refusals (human) | "declined" P / R / F1 | "declined" on full compliance |',
        "|---|---|---|---|",
    ]
    for model, r in results.items():
        d = r["declined_vs_full_refusal"]
        lines.append(
            f"| {model} | {r['human_full_refusals']}/{r['rows']} | {prf(d)} "
            f"| {r['declined_on_compliance']}/{r['human_compliance']} |"
        )
    lines += [
        "",
        "| model | split | rows | ours F1 | string match F1 | GPT-4 judge F1 |",
        "|---|---|---|---|---|---|",
    ]
    for model, r in results.items():
        for side, v in r["by_split"].items():
            f1s = " | ".join(f"{v[k]['f1']:.2f}" for k in ("ours", "strmatch", "gpt4_judge"))
            lines.append(f"| {model} | {side} | {v['rows']} | {f1s} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared datasets folder")
    ap.add_argument("--json", type=Path, default=RESULTS, help="write the raw numbers here")
    ap.add_argument(
        "--show-errors", type=int, default=0, metavar="N", help="print N misses per model"
    )
    args = ap.parse_args(argv)
    if not (args.data / "xstest" / "completions_gpt4.csv").is_file():
        print(f"XSTest data not found under {args.data}", file=sys.stderr)
        return 2
    results = evaluate(args.data, RefusalDetector(), args.show_errors)
    print(markdown(results))
    for model, r in results.items():
        for line in r["errors"]:
            print(f"{model} {line}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
