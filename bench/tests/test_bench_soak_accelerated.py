"""`python -m bench.soak.accelerated`: the pipeline on a simulated clock, in a child process
(it replaces time.time / time.monotonic before the pipeline's modules bind them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_simulated_minute_in_seconds(tmp_path: Path) -> None:
    out = tmp_path / "acc.json"
    argv = [sys.executable, "-m", "bench.soak.accelerated", "--minutes", "1", "--rate", "20",
            "--snap-every", "0.25", "--frames", "1", "--json", str(out)]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    rows = result["rows"]
    # 1,200 events at 20/s: a row every simulated 15 s, the clock advanced by the events
    assert [r["sim_minute"] for r in rows] == [0.25, 0.5, 0.75, 1.0]
    assert rows[-1]["events"] == 1200
    assert all(r["traced_mb"] > 0 and r["rss_mb"] > 0 for r in rows)
    assert "traced_slope_mb_per_min_second_half" in result
    assert result["growth_first_to_last"], "the first and last snapshots were compared"
