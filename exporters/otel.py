"""OpenTelemetry events: drift alarm transitions and judge evaluations as log-based events.

Judge results follow the GenAI semantic convention (status: development): one
`gen_ai.evaluation.result` event per metric, with `gen_ai.evaluation.name`,
`gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label` (the severity band),
`gen_ai.evaluation.explanation`, `gen_ai.response.id` (the event id) and `error.type`
on failure.

Events go to the global LoggerProvider, a no-op until the deployment configures
OpenTelemetry. `setup_otel()` does that from the standard `OTEL_EXPORTER_OTLP_*`
environment when the OTLP exporter package is installed
(`pip install opentelemetry-exporter-otlp-proto-http`); without it, it says so once.
"""

from __future__ import annotations

import logging
import os

from opentelemetry import _logs
from opentelemetry._logs import SeverityNumber

from exporters.prometheus import ragpulse_version
from monitors.drift.alarms import AlarmEvent
from monitors.metrics.base import MetricOutcome

__all__ = ["EVENT_DRIFT_ALARM", "EVENT_EVALUATION", "OtelEvents", "setup_otel"]

log = logging.getLogger(__name__)

EVENT_DRIFT_ALARM = "ragpulse.drift_alarm"
EVENT_EVALUATION = "gen_ai.evaluation.result"


class OtelEvents:
    def __init__(self, provider: _logs.LoggerProvider | None = None) -> None:
        self._provider = provider

    def _logger(self) -> _logs.Logger:
        provider = self._provider or _logs.get_logger_provider()  # resolved late: setup may follow
        return provider.get_logger("ragpulse", ragpulse_version())

    def drift_alarm(self, alarm: AlarmEvent) -> None:
        raised = alarm.state == "raised"
        self._logger().emit(
            event_name=EVENT_DRIFT_ALARM,
            severity_number=SeverityNumber.WARN if raised else SeverityNumber.INFO,
            severity_text="WARN" if raised else "INFO",
            body=f"drift alarm {alarm.state}: {alarm.metric} ({alarm.detector})",
            attributes={f"ragpulse.alarm.{k}": v for k, v in alarm.to_dict().items()},
        )

    def evaluation(self, outcome: MetricOutcome, event_id: str) -> None:
        if outcome.status == "skipped":
            return
        attrs: dict[str, str | float] = {
            "gen_ai.evaluation.name": outcome.metric,
            "gen_ai.response.id": event_id,
        }
        if outcome.status == "scored" and outcome.score is not None:
            attrs["gen_ai.evaluation.score.value"] = float(outcome.score)
            attrs["gen_ai.evaluation.score.label"] = outcome.severity or ""
            attrs["gen_ai.evaluation.explanation"] = outcome.justification[:500]
        else:
            attrs["error.type"] = outcome.reason or "judge_error"
        self._logger().emit(event_name=EVENT_EVALUATION, attributes=attrs)


def setup_otel(service_name: str = "ragpulse") -> bool:
    """Install an OTLP log exporter when OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT is set."""
    if not (
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
    ):
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    except ImportError:
        log.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but no OTLP exporter is installed: "
            "pip install opentelemetry-exporter-otlp-proto-http"
        )
        return False
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource

    provider = LoggerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    _logs.set_logger_provider(provider)
    return True
