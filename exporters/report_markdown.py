"""Markdown rendering of the `ragpulse eval` report (for PR comments and CI summaries)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from exporters.report_tables import Table, eval_sections, pct
from exporters.reports import register_report_format

__all__ = ["headline", "md_table", "render_markdown", "summary_counts", "summary_line"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(table: Table) -> list[str]:
    lines = [
        "| " + " | ".join(_cell(h) for h in table.headers) + " |",
        "|" + "---|" * len(table.headers),
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return lines


def headline(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The verdict as (text, css) parts: the critical gates' verdict (which sets the exit
    code), then every other gate that failed, by name ("pass"/"fail" as in the gate
    table)."""
    gates = report["gates"]
    failed = report["exit"]["failed_gates"]
    critical = [g for g, t in gates.items() if t["critical"]]
    named = ", ".join(critical) or "none configured"
    plural = "s" if len(critical) != 1 else ""
    if failed:
        parts = [(f"FAIL: critical gate{plural} {', '.join(failed)}", "fail")]
    else:
        parts = [(f"PASS: critical gate{plural} {named}", "pass")]
    others = [g for g, t in gates.items() if not t["critical"] and t["status"] == "fail"]
    if others:
        parts.append((f"also failing (not critical): {', '.join(others)}", "fail"))
    return parts


def summary_counts(report: Mapping[str, Any]) -> str:
    """Events, judged, and each evaluated gate's pass rate."""
    gates = ", ".join(
        f"{g} {pct(t['pass_rate'])} (≥ {pct(t['floor'])}) {t['status']}"
        for g, t in report["gates"].items()
        if t["status"] != "not_evaluated"
    )
    inp = report["input"]
    return (
        f"{inp['scored']} events scored, {inp['judged']} judged; gates: {gates or 'none evaluated'}"
    )


def summary_line(report: Mapping[str, Any]) -> str:
    """One line: the verdict (:func:`headline`), then :func:`summary_counts`."""
    return "; ".join(text for text, _ in headline(report)) + " — " + summary_counts(report)


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
