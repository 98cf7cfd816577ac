"""Self-contained HTML rendering of the `ragpulse eval` report: tables plus plots embedded
as base64 PNG (no external assets, so the file can be archived as a CI artifact)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from html import escape
from typing import Any

from exporters.report_markdown import headline, summary_counts
from exporters.report_plots import failure_mode_plot, gate_plot, score_distribution_plot
from exporters.report_tables import Table, eval_sections
from exporters.reports import register_report_format

__all__ = ["render_html"]

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;font-size:.9em}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.verdict{font-size:1.15em}.pass{color:#1a7f37;font-weight:bold}.fail{color:#c62828;font-weight:bold}img{max-width:100%}
"""


def _cell(text: str) -> str:
    bold = text.startswith("**") and text.endswith("**")
    text = text.strip("*")
    css = "fail" if bold or text in ("FAIL",) else ("pass" if text == "pass" else "")
    inner = escape(text)
    return f'<td class="{css}">{inner}</td>' if css else f"<td>{inner}</td>"


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _img(png: bytes | None, alt: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img alt="{escape(alt)}" src="data:image/png;base64,{data}"></figure>'


@register_report_format("eval", ".html")
def render_html(report: Mapping[str, Any]) -> str:
    plots = {
        "gates": _img(gate_plot(report), "gate pass rates"),
        "metrics": _img(score_distribution_plot(report), "judge score distributions"),
        "failure-modes": _img(failure_mode_plot(report), "failure modes"),
    }
    inp = report["input"]
    verdict = " · ".join(
        f'<span class="{css}">{escape(text)}</span>' for text, css in headline(report)
    )
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f"<title>ragpulse eval report</title><style>{_STYLE}</style></head><body>",
        "<h1>ragpulse eval report</h1>",
        f'<p class="verdict">{verdict} — {escape(summary_counts(report))}</p>',
        f"<p>Input <code>{escape(str(inp['path']))}</code>: {inp['lines']} lines, "
        f"{inp['scored']} scored, {inp['invalid']} invalid, {inp['duplicate']} duplicate; "
        f"judge <code>{escape(report['judge']['name'])}</code>; "
        f"created {escape(str(report['created']))}.</p>",
    ]
    for section in eval_sections(report):
        parts.append(f'<h2 id="{section.anchor}">{escape(section.title)}</h2>')
        parts += [f"<p>{escape(line.replace('`', ''))}</p>" for line in section.lines]
        parts += [_table(t) for t in section.tables]
        parts.append(plots.get(section.anchor, ""))
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"
