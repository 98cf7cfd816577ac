"""`python -m bench.perf.headroom`: stage (c) with and without its detectors, beside (e)
(a real broker and real stage processes; tiny counts, so it proves the harness, not the
figure)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_one_round_without_detectors_is_cheaper(tmp_path: Path) -> None:
    out = tmp_path / "headroom.json"
    argv = [sys.executable, "-m", "bench.perf.headroom", "--rounds", "1", "--cpu", "0",
            "--topic-events", "1500", "--events", "1000", "--warmup", "300",
            "--out", str(out)]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    (got,) = result["per_round"]
    assert {"c", "c0", "e"} <= set(got)
    # the setting reached the stage: no detectors, markedly less CPU per event
    assert got["c0"]["cpu_us_per_event"] < 0.8 * got["c"]["cpu_us_per_event"]
    assert result["summary"]["detectors_us"] == got["detectors_us"] > 0
