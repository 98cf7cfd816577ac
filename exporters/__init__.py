"""Prometheus families and the HTTP endpoint, OpenTelemetry events, alert-rule and
dashboard generators. Bounded labels throughout.

The dashboard generator (`exporters.dashboard.render_dashboard`) is imported on use:
the Grafana SDK it builds on is large and only `ragpulse dashboards export` needs it.
"""

from exporters.http import Action, MetricsServer, Readiness
from exporters.labels import LabelCap
from exporters.otel import OtelEvents, setup_otel
from exporters.prometheus import EVENT_OUTCOMES, PromFamilies, ragpulse_version
from exporters.rules import AlertSettings, render_prometheus_rule, render_rule_groups

__all__ = [
    "EVENT_OUTCOMES",
    "Action",
    "AlertSettings",
    "LabelCap",
    "MetricsServer",
    "OtelEvents",
    "PromFamilies",
    "Readiness",
    "ragpulse_version",
    "render_prometheus_rule",
    "render_rule_groups",
    "setup_otel",
]


def __getattr__(name: str) -> object:
    # `Metrics` was the old name of PromFamilies (judge metrics live in monitors.metrics)
    if name == "Metrics":
        import warnings

        warnings.warn(
            "exporters.Metrics is renamed exporters.PromFamilies", DeprecationWarning, stacklevel=2
        )
        return PromFamilies
    raise AttributeError(f"module 'exporters' has no attribute {name!r}")
