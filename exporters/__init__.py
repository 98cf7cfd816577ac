"""Prometheus metrics and HTTP endpoint, bounded labels (later: OTel, rule and dashboard files)."""

from exporters.http import MetricsServer, Readiness
from exporters.labels import LabelCap
from exporters.prometheus import EVENT_OUTCOMES, Metrics

__all__ = ["EVENT_OUTCOMES", "LabelCap", "Metrics", "MetricsServer", "Readiness"]
