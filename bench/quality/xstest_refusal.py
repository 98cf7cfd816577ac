"""Measure the `refusal` detector on XSTest v2 completions against human labels.

Run from the repo root::

    python -m bench.quality.xstest_refusal [--data DIR] [--json PATH] [--show-errors N]

For each model (gpt4, llama2new, mistralinstruct) every completion becomes an Event
(query = prompt, response = completion, labels.expected_behavior = "answer") and goes
through :class:`RefusalDetector`. A row is a refusal when the humans' ``final_label`` is
``2_full_refusal`` or ``3_partial_refusal``; ours says refusal when the detector emits
category ``refusal``. A second table checks the detector's "declined instead of answering"
rule (what it reports as ``false_rejection`` on an answerable question) against the
humans' ``2_full_refusal`` alone: partial refusals answered in part, so they count as
negatives there.
Precision / recall / F1 sit next to the dataset authors' baselines scored the same way
(``strmatch_label``, ``gpt4_label`` in ``baseline_labels/``). "False refusal (safe)" is
the share of safe prompts (type not ``contrast_*``) that a classifier calls a refusal
although the humans labelled the completion full compliance.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from detectors.refusal import RefusalDetector
from stream.events import Event, EventLimits

MODELS = ("gpt4", "llama2new", "mistralinstruct")
DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "xstest"
_LIMITS = EventLimits(max_text_chars=1_000_000)


@dataclass
class Scores:
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    false_refusal_safe: float


def is_refusal(label: str) -> bool:
    return label.strip().startswith(("2_", "3_"))


def score(gold: list[bool], pred: list[bool], safe: list[bool]) -> Scores:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    n_safe = sum(safe)
    false_ref = sum(s and p and not g for g, p, s in zip(gold, pred, safe, strict=True))
    return Scores(prec, rec, f1, tp, fp, fn, false_ref / n_safe if n_safe else 0.0)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def evaluate(data: Path, detector: RefusalDetector, show_errors: int = 0) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for model in MODELS:
        rows = _read(data / f"completions_{model}.csv")
        strm = {
            r["id"]: r["strmatch_label"]
            for r in _read(data / "baseline_labels" / f"{model}_streval.csv")
        }
        gpte = {
            r["id"]: r["gpt4_label"]
            for r in _read(data / "baseline_labels" / f"{model}_gpteval.csv")
        }
        gold = [is_refusal(r["final_label"]) for r in rows]
        gold_full = [r["final_label"].strip().startswith("2_") for r in rows]
        complied = [r["final_label"].strip().startswith("1_") for r in rows]
        safe = [not r["type"].startswith("contrast_") for r in rows]
        ours: list[bool] = []
        ours_full: list[bool] = []
        cutoff = 0
        errors: list[str] = []
        t0 = time.perf_counter()
        for r, g in zip(rows, gold, strict=True):
            event = Event.model_validate(
                {
                    "event_id": r["id"],
                    "query": r["prompt"],
                    "response": r["completion"],
                    "labels": {"expected_behavior": "answer"},
                },
                context={"limits": _LIMITS},
            )
            cats = {d.category: d for d in detector(event)}
            pred = "refusal" in cats
            cutoff += "training_cutoff_excuse" in cats
            ours.append(pred)
            ours_full.append("false_rejection" in cats)
            if pred != g and len(errors) < show_errors:
                why = cats["refusal"].evidence if pred else "-"
                head = " ".join(r["completion"].split())[:200]
                errors.append(
                    f"{'FP' if pred else 'FN'} {r['id']} {r['final_label']} [{why}] {head}"
                )
        elapsed = time.perf_counter() - t0
        results[model] = {
            "rows": len(rows),
            "human_refusals": sum(gold),
            "safe_prompts": sum(safe),
            "ours": asdict(score(gold, ours, safe)),
            "strmatch": asdict(score(gold, [is_refusal(strm[r["id"]]) for r in rows], safe)),
            "gpt4_judge": asdict(score(gold, [is_refusal(gpte[r["id"]]) for r in rows], safe)),
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
        "| GPT-4 judge P / R / F1 | false refusal on safe: ours / strmatch / GPT-4 "
        "| cutoff excuses | µs/event |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model, r in results.items():
        fr = " / ".join(
            f"{100 * r[k]['false_refusal_safe']:.1f}%" for k in ("ours", "strmatch", "gpt4_judge")
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
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="XSTest folder")
    ap.add_argument("--json", type=Path, help="write the raw numbers here")
    ap.add_argument(
        "--show-errors", type=int, default=0, metavar="N", help="print N misses per model"
    )
    args = ap.parse_args(argv)
    if not (args.data / "completions_gpt4.csv").is_file():
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
