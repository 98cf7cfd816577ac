"""The shipped ``deflection`` detector next to stage 1 and the baselines.

Run from the repo root::

    python -m bench.quality.deflection_eval [--data DIR] [--blind] [--json PATH]

* XSTest v2, per family: stage 1 (``refusal``), stage 1 + ``deflection``, string match and
  the GPT-4 judge labels. The shipped model was fitted on these rows: in-sample figures;
  the held-out ones are ``bench.quality.deflection_fit``'s.
* ``bench/quality/blind_deflection_train`` (in-sample) and, with ``--blind``, the frozen
  held-out set ``bench/quality/blind_deflection`` (run once tuning is over): precision,
  recall and F1 of refusal-or-deflection, and precision on the hard negatives (positives
  plus hard negatives only) with the hard negatives flagged.
* False positives on answers that are not refusals: the bundled traffic's baseline
  (10,000 events, seed 7; turns with no injected failure and no stage-1 refusal), RAGTruth
  and HaluEval responses (all answers). Also the share of the bundled traffic the gate lets
  through (what the model's CPU is paid on).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.quality.deflection_fit import prf as _prf
from bench.quality.xstest_refusal import _event
from detectors.deflection import DeflectionDetector
from detectors.refusal import RefusalDetector
from stream.contract.events import InvalidEvent, parse_event
from stream.demo import generate
from tests.support.datasets import DATA, adapt, xstest
from tests.support.datasets.common import event
from tests.support.datasets.xstest import MODELS, is_refusal

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench/results/deflection_eval.json"
SETS = {"blind_train": "blind_deflection_train", "blind_heldout": "blind_deflection"}


def prf(gold: list[bool], pred: list[bool]) -> dict[str, Any]:
    return _prf(np.array(gold, dtype=bool), np.array(pred, dtype=bool))


class Stages:
    def __init__(self) -> None:
        self.refusal, self.deflection = RefusalDetector(), DeflectionDetector()

    def __call__(self, raw: dict[str, Any]) -> tuple[bool, bool]:
        ev = _event(raw)
        s1 = any(d.category == "refusal" for d in self.refusal(ev))
        return s1, bool(self.deflection(ev))


def xstest_table(stages: Stages, data: Path) -> dict[str, Any]:
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in MODELS}
    for raw in xstest.events("all", data):
        rows[raw["model"]].append(raw)
    out = {}
    for m, rs in rows.items():
        gold = [bool(r["labels"]["refused"]) for r in rs]
        s = [stages(r) for r in rs]
        out[m] = {
            "stage1": prf(gold, [a for a, _ in s]),
            "stage1_plus_deflection": prf(gold, [a or b for a, b in s]),
            "strmatch": prf(gold, [is_refusal(r["labels"]["strmatch_label"]) for r in rs]),
            "gpt4_judge": prf(gold, [is_refusal(r["labels"]["gpt4_label"]) for r in rs]),
        }
    return out


def blind_table(stages: Stages, name: str) -> dict[str, Any]:
    path = ROOT / "bench/quality" / name / "turns.jsonl"
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    gold = [t["label"] != "answer" for t in turns]
    s = [stages(event(t["id"], t["query"], t["response"], [], {})) for t in turns]
    both = [a or b for a, b in s]
    hard = [bool(t["hard_negative"]) for t in turns]
    keep = [g or h for g, h in zip(gold, hard, strict=True)]
    pick = lambda xs: [x for x, k in zip(xs, keep, strict=True) if k]  # noqa: E731
    return {
        "turns": len(turns),
        "positives": sum(gold),
        "hard_negatives": sum(hard),
        "stage1": prf(gold, [a for a, _ in s]),
        "deflection_alone": prf(gold, [b for _, b in s]),
        "stage1_plus_deflection": prf(gold, both),
        "on_hard_negatives": {
            "stage1_plus_deflection": prf(pick(gold), pick(both)),
            "stage1": prf(pick(gold), pick([a for a, _ in s])),
            "flagged": [t["id"] for t, b, h in zip(turns, both, hard, strict=True) if b and h],
        },
        "missed": [
            f"{t['id']} {t['kind']}: {t['response'][:100]}"
            for t, g, b in zip(turns, gold, both, strict=True)
            if g and not b
        ],
    }


def false_positives(stages: Stages, data: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    clean = flagged = gated = n = 0
    examples: list[str] = []
    for g in generate(10_000, seed=7):
        try:
            ev = parse_event(g.raw)
        except InvalidEvent:
            continue
        n += 1
        gated += stages.deflection.candidate(ev.response)
        if g.truth or any(d.category == "refusal" for d in stages.refusal(ev)):
            continue
        clean += 1
        if stages.deflection.detect(ev, stages.deflection._scanner().scan()):
            flagged += 1
            if len(examples) < 10:
                examples.append(ev.response[:120])
    out["traffic_baseline"] = {
        "events": n,
        "gate_share": gated / n,
        "clean_answers": clean,
        "flagged": flagged,
        "fpr": flagged / clean,
        "examples": examples,
    }
    for name in ("ragtruth", "halueval_qa", "halueval_general"):
        raws = list(adapt(name, "all"))
        hits = sum(stages(r)[1] for r in raws)
        out[name] = {"answers": len(raws), "flagged": hits, "fpr": hits / len(raws)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quality.deflection_eval")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--blind", action="store_true", help="also score the held-out blind set")
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    stages = Stages()
    result: dict[str, Any] = {
        "model": stages.deflection.describe(),
        "xstest_in_sample": xstest_table(stages, args.data),
    }
    for key, name in SETS.items():
        if key == "blind_train" or args.blind:
            result[key] = blind_table(stages, name)
    result["false_positives"] = false_positives(stages, args.data)
    for m, t in result["xstest_in_sample"].items():
        both = t["stage1_plus_deflection"]["f1"]
        print(f"xstest {m:16} stage1 {t['stage1']['f1']:.3f} -> +deflection {both:.3f}")
    for key in SETS:
        if key in result:
            b, both = result[key], result[key]["stage1_plus_deflection"]
            print(
                f"{key}: stage1 {b['stage1']['f1']:.3f} (R {b['stage1']['recall']:.3f})"
                f" -> +deflection {both['f1']:.3f} (P {both['precision']:.3f}"
                f" R {both['recall']:.3f}); hard-negative precision"
                f" {b['on_hard_negatives']['stage1_plus_deflection']['precision']:.3f},"
                f" flagged {len(b['on_hard_negatives']['flagged'])} of {b['hard_negatives']}"
            )
    for name, f in result["false_positives"].items():
        print(
            f"FPR {name}: {f['fpr']:.4f} ({f['flagged']} flagged)"
            + (f", gate share {f['gate_share']:.3f}" if "gate_share" in f else "")
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
