"""JSON rendering of eval and calibration reports (the machine-readable, baseline form)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from exporters.reports import register_report_format

__all__ = ["render_json"]


@register_report_format("eval", ".json")
@register_report_format("calibration", ".json")
def render_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
