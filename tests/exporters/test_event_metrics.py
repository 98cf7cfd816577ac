"""EventMetrics' cached label children export exactly what uncached `labels()` calls do."""

from __future__ import annotations

from prometheus_client import generate_latest

from detectors import Detection
from exporters.event_metrics import _MAX_DEPLOYMENTS, EventMetrics
from exporters.labels import LabelCap
from exporters.prometheus import PromFamilies
from stream.contract.events import Event


def _metrics() -> PromFamilies:
    caps = {name: LabelCap(2) for name in ("service", "model", "prompt_version")}
    return PromFamilies(label_caps=caps, version="test")


def _event(i: int, service: str | None, model: str | None, prompt: str | None) -> Event:
    return Event(
        event_id=f"e{i}",
        query="q",
        response="r",
        service=service,
        model=model,
        prompt_version=prompt,
    )


def _exposition(m: PromFamilies) -> list[str]:
    return [
        line
        for line in generate_latest(m.registry).decode().splitlines()
        if not line.startswith(("ragpulse_last_event", "ragpulse_detect_seconds"))
    ]


def _uncached(m: PromFamilies, event: Event, detections: list[Detection], modes: list[str]) -> None:
    """What `consumed()` + `scored()` did before the caches (label lookups every time)."""
    m.events.labels("consumed").inc()
    m.events.labels("scored").inc()
    service = m.cap_service(event.service)
    prompt = m.cap_prompt(event.prompt_version)
    m.scored.labels(service, m.cap_model(event.model), prompt).inc()
    for d in detections:
        m.detector_hits.labels(d.detector, d.category).inc()
    for mode in modes:
        m.failure_modes.labels(mode, service, prompt).inc()


def test_cached_children_and_caps_export_the_same_series() -> None:
    values = ["a", "b", "c", None, "", "x" * 80, "a"]
    cached, plain = _metrics(), _metrics()
    export = EventMetrics(cached)
    hit = Detection("refusal", "refusal", "no", failure_mode="false_rejection")
    for i in range(300):
        event = _event(
            i, values[i % 7], values[(i // 7) % 7], values[(i // 49) % 7] if i % 3 else "v1"
        )
        detections, modes = ([hit], ["false_rejection"]) if i % 5 == 0 else ([], [])
        export.consumed()
        export.scored(event, detections, modes, 0.0001)
        _uncached(plain, event, detections, modes)
    assert _exposition(cached) == _exposition(plain)
    # only triples whose values the caps kept are remembered: "c" and the long value
    # came after the two-value caps were full, so they map to "other" and are not keys
    for key in export._deployments:
        assert all(v in (None, "", "a", "b", "v1") for v in key), key


def test_the_deployment_cache_is_bounded() -> None:
    m = PromFamilies(label_caps={"service": LabelCap(10**6)}, version="test")
    export = EventMetrics(m)
    for i in range(_MAX_DEPLOYMENTS + 50):
        export.scored(_event(i, f"svc-{i}", None, None), [], [], 0.0)
    assert len(export._deployments) == _MAX_DEPLOYMENTS
    sample = m.registry.get_sample_value(
        "ragpulse_scored_events_total",
        {
            "service": f"svc-{_MAX_DEPLOYMENTS + 49}",
            "model": "unknown",
            "prompt_version": "unknown",
        },
    )
    assert sample == 1.0
