"""Markdown rendering of the `ragpulse eval` report (for PR comments and CI summaries)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from exporters.report_tables import Table, eval_sections, pct
from exporters.reports import register_report_format

__all__ = ["md_table", "render_markdown", "summary_line"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(table: Table) -> list[str]:
    lines = [
        "| " + " | ".join(_cell(h) for h in table.headers) + " |",
        "|" + "---|" * len(table.headers),
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return lines


def summary_line(report: Mapping[str, Any]) -> str:
    """One line: verdict, events, judged, and each evaluated gate's pass rate."""
    verdict = report["exit"]
    gates = ", ".join(
        f"{g} {pct(t['pass_rate'])} (≥ {pct(t['floor'])}) {t['status']}"
        for g, t in report["gates"].items()
        if t["status"] != "not_evaluated"
    )
    state = "FAIL: " + ", ".join(verdict["failed_gates"]) if verdict["failed_gates"] else "PASS"
    inp = report["input"]
    return (
        f"{state} — {inp['scored']} events scored, {inp['judged']} judged; "
        f"gates: {gates or 'none evaluated'}"
    )


@register_report_format("eval", ".md")
def render_markdown(report: Mapping[str, Any]) -> str:
    inp = report["input"]
    out = [
        "# ragpulse eval report",
        "",
        f"**{summary_line(report)}**",
        "",
        f"Input `{inp['path']}`: {inp['lines']} lines, {inp['scored']} scored, "
        f"{inp['invalid']} invalid, {inp['duplicate']} duplicate; judge "
        f"`{report['judge']['name']}`; created {report['created']}.",
    ]
    if inp.get("labels_matched") or inp.get("labels_unmatched"):
        out[-1] += f" Labels: {inp['labels_matched']} matched, {inp['labels_unmatched']} unmatched."
    regressed = report["exit"]["regressions"]
    if regressed:
        out += ["", "Significant regressions: " + ", ".join(f"`{r}`" for r in regressed)]
    for section in eval_sections(report):
        out += ["", f"## {section.title}"]
        for line in section.lines:
            out += ["", line]
        for table in section.tables:
            out += ["", *md_table(table)]
    return "\n".join(out).rstrip() + "\n"
