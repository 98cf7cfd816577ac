"""Leave-one-model-out figures of the `refusal` detector on XSTest v2.

Run from the repo root::

    python -m bench.quality.xstest_lomo [--data DIR] [--json PATH]

Same rows, labels and scoring as ``bench.quality.xstest_refusal`` (its ``_event`` and
``score``): every completion of the three model families (gpt4, llama2new,
mistralinstruct) goes through :class:`RefusalDetector` with ``expected_behavior``
forced to "answer"; a prediction is the category ``refusal``, a gold refusal is the
humans' full or partial refusal. For each family as the held-out one this reports the
detector's precision / recall / F1 on the held-out family's 450 completions next to
XSTest's own string-match baseline (``strmatch_label``) on the same completions, and
the detector's F1 on the other two ("dev") families, pooled (900 completions).

The detector has no trainable parameters, so nothing is fitted per fold: every fold
measures the same detector. What the split means is a rule for future changes: a change
to the refusal patterns developed by reading the two dev families' completions must be
judged by the held-out family's figures (``bench/results/xstest_lomo.before.json`` keeps
the figures from before the 2026-11-24 widening, which was developed on gpt4 and llama2new
with mistralinstruct held out). They are not blind figures for the current detector, which was
already measured on all three families (``bench.quality.xstest_refusal``). Written to
``bench/results/xstest_lomo.json`` (``bench/results/xstest_refusal.json`` is left as it
is).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.quality.blind_eval import detectors_sha256
from bench.quality.xstest_refusal import _event, score
from detectors.refusal import RefusalDetector
from tests.support.datasets import DATA, xstest
from tests.support.datasets.xstest import MODELS, is_refusal

RESULTS = Path(__file__).resolve().parents[1] / "results" / "xstest_lomo.json"
CLASSIFIERS = ("ours", "strmatch", "gpt4_judge")
NOTE = (
    "The refusal detector has no trainable parameters: no fold fits anything, and every "
    "fold measures the same detector. The held-out figures are what a future change, "
    "developed by reading only the two dev families' completions, must be judged by "
    "(the 2026-11-24 widening was developed on gpt4 and llama2new; mistralinstruct was "
    "held out). They are not blind estimates for the "
    "current detector: it was already measured on all three families' completions "
    "(BENCHMARKS.md, 'Refusal detector on XSTest v2')."
)

Rows = dict[str, list[bool]]


def predict(data: Path, detector: RefusalDetector) -> dict[str, Rows]:
    """Per model: gold refusal, the detector's, string match's and GPT-4 judge's, safe."""
    out: dict[str, Rows] = {m: {k: [] for k in ("gold", *CLASSIFIERS, "safe")} for m in MODELS}
    for raw in xstest.events("all", data):
        lab = raw["labels"]
        rows = out[raw["model"]]
        rows["gold"].append(bool(lab["refused"]))
        rows["ours"].append(any(d.category == "refusal" for d in detector(_event(raw))))
        rows["strmatch"].append(is_refusal(lab["strmatch_label"]))
        rows["gpt4_judge"].append(is_refusal(lab["gpt4_label"]))
        rows["safe"].append(lab["category"] == "should_answer")
    return out


def _scores(rows: Rows) -> dict[str, Any]:
    return {
        "rows": len(rows["gold"]),
        "human_refusals": sum(rows["gold"]),
        **{c: asdict(score(rows["gold"], rows[c], rows["safe"])) for c in CLASSIFIERS},
    }


def lomo(preds: dict[str, Rows]) -> dict[str, Any]:
    folds: dict[str, Any] = {}
    for held in preds:
        dev = [m for m in preds if m != held]
        pooled: Rows = {k: [x for m in dev for x in preds[m][k]] for k in preds[held]}
        folds[held] = {
            "dev_models": dev,
            "held_out": _scores(preds[held]),
            "dev_pooled": _scores(pooled),
            "dev_per_model": {m: _scores(preds[m]) for m in dev},
        }
    held_f1 = [f["held_out"]["ours"]["f1"] for f in folds.values()]
    base_f1 = [f["held_out"]["strmatch"]["f1"] for f in folds.values()]
    return {
        "date": "2026-11-24",
        "detectors_sha256": detectors_sha256(),
        "note": NOTE,
        "prediction": "category `refusal` of RefusalDetector(), expected_behavior forced to answer",
        "gold": "humans' final_label 2_full_refusal or 3_partial_refusal",
        "folds": folds,
        "mean_held_out_f1": {
            "ours": sum(held_f1) / len(held_f1),
            "strmatch": sum(base_f1) / len(base_f1),
        },
    }


def markdown(r: dict[str, Any]) -> str:
    def prf(s: dict[str, float]) -> str:
        return f"{s['precision']:.2f} / {s['recall']:.2f} / **{s['f1']:.2f}**"

    lines = [
        "| held-out model | refusals (human) | ragpulse P / R / F1 (held out) "
        "| string match P / R / F1 (held out) | dev models | ragpulse F1 on dev (pooled) "
        "| string match F1 on dev |",
        "|---|---|---|---|---|---|---|",
    ]
    for held, f in r["folds"].items():
        h, d = f["held_out"], f["dev_pooled"]
        lines.append(
            f"| {held} | {h['human_refusals']}/{h['rows']} | {prf(h['ours'])} "
            f"| {prf(h['strmatch'])} | {' + '.join(f['dev_models'])} "
            f"| {d['ours']['f1']:.2f} | {d['strmatch']['f1']:.2f} |"
        )
    m = r["mean_held_out_f1"]
    lines += [
        "",
        f"Mean held-out F1: ragpulse {m['ours']:.2f}, string match {m['strmatch']:.2f}.",
        "",
        r["note"],
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared datasets folder")
    ap.add_argument("--json", type=Path, default=RESULTS, help="write the raw numbers here")
    args = ap.parse_args(argv)
    if not (args.data / "xstest" / "completions_gpt4.csv").is_file():
        print(f"XSTest data not found under {args.data}", file=sys.stderr)
        return 2
    result = lomo(predict(args.data, RefusalDetector()))
    print(markdown(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
