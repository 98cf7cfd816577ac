"""The blind-set evaluation (`bench.quality.blind_eval`) runs end to end: a smoke test on
the first 40 turns of the frozen set, no broker. It checks the output's shape, not the
figures (those are in BENCHMARKS.md and must not become a test target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.quality.blind_eval import BLIND, MODES
from tests.support.sidecar import ROOT as REPO

_PER_MODE = ("expected", "tp", "fp", "fn", "precision", "recall", "f1")
_LISTED = ("mode", "event_id", "kind", "written_for", "expected", "predicted", "response")


def test_blind_eval_runs_on_the_first_40_turns(tmp_path: Path) -> None:
    before = BLIND.read_bytes()
    head = tmp_path / "head.jsonl"
    head.write_text("".join(before.decode("utf-8").splitlines(keepends=True)[:40]), "utf-8")
    out = tmp_path / "blind.json"
    cmd = ["-m", "bench.quality.blind_eval", "--input", str(head), "--json", str(out)]
    run = subprocess.run(
        [sys.executable, *cmd], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert "| failure mode |" in run.stdout and "micro" in run.stdout
    r = json.loads(out.read_text(encoding="utf-8"))
    for key in (
        "date", "input", "input_sha256", "detectors_sha256", "commit", "turns", "positives",
        "hard_negatives", "detectors_enabled", "per_mode", "micro", "hard_negative_fp",
        "exact_match_turns", "invalid", "misses", "false_alarms",
    ):  # fmt: skip
        assert key in r, key
    assert r["turns"] == 40 == r["positives"] + r["hard_negatives"]
    assert set(MODES) <= set(r["per_mode"])
    for mode, v in r["per_mode"].items():
        assert all(k in v for k in _PER_MODE), mode
    assert all(k in r["micro"] for k in ("tp", "fp", "fn", "precision", "recall", "f1"))
    assert all(k in r["hard_negative_fp"] for k in ("fired", "of", "rate"))
    for row in r["misses"] + r["false_alarms"]:
        assert all(k in row for k in _LISTED)
        assert len(row["response"]) <= 160
    assert BLIND.read_bytes() == before  # the frozen set is only read
