"""The chart ships the generated rules and dashboard: they must equal the generators' output."""

from __future__ import annotations

import json
from pathlib import Path

from exporters.dashboard import render_dashboard
from exporters.rules import AlertSettings, render_rule_groups, to_yaml
from exporters.slo_settings import DEFAULT_SLOS, SloSpec

FILES = Path(__file__).resolve().parents[2] / "helm" / "ragpulse" / "files"
REGENERATE = (
    "regenerate: ragpulse rules export -o helm/ragpulse/files/prometheus-rules.yaml && "
    "ragpulse dashboards export -o helm/ragpulse/files/dashboard.json"
)


def test_chart_rules_are_the_generated_rules() -> None:
    shipped = (FILES / "prometheus-rules.yaml").read_text()
    slos = [SloSpec.model_validate(d) for d in DEFAULT_SLOS]  # the default `slos`
    assert shipped == to_yaml(render_rule_groups(AlertSettings(), slos)), REGENERATE


def test_chart_dashboard_is_the_generated_dashboard() -> None:
    shipped = json.loads((FILES / "dashboard.json").read_text())
    assert shipped == render_dashboard(AlertSettings()), REGENERATE
