"""Prometheus alerting rules generated from configuration (`ragpulse rules export`).

`AlertSettings` (`exporters.alert_settings`) holds thresholds, `for` durations and
severities; `render_rule_groups` turns it into a Prometheus rule file (`{"groups": [...]}`:
one group, recording rules then alerts), `render_prometheus_rule` into a Prometheus
Operator `PrometheusRule` object. Every alert carries a `severity` label, `summary` /
`description` annotations and a `runbook_url` pointing at its section of docs/runbook.md.
The PromQL lives in `exporters.promql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from exporters.alert_settings import ALERT_NAMES, AlertSettings
from exporters.judge_health_rules import (
    annotate_judged,
    judge_health_alerts,
    judge_health_records,
)
from exporters.promql import RuleBuilder
from exporters.slo_rules import SloRules
from exporters.slo_settings import SloSpec

__all__ = [
    "ALERT_NAMES",
    "AlertSettings",
    "render_prometheus_rule",
    "render_rule_groups",
    "to_yaml",
]


def render_rule_groups(alerts: AlertSettings, slos: Sequence[SloSpec] = ()) -> dict[str, Any]:
    """A Prometheus rule file: the group `ragpulse`, recording rules first, then the alerts;
    with SLOs, the groups of `exporters.slo_rules` after it.

    Recording rules and the alerts that read them share a group, because Prometheus
    evaluates the rules of a group in order but different groups concurrently: an alert in
    another group could read a recording rule's value from the previous evaluation.
    """
    b = RuleBuilder(alerts)
    records = b.recording_rules() + judge_health_records(b)
    alerts_ = annotate_judged(b.alerting_rules(), b) + judge_health_alerts(b)
    return {
        "groups": [
            {"name": "ragpulse", "rules": records + alerts_},
            *SloRules(alerts, slos).groups(),
        ]
    }


def render_prometheus_rule(
    alerts: AlertSettings,
    name: str,
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
    slos: Sequence[SloSpec] = (),
) -> dict[str, Any]:
    """The same groups as a `monitoring.coreos.com/v1` `PrometheusRule` object."""
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    metadata["labels"] = {"app.kubernetes.io/name": "ragpulse", **(labels or {})}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata,
        "spec": render_rule_groups(alerts, slos),
    }


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (PromQL) as YAML literal blocks; keys in insertion order."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def to_yaml(doc: dict[str, Any]) -> str:
    """YAML for a rule file or PrometheusRule, readable (PromQL as literal blocks)."""
    return yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=1000)
