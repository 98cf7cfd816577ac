"""Soak results: growth slopes (second half of the run) and the PNG plot."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["floor", "plot", "slope", "snapshot_diffs", "verdict"]

SERIES = ("rss_mb", "fds", "consumer_lag", "loop_lag_s")
#: sampled less often (bench/soak/smaps.py): only some rows carry them
SPARSE = ("mem_heap_mb", "mem_anon_mb", "mem_stack_mb", "mem_file_mb", "anon_arenas")


def slope(ts: list[float], ys: list[float]) -> float:
    """Least-squares slope per minute (nan with fewer than 3 finite points)."""
    pts = [(t, y) for t, y in zip(ts, ys, strict=True) if math.isfinite(y)]
    if len(pts) < 3:
        return float("nan")
    t, y = np.array(pts).T
    return float(np.polyfit(t / 60.0, y, 1)[0])


def floor(
    rows: list[dict[str, Any]], name: str = "rss_mb", period_s: float = 60.0
) -> list[tuple[float, float]]:
    """(start of the period, smallest value in it) per `period_s`: with the heap trimmed
    every minute, RSS is a sawtooth whose peaks follow the work in flight; the floor is
    what the process keeps."""
    out: dict[int, tuple[float, float]] = {}
    for r in rows:
        k = int(r["t_s"] // period_s)
        v = float(r[name])
        if k not in out or v < out[k][1]:
            out[k] = (k * period_s, v)
    return [out[k] for k in sorted(out)]


def verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per series: first/last/max and the slope per minute over the second half (of the
    rows that carry it: the smaps series are sampled less often); for RSS also the slope
    of its per-minute floor (:func:`floor`)."""
    half = rows[len(rows) // 2 :]
    out: dict[str, Any] = {}
    lows = floor(half)
    out["rss_floor_mb"] = {
        "first": lows[0][1] if lows else None,
        "last": lows[-1][1] if lows else None,
        "slope_per_min_second_half": slope([t for t, _ in lows], [v for _, v in lows]),
    }
    for name in (*SERIES, "control_lag", "behind_producer", *SPARSE):
        have = [r for r in rows if name in r]
        if not have:
            continue
        later = have[len(have) // 2 :]
        values = [float(r[name]) for r in have]
        out[name] = {
            "first": values[0] if values else None,
            "last": values[-1] if values else None,
            "max": max(values) if values else None,
            "median": float(np.nanmedian(values)) if values else None,
            "slope_per_min_second_half": slope(
                [r["t_s"] for r in later], [float(r[name]) for r in later]
            ),
        }
    return out


def plot(rows: list[dict[str, Any]], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["t_s"] / 60.0 for r in rows]
    fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    axes[0].plot(t, [r["rss_mb"] for r in rows], color="tab:blue")
    axes[0].set_ylabel("RSS (MiB)")
    axes[0].set_title(title)
    axes[1].plot(t, [r["consumer_lag"] for r in rows], color="tab:orange", label="sidecar")
    if rows and "control_lag" in rows[0]:
        axes[1].plot(t, [r["control_lag"] for r in rows], color="tab:purple", label="control")
        axes[1].legend(loc="upper left")
    axes[1].set_ylabel("consumer lag (msgs)")
    axes[2].plot(t, [1000 * r["loop_lag_s"] for r in rows], color="tab:green", label="loop lag")
    axes[2].set_ylabel("event-loop lag (ms)")
    fds = axes[2].twinx()
    fds.plot(t, [r["fds"] for r in rows], color="tab:gray", linestyle="--", label="open fds")
    fds.set_ylabel("open fds")
    axes[2].set_xlabel("minutes")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def snapshot_diffs(folder: str, top: int = 15) -> list[dict[str, Any]]:
    """Top growths between the second snapshot (warm: the dedupe window is full by then at
    200 ev/s when snapshots are 5 min apart) and the last, by allocation site."""
    import tracemalloc
    from pathlib import Path

    paths = sorted(Path(folder).glob("snap-*.pickle"))
    if len(paths) < 3:
        return []
    first = tracemalloc.Snapshot.load(str(paths[1]))
    last = tracemalloc.Snapshot.load(str(paths[-1]))
    rows: list[dict[str, Any]] = []
    for stat in last.compare_to(first, "traceback")[:top]:
        rows.append(
            {
                "site": [str(f) for f in stat.traceback][-4:],
                "size_diff_kib": round(stat.size_diff / 1024, 1),
                "size_kib": round(stat.size / 1024, 1),
                "count_diff": stat.count_diff,
            }
        )
    return rows
