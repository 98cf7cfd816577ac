"""Healthy bundled traffic passes the critical gate with the embedded judge (the default).

The generator's healthy answers are grounded in their chunks or in the user's case, and
the embedded judge's dev-fitted floors must not page on them: this once failed (0.85),
because of judge artefacts (docs/metrics-judge.md, "What counts as grounding")."""

from __future__ import annotations

import json
from pathlib import Path

from stream.cli import main


def test_healthy_traffic_passes_the_critical_gate(tmp_path: Path) -> None:
    events, report = tmp_path / "base.jsonl", tmp_path / "report.json"
    assert main(["traffic", "-n", "300", "--seed", "11", "-o", str(events)]) == 0
    args = ["eval", "-i", str(events), "--judge", "embedded", "--sample-rate", "0.2"]
    assert main([*args, "-o", str(report)]) == 0
    crit = json.loads(report.read_text())["gates"]["critical"]
    assert crit["evaluated"] >= 30
    assert crit["pass_rate"] >= 0.95 and crit["status"] == "pass", crit
    floors = {t["metric"]: t["floors_used"] for t in crit["thresholds"]}
    assert floors["faithfulness"] == {"embedded-minilm-v1": 0.1}  # the judge's own floor
