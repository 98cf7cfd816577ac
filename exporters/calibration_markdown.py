"""Markdown rendering of the `ragpulse calibrate` report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from exporters.report_markdown import md_table
from exporters.report_tables import Table, num, pct
from exporters.reports import register_report_format

__all__ = ["render_calibration_markdown"]

_BANDS = ("severe", "moderate", "minor", "none")
_HEAD = [
    "metric",
    "judge",
    "n",
    "κ",
    "κ kind",
    "κ binary",
    "κ bands",
    "accuracy",
    "band accuracy",
    "Pearson r",
    "Spearman rho",
    "MAE",
    "ECE",
    "threshold",
    "",
]


def _corr(value: Mapping[str, Any] | None) -> str:
    return "-" if not value else num(value.get("r"))


def _row(metric: str, judge: str, r: Mapping[str, Any], target: float | None) -> list[str]:
    verdict = ""
    if target is not None:
        verdict = "**below target**" if r.get("below_target") else "ok"
    return [
        metric,
        judge,
        str(r["n"]),
        num(r["kappa"]),
        r["kappa_kind"],
        num(r["kappa_binary"]),
        num(r["kappa_bands_linear"]),
        pct(r["accuracy"]),
        pct(r["accuracy_bands"]),
        _corr(r["pearson"]),
        _corr(r["spearman"]),
        num(r["mae"]),
        num(r.get("ece")),
        f"{r['threshold']:g}",
        verdict,
    ]


def _reliability(report: Mapping[str, Any]) -> list[str]:
    """Reliability diagrams as tables: per bin of the score, the share of items the humans
    call good (a calibrated score reads the same as that share)."""
    out = [
        "## Reliability (score read as the probability that the turn is fine)",
        "",
        "ECE = expected calibration error over 10 equal-width score bins.",
        "",
    ]
    for metric, judges in report["metrics"].items():
        for judge, r in judges.items():
            bins = [b for b in r.get("reliability") or [] if b["n"]]
            if not bins:
                continue
            out += [f"**{metric}** (`{judge}`), ECE {num(r.get('ece'))}", ""]
            rows = [
                [f"{b['lo']:g}-{b['hi']:g}", str(b["n"]), num(b["mean_score"]),
                 num(b["good_share"])]
                for b in bins
            ]  # fmt: skip
            out += [*md_table(Table(["score bin", "n", "mean score", "good share"], rows)), ""]
    return out


def _confusions(report: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for metric, judges in report["metrics"].items():
        for judge, r in judges.items():
            b = r.get("confusion_binary")
            if not b:
                continue
            out += [f"**{metric}** — `{judge}` (rows human, columns judge)", ""]
            out += md_table(
                Table(
                    ["human \\ judge", "good", "bad"],
                    [
                        ["good", str(b["both_good"]), str(b["human_good_judge_bad"])],
                        ["bad", str(b["human_bad_judge_good"]), str(b["both_bad"])],
                    ],
                )
            )
            bands = r.get("confusion_bands")
            if bands:
                rows = [
                    [name, *map(str, counts)] for name, counts in zip(_BANDS, bands, strict=True)
                ]
                out += ["", *md_table(Table(["human \\ judge", *_BANDS], rows))]
            out.append("")
    return out


@register_report_format("calibration", ".md")
def render_calibration_markdown(report: Mapping[str, Any]) -> str:
    target = float(report["kappa_target"])
    flagged = report["flagged"]
    out = [
        "# ragpulse judge calibration",
        "",
        f"{report['labelled_events']} human-labelled events; judges: "
        + ", ".join(f"`{j}`" for j in report["judges"])
        + f"; κ target {target:g}; created {report['created']}.",
        "",
        (
            f"**{len(flagged)} metric/judge pair(s) below the κ target:** "
            + ", ".join(f"{f['metric']} ({f['judge']}, κ {num(f['kappa'])})" for f in flagged)
            if flagged
            else "**Every labelled metric reaches the κ target.**"
        ),
        "",
        "## Agreement with the human labels",
        "",
    ]
    rows = [
        _row(metric, judge, r, target)
        for metric, judges in report["metrics"].items()
        for judge, r in judges.items()
    ]
    out += [*md_table(Table(_HEAD, rows)), ""]
    panel = report.get("panel")
    if panel:
        a, b = panel["judges"]
        out += ["## Panel agreement", "", f"`{a}` against `{b}` (the second as reference).", ""]
        prow = [_row(m, f"{a} vs {b}", r, None) for m, r in panel["metrics"].items()]
        out += [*md_table(Table(_HEAD, prow)), ""]
    out += _reliability(report)
    out += ["## Confusion matrices", "", *_confusions(report)]
    return "\n".join(out).rstrip() + "\n"
