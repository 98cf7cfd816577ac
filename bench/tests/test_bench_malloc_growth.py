"""`python -m bench.soak.malloc_growth`: glibc's heap as the pipeline runs (tiny counts:
it proves the harness, not the figure)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_rows_every_step_the_window_switch_and_a_rebuild(tmp_path: Path) -> None:
    for dedupe, want_ids in ((None, 1_000), (0, 0)):
        out = tmp_path / f"mg{dedupe}.json"
        argv = [sys.executable, "-m", "bench.soak.malloc_growth", "--events", "1000",
                "--every", "500", "--json", str(out)]  # fmt: skip
        if dedupe is not None:  # and a fresh pipeline after 700 events
            argv += ["--dedupe", str(dedupe), "--rebuild-at", "700"]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        rows = json.loads(out.read_text())["rows"]
        assert [r["events"] for r in rows] == [500, 1000]
        ids = rows[-1]["dedupe_ids"]  # the window holds the valid events' ids, or nothing
        assert ids == 0 if want_ids == 0 else 900 < ids <= want_ids
        assert all(r["malloc_in_use_mb"] > 1 and r["patterns_compiled"] > 0 for r in rows)
        assert [r.get("rebuilt", False) for r in rows] == [False, dedupe is not None]
