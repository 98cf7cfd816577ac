"""Event models, Kafka and file sources, sinks, settings, the pipeline, the CLI and the demo."""

from stream.events import Event, EventLimits, InvalidEvent, parse_event

__all__ = ["Event", "EventLimits", "InvalidEvent", "parse_event"]
