"""Report figures (matplotlib, Agg backend) as PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from stream.contract.scales import BAND_EDGES

__all__ = ["failure_mode_plot", "gate_plot", "score_distribution_plot"]

_BAND_EDGES = BAND_EDGES
_BAND_COLOURS = ("#d62728", "#ff7f0e", "#bcbd22", "#2ca02c")


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _gate_floors(report: Mapping[str, Any]) -> dict[str, set[float]]:
    out: dict[str, set[float]] = {}
    for tier in (report.get("gates") or {}).values():
        for th in tier["thresholds"]:
            used = th.get("floors_used") or {"": th["min"]}
            out.setdefault(th["metric"], set()).update(float(v) for v in used.values())
    return out


def score_distribution_plot(report: Mapping[str, Any], columns: int = 3) -> bytes | None:
    """One histogram per judge metric (per-event scores), severity bands shaded."""
    scores: dict[str, list[float]] = {}
    for event in report.get("events") or []:
        for metric, value in (event.get("scores") or {}).items():
            scores.setdefault(metric, []).append(float(value))
    if not scores:
        return None
    names = sorted(scores)
    floors = _gate_floors(report)
    rows = (len(names) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4 * columns, 2.6 * rows), squeeze=False)
    edges = (0.0, *_BAND_EDGES, 1.0)
    for ax, name in zip(axes.flat, names, strict=False):
        for lo, hi, colour in zip(edges, edges[1:], _BAND_COLOURS, strict=False):
            ax.axvspan(lo, hi, color=colour, alpha=0.08, lw=0)
        values = scores[name]
        ax.hist(values, bins=20, range=(0.0, 1.0), color="#1f77b4", edgecolor="white")
        mean = sum(values) / len(values)
        ax.axvline(mean, color="black", ls="--", lw=1)
        for floor in floors.get(name, ()):
            ax.axvline(floor, color="#d62728", ls=":", lw=1.5)
        ax.set_title(f"{name}  (n={len(values)}, mean {mean:.2f})", fontsize=9)
        ax.set_xlim(0, 1)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(
        "Judge score distributions (shaded bands severe/moderate/minor/none; "
        "dashed: mean; red dotted: gate floor)"
    )
    fig.tight_layout()
    return _png(fig)


def failure_mode_plot(report: Mapping[str, Any]) -> bytes | None:
    """Horizontal bars: share of scored events per detector failure mode."""
    modes = report.get("failure_modes") or {}
    if not modes:
        return None
    names = list(modes)[::-1]  # largest on top
    shares = [100 * float(modes[n]["share"] or 0.0) for n in names]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
    bars = ax.barh(names, shares, color="#9467bd")
    for bar, name in zip(bars, names, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f" {modes[name]['count']}",
            va="center",
            fontsize=8,
        )
    ax.set_xlabel("share of scored events (%)")
    ax.set_title("Failure modes (detectors)")
    ax.set_xlim(0, max(shares) * 1.15 + 0.5)
    fig.tight_layout()
    return _png(fig)


def gate_plot(report: Mapping[str, Any]) -> bytes | None:
    """Pass rate per evaluated gate tier against its floor."""
    tiers = {g: t for g, t in (report.get("gates") or {}).items() if t["pass_rate"] is not None}
    if not tiers:
        return None
    names = list(tiers)
    rates = [100 * float(tiers[g]["pass_rate"]) for g in names]
    colours = ["#2ca02c" if tiers[g]["status"] == "pass" else "#d62728" for g in names]
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.bar(names, rates, color=colours)
    for i, g in enumerate(names):
        floor = 100 * float(tiers[g]["floor"])
        ax.hlines(floor, i - 0.4, i + 0.4, colors="black", linestyles="--")
        ax.text(i, rates[i] + 1, f"{rates[i]:.1f} %", ha="center", fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel("pass rate (%)")
    ax.set_title("Gate pass rates (dashed: floor)")
    fig.tight_layout()
    return _png(fig)
