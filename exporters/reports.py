"""Report renderers registered by (report kind, file suffix): the report extension point.

A report is a plain dict whose ``format`` names its kind (``ragpulse.eval/1`` ->
``eval``, ``ragpulse.calibration/1`` -> ``calibration``, ``ragpulse-qualification/1``
-> ``qualification``). Add a format with
``@register_report_format("eval", ".csv")`` on a ``report -> str`` function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "ReportRenderer",
    "register_report_format",
    "render_report",
    "report_formats",
    "report_kind",
    "write_report",
]

ReportRenderer = Callable[[Mapping[str, Any]], str]
_RENDERERS: dict[tuple[str, str], ReportRenderer] = {}
_BUILT_IN = (
    "exporters.report_json",
    "exporters.report_markdown",
    "exporters.report_html",
    "exporters.calibration_markdown",
    "exporters.qualification_markdown",
)


def register_report_format(kind: str, suffix: str) -> Callable[[ReportRenderer], ReportRenderer]:
    def wrap(fn: ReportRenderer) -> ReportRenderer:
        key = (kind, suffix.lower())
        if key in _RENDERERS:
            raise ValueError(f"report format {key} is already registered")
        _RENDERERS[key] = fn
        return fn

    return wrap


def _load() -> None:
    for module in _BUILT_IN:  # imported on use: the HTML renderer pulls in matplotlib
        importlib.import_module(module)


def report_kind(report: Mapping[str, Any]) -> str:
    fmt = str(report.get("format", "")).split("/", 1)[0]
    for prefix in ("ragpulse.", "ragpulse-"):
        if fmt.startswith(prefix):
            return fmt.removeprefix(prefix)
    return fmt


def report_formats(kind: str) -> list[str]:
    _load()
    return sorted(suffix for k, suffix in _RENDERERS if k == kind)


def render_report(report: Mapping[str, Any], suffix: str) -> str:
    _load()
    kind = report_kind(report)
    try:
        renderer = _RENDERERS[(kind, suffix.lower())]
    except KeyError:
        raise ValueError(
            f"no {suffix!r} renderer for {kind} reports; formats: {report_formats(kind)}"
        ) from None
    return renderer(report)


def write_report(report: Mapping[str, Any], path: str | Path) -> Path:
    """Render by the file suffix and write (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(render_report(report, path.suffix), encoding="utf-8")
    return path
