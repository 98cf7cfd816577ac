"""Drift alarms end to end on the real broker: a refusal-rate rise raises an alarm in
/metrics and on the alarms topic, and the alarm (and detector state) survive a restart."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import SidecarProcess, Topics, consume_all, produce, sample

pytestmark = pytest.mark.broker

DRIFT_ENV = {
    "RAGPULSE_DRIFT__RATE_METRICS": '["refusal"]',
    "RAGPULSE_DRIFT__RATE_DETECTORS": (
        '[{"type": "proportion", "reference_size": 300, "window_size": 100, "cooldown": 100}]'
    ),
    "RAGPULSE_DRIFT__MIN_HOLD_S": "3600",
}
ALARM = {"metric": "refusal", "detector": "proportion", "service": "all"}


def _events(prefix: str, n: int, response: str) -> list[tuple[bytes | None, bytes]]:
    return [
        (
            f"conv-{prefix}-{i % 7}".encode(),
            json.dumps(
                {"event_id": f"{prefix}-{i}", "query": "What was revenue?", "response": response}
            ).encode(),
        )
        for i in range(n)
    ]


CLEAN = "Revenue was $2.1B in the quarter, up 4% year over year."
REFUSE = "I'm sorry, but I can't help with that request."


def _wait_alarm(sc: SidecarProcess, value: float, timeout: float = 30.0) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    m: dict = {}  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        m = sc.metrics()
        if sample(m, "ragpulse_drift_alarm", **ALARM) == value:
            return m
        time.sleep(0.5)
    raise AssertionError(f"drift alarm never became {value}:\n{sc.output()[-3000:]}")


def test_rate_rise_raises_alarm_and_it_survives_restart(
    sidecar_factory,  # type: ignore[no-untyped-def]
    topics: Topics,
    tmp_path: Path,
) -> None:
    one = sidecar_factory(topics, **DRIFT_ENV).start(tmp_path)
    produce(one.bootstrap, topics.input, _events("a", 400, CLEAN))
    m = one.wait_consumed(400)
    assert sample(m, "ragpulse_drift_alarm", **ALARM) == 0  # stationary: no alarm

    produce(one.bootstrap, topics.input, _events("b", 150, REFUSE))
    one.wait_consumed(550)
    m = _wait_alarm(one, 1)
    assert sample(m, "ragpulse_drift_alarms_total", **ALARM) == 1

    alarms = [json.loads(r.value) for r in consume_all(one.bootstrap, topics.alarms, 1)]
    assert len(alarms) == 1
    a = alarms[0]
    assert (a["state"], a["metric"], a["detector"], a["direction"]) == (
        "raised", "refusal", "proportion", "up"
    )  # fmt: skip
    assert a["reference_mean"] == 0 and a["current_mean"] >= 0.05 and a["samples_seen"] > 400
    assert one.terminate() == 0  # snapshots the drift state after the drain

    two = sidecar_factory(topics, **DRIFT_ENV).start(tmp_path)
    m = two.metrics()
    # the alarm that was up is up again at once, without being raised (paged) twice
    assert sample(m, "ragpulse_drift_alarm", **ALARM) == 1
    assert sample(m, "ragpulse_drift_alarms_total", **ALARM) == 0
    assert "restored 1 streams, 1 alarms up" in two.output()
    produce(two.bootstrap, topics.input, _events("c", 50, REFUSE))
    m = two.wait_consumed(50)
    assert sample(m, "ragpulse_drift_alarms_total", **ALARM) == 0

    # operator command: the current level is the new normal
    req = urllib.request.Request(two.url + "/drift/rebaseline", method="POST")
    with urllib.request.urlopen(req, timeout=15) as resp:
        answer = json.loads(resp.read())
    assert answer["rebaselined"] == 1 and answer["cleared"][0]["state"] == "cleared"
    assert sample(two.metrics(), "ragpulse_drift_alarm", **ALARM) == 0
    alarms = [json.loads(r.value) for r in consume_all(two.bootstrap, topics.alarms, 2)]
    assert [a["state"] for a in alarms] == ["raised", "cleared"]
    assert two.terminate() == 0
