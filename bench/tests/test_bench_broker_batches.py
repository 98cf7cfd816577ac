"""`python -m bench.soak.broker_batches`: the embedded broker's cost per held batch (a
real broker in a child process; tiny steps, so it proves the harness, not the figure)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_two_steps_each_way(tmp_path: Path) -> None:
    out = tmp_path / "bb.json"
    argv = [sys.executable, "-m", "bench.soak.broker_batches", "--steps", "200,400",
            "--seconds", "1", "--consumers", "1", "--json", str(out)]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [(r["records"], r["batched"]) for r in rows] == [
        (200, False),
        (400, False),
        (200, True),
        (400, True),
    ]
    assert all(0 <= r["broker_cores"] < 2 for r in rows)
