"""`ragpulse calibrate` on the adapted data: the embedded judge against human labels.

Run from the repo root::

    python -m bench.quality.judge_calibration [--halueval-pairs N] [--json PATH]

For RAGTruth, HaluEval QA (the first N pairs of each split) and FaithBench (all, held
out), the events come from ``bench.datasets`` with ``labels.human.faithfulness``.
``ragpulse calibrate --judge embedded`` compares the ``faithfulness`` scores of the
``test`` split with the human labels at 0.5 (on the embedded judge's calibrated scale:
P(fine) = 0.5) and at the threshold with the best Cohen's κ on the same data set's
``dev`` split (per-event scores from ``ragpulse eval --judge embedded``; grid 0.05-0.95
and 0.96-0.99; FaithBench, which has no dev split, takes RAGTruth's); ``ece`` is the
expected calibration error of the scores against the labels (10 bins). Everything runs
through the real command line with the sampling budget lifted (every event judged); the
figures are read back from the reports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

from sklearn.metrics import cohen_kappa_score  # type: ignore[import-untyped]

from bench.quality.judge_data import judge_fingerprint
from tests.support.datasets import adapt

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration.json"
RAGPULSE = [sys.executable, "-m", "stream.cli"]
# offline: judge every event (the default sampling budget caps judge calls per minute)
CONFIG = "sampling:\n  budget:\n    calls_per_minute: null\n    usd_per_hour: null\n"
# the embedded judge's calibrated scale packs HaluEval's answers near 1: finer at the top
GRID = [round(0.05 * k, 2) for k in range(1, 20)] + [0.96, 0.97, 0.98, 0.99]
KEYS = ("n", "threshold", "kappa", "accuracy", "pearson", "spearman", "confusion_binary", "ece")


def _run(config: Path, *args: str) -> None:
    res = subprocess.run(
        [*RAGPULSE, "--config", str(config), *args], capture_output=True, text=True
    )
    if res.returncode not in (0, 3):  # 3: a gate / kappa target missed, the report is written
        raise RuntimeError(f"ragpulse {args[0]} failed ({res.returncode}): {res.stderr[-500:]}")


def _write(path: Path, name: str, split: str, limit: int | None) -> list[dict[str, Any]]:
    raws = list(islice(adapt(name, split), limit))
    path.write_text("".join(json.dumps(r) + "\n" for r in raws), encoding="utf-8")
    return raws


def _scores(report: Path) -> dict[str, float]:
    """Per-event ``faithfulness`` scores from a ``ragpulse eval`` JSON report."""
    events = json.loads(report.read_text(encoding="utf-8"))["events"]
    return {
        e["event_id"]: float(e["scores"]["faithfulness"])
        for e in events
        if e["scores"].get("faithfulness") is not None
    }


def best_threshold(raws: list[dict[str, Any]], scores: dict[str, float]) -> float:
    human = [bool(r["labels"]["human"]["faithfulness"]) for r in raws]
    judged = [scores[r["event_id"]] for r in raws]
    kappas = [(cohen_kappa_score(human, [s >= t for s in judged]), -abs(t - 0.5), t) for t in GRID]
    return max(kappas)[2]


def _calibrate(tmp: Path, tag: str, events: Path, t: float) -> dict[str, Any]:
    out = tmp / f"{tag}_{t}.json"
    _run(
        tmp / "config.yaml",
        "calibrate",
        "--input",
        str(events),
        "--judge",
        "embedded",
        "--threshold",
        f"faithfulness={t}",
        "-o",
        str(out),
    )
    per_judge = json.loads(out.read_text(encoding="utf-8"))["metrics"]["faithfulness"]
    (row,) = per_judge.values()
    return {k: row.get(k) for k in KEYS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--halueval-pairs", type=int, default=300)
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    plan = [("ragtruth", None), ("halueval_qa", 2 * args.halueval_pairs), ("faithbench", None)]
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "judge_code": judge_fingerprint(),
        "metric": "faithfulness",
    }
    dev_threshold: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "config.yaml").write_text(CONFIG, encoding="utf-8")
        for name, limit in plan:
            if name != "faithbench":  # the dev split picks a threshold
                events, report = tmp / f"{name}_dev.jsonl", tmp / f"{name}_dev_eval.json"
                raws = _write(events, name, "dev", limit)
                _run(
                    tmp / "config.yaml",
                    "eval",
                    "--input",
                    str(events),
                    "--judge",
                    "embedded",
                    "-o",
                    str(report),
                )
                dev_threshold[name] = best_threshold(raws, _scores(report))
            t_dev = dev_threshold.get(name, dev_threshold.get("ragtruth", 0.5))
            events = tmp / f"{name}_test.jsonl"
            n = len(_write(events, name, "test", limit))
            result[name] = {
                "test_events": n,
                "dev_threshold": t_dev,
                "at_0.5": _calibrate(tmp, name, events, 0.5),
            }
            if t_dev != 0.5:
                result[name]["at_dev_threshold"] = _calibrate(tmp, name, events, t_dev)
            print(f"{name}: {json.dumps(result[name])}", flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
