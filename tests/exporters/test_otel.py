"""Drift alarms as OpenTelemetry log-based events, through the real SDK."""

from __future__ import annotations

import json

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from exporters.otel import EVENT_DRIFT_ALARM, OtelEvents
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import Settings


def test_alarm_transition_becomes_an_otel_event() -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    settings = Settings(
        drift={
            "rate_metrics": ["refusal"],
            "rate_detectors": [{"type": "proportion", "reference_size": 200, "window_size": 50}],
        }
    )
    pipeline = Pipeline(settings, events=OtelEvents(provider))
    for i in range(300):
        refuse = i >= 250
        response = "I'm sorry, but I can't help with that." if refuse else "Revenue was $2.1B."
        raw = json.dumps({"event_id": f"e{i}", "query": "q?", "response": response}).encode()
        pipeline.process(raw)
    logs = exporter.get_finished_logs()
    assert len(logs) == 1
    record = logs[0].log_record
    assert record.event_name == EVENT_DRIFT_ALARM
    attrs = dict(record.attributes or {})
    assert attrs["ragpulse.alarm.state"] == "raised"
    assert attrs["ragpulse.alarm.metric"] == "refusal"
    assert attrs["ragpulse.alarm.direction"] == "up"
