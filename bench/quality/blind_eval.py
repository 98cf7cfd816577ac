"""All rule detectors on the frozen blind set ``bench/quality/blind/turns.jsonl``.

Run from the repo root::

    python -m bench.quality.blind_eval [--input PATH] [--limit N] [--json PATH]

The blind set (542 turns, see ``bench/quality/blind/README.md``) was written from the
failure-mode definitions in ``docs/detectors.md`` alone, by someone who never saw the
detectors. Each line is a ragpulse event plus three evaluation fields: ``expected``
(the failure modes a correct detector must report), ``kind`` (``positive`` /
``hard_negative``) and ``mode`` (the failure mode the turn was written for, or the one a
hard negative is a near miss of). Those three fields are stripped and the remaining
event goes, as JSON bytes, through the same pipeline as ``ragpulse score``
(``Pipeline(load_settings()).process``); the scorecard's ``failure_modes`` is compared
with ``expected``.

Per failure mode: TP, FP, FN, precision, recall, F1. A mode's FP counts every turn
that reports the mode without expecting it, hard negatives of other modes included;
the FP column is also split into the mode's own hard negatives and all other turns.
Micro precision / recall / F1 sum TP / FP / FN over all modes (any mode the pipeline
reports outside the eleven of the set is counted too, as FP). Hard-negative false
positive rate: hard negatives (``expected: []``) on which anything fired. Misses (FN)
and false alarms (FP) are listed by event id, with the response cut to 160 characters,
in the JSON only (``bench/results/blind.json``). A turn the pipeline rejects as invalid
counts as predicting nothing and is listed under ``invalid``.

The set is frozen: never edit it to fit the detectors. Figures measured before any
tuning against it are the "before" baseline; see BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from stream.contract.failure_modes import FAILURE_MODES
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
BLIND = ROOT / "bench" / "quality" / "blind" / "turns.jsonl"
RESULTS = ROOT / "bench" / "results" / "blind.json"
EVAL_FIELDS = ("expected", "kind", "mode")
MODES = FAILURE_MODES  # the set's eleven modes (bench/quality/blind/README.md)
TRUNCATE = 160


def prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _head(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TRUNCATE else flat[: TRUNCATE - 1] + "…"


def _sha256(paths: list[Path], base: Path | None = None) -> str:
    """Content hash (first 16 hex digits); with `base`, the names below it count too."""
    h = hashlib.sha256()
    for path in paths:
        if base is not None:
            h.update(path.relative_to(base).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def detectors_sha256() -> str:
    """Content hash of detectors/*.py and detectors/packs/*.yaml: which detectors ran."""
    det = ROOT / "detectors"
    return _sha256(sorted([*det.glob("*.py"), *(det / "packs").glob("*.yaml")]), det)


def provenance(blind: Path) -> dict[str, str]:
    """What was measured: the set's and the detectors' content hashes, and HEAD."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        head = ""
    return {
        "input_sha256": _sha256([blind]),
        "detectors_sha256": detectors_sha256(),
        "commit": head or "unknown",
    }


def _shown(path: Path) -> str:
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def load(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            turns.append(json.loads(line))
            if limit is not None and len(turns) >= limit:
                break
    return turns


def evaluate(turns: list[dict[str, Any]]) -> dict[str, Any]:
    settings = load_settings()
    pipeline = Pipeline(settings)
    counts: dict[str, Counter[str]] = {m: Counter() for m in MODES}
    misses: list[dict[str, Any]] = []
    false_alarms: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    hard_neg = hard_neg_fired = exact = 0
    fired_on_hard_neg: Counter[str] = Counter()
    for turn in turns:
        want = set(turn["expected"])
        event = {k: v for k, v in turn.items() if k not in EVAL_FIELDS}
        result = pipeline.process(json.dumps(event, ensure_ascii=False).encode("utf-8"))
        card = result.scorecard if result.outcome == "scored" else None
        if card is None:
            invalid.append(
                {"event_id": turn["event_id"], "outcome": result.outcome, "reason": result.reason}
            )
        got = set(card["failure_modes"]) if card is not None else set()
        exact += got == want
        if turn["kind"] == "hard_negative":
            hard_neg += 1
            hard_neg_fired += bool(got)
            fired_on_hard_neg.update(got)
        evidence = {
            d["failure_mode"]: f"{d['detector']}/{d['category']}: {d['evidence']}"
            for d in (card["detections"] if card is not None else [])
            if d.get("failure_mode")
        }
        common = {
            "event_id": turn["event_id"],
            "kind": turn["kind"],
            "written_for": turn["mode"],
            "expected": sorted(want),
            "predicted": sorted(got),
            "response": _head(turn["response"]),
        }
        for mode in sorted(got | want):
            c = counts.setdefault(mode, Counter())
            if mode in got and mode in want:
                c["tp"] += 1
            elif mode in got:
                c["fp"] += 1
                own = turn["kind"] == "hard_negative" and turn["mode"] == mode
                c["fp_own_hard_negatives" if own else "fp_other_turns"] += 1
                false_alarms.append({"mode": mode, **common, "evidence": evidence.get(mode, "")})
            else:
                c["fn"] += 1
                misses.append({"mode": mode, **common})
    per_mode: dict[str, Any] = {}
    for mode, c in counts.items():
        per_mode[mode] = {
            "expected": c["tp"] + c["fn"],
            "tp": c["tp"],
            "fp": c["fp"],
            "fn": c["fn"],
            **prf(c["tp"], c["fp"], c["fn"]),
            "fp_own_hard_negatives": c["fp_own_hard_negatives"],
            "fp_other_turns": c["fp_other_turns"],
        }
    tp, fp, fn = (sum(v[k] for v in per_mode.values()) for k in ("tp", "fp", "fn"))
    order = {m: i for i, m in enumerate(MODES)}
    misses.sort(key=lambda r: (order.get(r["mode"], len(order)), r["event_id"]))
    false_alarms.sort(key=lambda r: (order.get(r["mode"], len(order)), r["event_id"]))
    return {
        "turns": len(turns),
        "positives": sum(t["kind"] == "positive" for t in turns),
        "hard_negatives": hard_neg,
        "detectors_enabled": settings.detectors.names(),
        "per_mode": per_mode,
        "micro": {"tp": tp, "fp": fp, "fn": fn, **prf(tp, fp, fn)},
        "hard_negative_fp": {
            "fired": hard_neg_fired,
            "of": hard_neg,
            "rate": hard_neg_fired / hard_neg if hard_neg else 0.0,
            "by_mode_fired": dict(sorted(fired_on_hard_neg.items())),
        },
        "exact_match_turns": exact,
        "invalid": invalid,
        "misses": misses,
        "false_alarms": false_alarms,
    }


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"blind set: {r['turns']} turns ({r['positives']} positives, "
        f"{r['hard_negatives']} hard negatives); whether it is blind for the detectors"
        " measured is recorded in its README and in BENCHMARKS.md",
        "",
        "| failure mode | expected | TP | FP (own hard neg. / other) | FN "
        "| precision | recall | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, v in r["per_mode"].items():
        lines.append(
            f"| {mode} | {v['expected']} | {v['tp']} | {v['fp']} "
            f"({v['fp_own_hard_negatives']} / {v['fp_other_turns']}) | {v['fn']} "
            f"| {v['precision']:.2f} | {v['recall']:.2f} | {v['f1']:.2f} |"
        )
    m = r["micro"]
    lines.append(
        f"| **micro, all modes** | {m['tp'] + m['fn']} | {m['tp']} | {m['fp']} | {m['fn']} "
        f"| **{m['precision']:.2f}** | **{m['recall']:.2f}** | **{m['f1']:.2f}** |"
    )
    h = r["hard_negative_fp"]
    lines += [
        "",
        f"Hard negatives that fired anything: {h['fired']}/{h['of']} ({100 * h['rate']:.1f} %). "
        f"Turns whose predicted modes equal `expected` exactly: "
        f"{r['exact_match_turns']}/{r['turns']}. Invalid turns: {len(r['invalid'])}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--input", type=Path, default=BLIND, help="the blind set (JSONL)")
    ap.add_argument("--limit", type=int, default=None, metavar="N", help="first N turns only")
    ap.add_argument("--json", type=Path, default=RESULTS, help="write figures and misses here")
    args = ap.parse_args(argv)
    if not args.input.is_file():
        print(f"blind set not found: {args.input}", file=sys.stderr)
        return 2
    result = {
        "date": "2026-11-24",
        "input": _shown(args.input),
        "limit": args.limit,
        **provenance(args.input.resolve()),
        **evaluate(load(args.input, args.limit)),
    }
    print(markdown(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(result, indent=2, ensure_ascii=False)
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
