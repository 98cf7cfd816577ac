"""The metrics endpoint on a real loopback HTTP server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from exporters import EVENT_OUTCOMES, Metrics, MetricsServer
from tests.conftest import sample, scrape


def test_metrics_health_and_readiness() -> None:
    metrics = Metrics(version="1.2.3")
    metrics.declare_detector("pii", ["email", "phone"])
    state = {"ready": False}
    server = MetricsServer(
        metrics.registry,
        lambda: (state["ready"], "ok" if state["ready"] else "starting"),
        "127.0.0.1",
        0,
    ).start()
    try:
        m = scrape(server.url + "/metrics")
        for outcome in EVENT_OUTCOMES:
            assert ("ragpulse_events_total", (("outcome", outcome),)) in m
        assert sample(m, "ragpulse_detector_hits_total", detector="pii", category="email") == 0
        assert sample(m, "ragpulse_build_info", version="1.2.3") == 1

        metrics.events.labels("consumed").inc(3)
        assert (
            sample(scrape(server.url + "/metrics"), "ragpulse_events_total", outcome="consumed")
            == 3
        )

        with urllib.request.urlopen(server.url + "/healthz") as resp:
            assert resp.status == 200
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.url + "/readyz")
        assert info.value.code == 503
        assert json.loads(info.value.read()) == {"ready": False, "reason": "starting"}
        state["ready"] = True
        with urllib.request.urlopen(server.url + "/readyz") as resp:
            assert resp.status == 200
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.url + "/nope")
        assert info.value.code == 404
    finally:
        server.stop()
