"""Healthy bundled traffic passes the critical gate with the embedded judge (the default),
and its calibrated faithfulness reads as healthy.

The generator's healthy answers are grounded in their chunks or in the user's case, and
the embedded judge's dev-fitted floors must not page on them: this once failed (0.85),
because of judge artefacts (docs/metrics-judge.md, "What counts as grounding"). The
embedded judge reports calibrated scores (the probability that the turn is fine, score
maps fitted on the dev split): healthy traffic lands in the "none" / "minor" bands, where
the raw support scale had put it in "moderate" (mean 0.54 on 407 judged turns of
``traffic -n 1500 --seed 7``; 0.89 calibrated, docs/metrics-judge.md)."""

from __future__ import annotations

import json
from pathlib import Path

from stream.cli import main

EMB = "embedded-minilm-v1"


def test_healthy_traffic_passes_the_critical_gate(tmp_path: Path) -> None:
    events, report = tmp_path / "base.jsonl", tmp_path / "report.json"
    assert main(["traffic", "-n", "300", "--seed", "11", "-o", str(events)]) == 0
    args = ["eval", "-i", str(events), "--judge", "embedded", "--sample-rate", "0.2"]
    assert main([*args, "-o", str(report)]) == 0
    data = json.loads(report.read_text())
    crit = data["gates"]["critical"]
    assert crit["evaluated"] >= 30
    assert crit["pass_rate"] >= 0.95 and crit["status"] == "pass", crit
    floors = {t["metric"]: t["floors_used"] for t in crit["thresholds"]}
    assert floors["faithfulness"] == {EMB: 0.5}  # the judge's own floor: P(fine) = 0.5
    faith = data["metrics"]["faithfulness"]
    n = faith["scored"]
    assert faith["judges"] == {EMB: {"scored": n, "calibrated": n}}  # named, calibrated
    assert faith["mean"] >= 0.8, faith  # "minor" at least; raw support read ~0.54
    assert faith["bands"]["none"] + faith["bands"]["minor"] >= 0.9 * n, faith["bands"]
    assert faith["bands"]["severe"] == 0
