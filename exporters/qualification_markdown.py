"""Markdown (and JSON) rendering of the `ragpulse qualify` report (kind ``qualification``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from exporters.report_json import render_json
from exporters.report_markdown import md_table
from exporters.report_tables import Table, num
from exporters.reports import register_report_format

__all__ = ["render_qualification_markdown"]

register_report_format("qualification", ".json")(render_json)


def _verdict(row: Mapping[str, Any]) -> str:
    return "**qualified**" if row.get("qualified") else "not qualified"


def _metric_table(row: Mapping[str, Any]) -> Table:
    rw = row.get("rewrites") or {}
    vr = num(row.get("variance_ratio"))
    if row.get("variance_ratio") is None and row.get("vr_reason"):
        vr += f" ({row['vr_reason']})"
    rmad = num(row.get("rmad"))
    if row.get("rmad") is None and row.get("rmad_reason"):
        rmad += f" ({row['rmad_reason']})"
    rows = [
        ["good / bad answers", f"{row['n_good']} / {row['n_bad']}"],
        ["mean score good / bad", f"{num(row.get('mean_good'))} / {num(row.get('mean_bad'))}"],
        ["Cohen's d", num(row.get("cohens_d"))],
        ["variance ratio (VR)", vr],
        ["changed rewrites scored", str(rw.get("n_changed", 0))],
        ["mean absolute change", num(rw.get("mean_abs_change"), 4)],
        ["mean shift (rewrite - original)", num(rw.get("mean_shift"), 4)],
        ["RMAD across groups", rmad],
        ["verdict", _verdict(row) + "".join(f"; {r}" for r in row.get("reasons") or [])],
    ]
    return Table(["figure", "value"], rows)


def _groups_table(row: Mapping[str, Any]) -> Table:
    rows = [
        [name, str(g["n_good"]), str(g["n_bad"]), num(g.get("cohens_d"))]
        for name, g in (row.get("groups") or {}).items()
    ]
    return Table(["group", "good", "bad", "d"], rows)


@register_report_format("qualification", ".md")
def render_qualification_markdown(report: Mapping[str, Any]) -> str:
    th = report["thresholds"]
    metrics: Mapping[str, Mapping[str, Any]] = report["metrics"]
    out = [
        "# ragpulse metric qualification",
        "",
        f"Input `{report.get('input')}`, judge `{report.get('judge')}`: "
        f"{report.get('n_events')} events, {report.get('n_labelled', '-')} with "
        f"labels.human.overall. Qualified: d > {th['min_d']:g} and VR < {th['max_vr']:g}; "
        f"RMAD over the {report.get('group_by', 'group')} groups with at least "
        f"{th['min_per_group']} good and {th['min_per_group']} bad answers.",
        "",
    ]
    summary = [
        [
            name,
            num(row.get("cohens_d")),
            num(row.get("variance_ratio")),
            num(row.get("rmad")),
            _verdict(row),
        ]
        for name, row in metrics.items()
    ]
    out += [*md_table(Table(["metric", "d", "VR", "RMAD", "verdict"], summary)), ""]
    for name, row in metrics.items():
        out += [f"## {name}", "", *md_table(_metric_table(row)), ""]
        if row.get("groups"):
            out += [f"Per {report.get('group_by', 'group')}:", ""]
            out += [*md_table(_groups_table(row)), ""]
    return "\n".join(out).rstrip() + "\n"
