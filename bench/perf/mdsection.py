"""Small shared pieces of the standalone perf benchmarks: machine facts, min/median/max,
the raw-numbers JSON file and the marked section of BENCHMARKS.md each one replaces."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "fmt_stats", "machine", "replace_section", "spread", "write_result"]

ROOT = Path(__file__).resolve().parents[2]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return f"{commit}+dirty" if dirty else commit  # uncommitted edits in the tree
    except OSError:
        return "unknown"


def machine() -> dict[str, Any]:
    """CPU, cores, Python, date, commit and the 1/5/15-minute load average right now."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def spread(values: list[float]) -> dict[str, float]:
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "n": len(values),
    }


def fmt_stats(s: dict[str, float], digits: int = 1) -> str:
    """ "min / **median** / max"."""
    return f"{s['min']:,.{digits}f} / **{s['median']:,.{digits}f}** / {s['max']:,.{digits}f}"


def write_result(name: str, result: dict[str, Any]) -> Path:
    path = ROOT / "bench" / "results" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return path


def replace_section(name: str, text: str, path: Path | None = None) -> Path:
    """Put `text` between ``<!-- bench:name -->`` and ``<!-- /bench:name -->`` in
    BENCHMARKS.md (appended at the end when the markers are not there yet)."""
    path = path or ROOT / "BENCHMARKS.md"
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{text.strip()}\n{end}"
    doc = path.read_text(encoding="utf-8") if path.exists() else ""
    i, j = doc.find(begin), doc.find(end)
    if i >= 0 and j > i:
        doc = doc[:i] + block + doc[j + len(end) :]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc, encoding="utf-8")
    return path
