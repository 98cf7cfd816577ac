"""The README's main job: `ragpulse demo` shows hits for every detector within 30 s, exits 0."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error

import pytest

from stream.demo import free_port
from tests.conftest import REPO, consume_all, sample, scrape

pytestmark = pytest.mark.broker

DETECTORS = ("refusal", "policy", "pii", "citations", "identifiers", "source_policy")


def _hits(metrics: dict, detector: str) -> float:  # type: ignore[type-arg]
    return sum(
        v
        for (name, labels), v in metrics.items()
        if name == "ragpulse_detector_hits_total" and dict(labels).get("detector") == detector
    )


def _judged(metrics: dict) -> float:  # type: ignore[type-arg]
    return sum(
        v
        for (name, labels), v in metrics.items()
        if name == "ragpulse_judge_requests_total" and dict(labels).get("outcome") == "ok"
    )


def test_demo_shows_every_detector_within_30s_and_the_regression(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        # 100 events/s: the drift reference windows (2,000 events) fill before the switch
        args = ["demo", "--rate", "100", "--duration", "55", "--degrade-after", "25"]
        args += ["--port", str(port)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "stream.cli", *args],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        # deadlines count from the replay start, as the demo's own --degrade-after does
        # (start-up itself can take 10+ s of wall time on a loaded 2-core machine)
        started = time.monotonic()
        while b"demo: replaying traffic" not in log.read_bytes():
            assert proc.poll() is None and time.monotonic() - started < 90, log.read_text()
            time.sleep(0.2)
        started = time.monotonic()
        metrics: dict = {}  # type: ignore[type-arg]
        while time.monotonic() - started < 30:
            with contextlib.suppress(urllib.error.URLError, ConnectionError):
                metrics = scrape(f"http://127.0.0.1:{port}/metrics")
            if (
                metrics
                and all(_hits(metrics, d) > 0 for d in DETECTORS)
                and sample(metrics, "ragpulse_events_total", outcome="dead_lettered") > 0
                and _judged(metrics) > 0
            ):
                break
            time.sleep(1)
        assert {d: _hits(metrics, d) for d in DETECTORS if _hits(metrics, d) == 0} == {}, (
            log.read_text()
        )
        assert sample(metrics, "ragpulse_events_total", outcome="dead_lettered") > 0
        # the embedded judge scores sampled turns (off the detector path)
        assert _judged(metrics) > 0, log.read_text()
        # population turns feed ragpulse_metric_score, boosted ones their own family
        scored = sample(metrics, "ragpulse_metric_score_count", metric="faithfulness") + sum(
            sample(metrics, "ragpulse_boosted_metric_score_count", metric="faithfulness", reason=r)
            for r in ("boost_detector", "boost_feedback", "boost_retrieval")
        )
        assert scored > 0
        versions: set[str | None] = set()
        while time.monotonic() - started < 33 and "v1.5-degraded" not in versions:
            time.sleep(1)
            versions = {
                dict(labels).get("prompt_version")
                for (name, labels), v in scrape(f"http://127.0.0.1:{port}/metrics").items()
                if name == "ragpulse_scored_events_total" and v > 0
            }
        assert {"v1.4", "v1.5-degraded"} <= versions  # the injected regression is visible

        # ... and raises drift alarms, in /metrics and on the alarms topic
        up: set[str] = set()
        while time.monotonic() - started < 50 and not up:
            time.sleep(1)
            up = {
                dict(labels)["metric"]
                for (name, labels), v in scrape(f"http://127.0.0.1:{port}/metrics").items()
                if name == "ragpulse_drift_alarm" and v == 1
            }
        assert up & {"refusal", "invented_identifier", "training_cutoff_excuse", "pii_leak"}, (
            log.read_text()
        )
        match = re.search(r"broker on (127\.0\.0\.1:\d+)", log.read_text())
        assert match is not None
        alarms = [json.loads(r.value) for r in consume_all(match.group(1), "rag.alarms", len(up))]
        assert {a["metric"] for a in alarms if a["state"] == "raised"} >= up
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "demo: metrics at http://127.0.0.1:" in text
    assert "demo: final totals: consumed=" in text
