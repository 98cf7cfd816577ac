"""Drift alarms end to end on the real broker: a refusal-rate rise raises an alarm in
/metrics and on the alarms topic, the alarm (and detector state) survive a restart, and
only an operator with the admin token can re-baseline it."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from stream.demo import free_port
from tests.conftest import SidecarProcess, Topics, consume_all, produce, sample

pytestmark = pytest.mark.broker

DRIFT_ENV = {
    "RAGPULSE_DRIFT__RATE_METRICS": '["refusal"]',
    "RAGPULSE_DRIFT__RATE_DETECTORS": (
        '[{"type": "proportion", "reference_size": 300, "window_size": 100, "cooldown": 100}]'
    ),
    "RAGPULSE_DRIFT__MIN_HOLD_S": "3600",
}
ADMIN_TOKEN = "drift-admin-t0ken-5f3a9c1e7b2d4068"
ADMIN_ENV = {
    "RAGPULSE_SERVER__ADMIN__ENABLED": "true",
    "RAGPULSE_SERVER__ADMIN__TOKEN": ADMIN_TOKEN,
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


def _post(url: str, token: str | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    req = urllib.request.Request(url, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait_alarm(sc: SidecarProcess, value: float, timeout: float = 30.0) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    m: dict = {}  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        m = sc.metrics()
        if sample(m, "ragpulse_drift_alarm", **ALARM) == value:
            return m
        time.sleep(0.5)
    fleet = {k: v for k, v in m.items() if "observation" in k[0] or "drift_owned" in k[0]}
    raise AssertionError(f"drift alarm never became {value}: {fleet}\n{sc.output()[-3000:]}")


def test_rate_rise_raises_alarm_and_it_survives_restart(
    sidecar_factory,  # type: ignore[no-untyped-def]
    topics: Topics,
    tmp_path: Path,
) -> None:
    one = sidecar_factory(topics, **DRIFT_ENV).start(tmp_path)
    produce(one.bootstrap, topics.input, _events("a", 400, CLEAN))
    m = one.wait_consumed(400)
    assert sample(m, "ragpulse_drift_alarm", **ALARM) == 0  # stationary: no alarm

    # a group's detectors see 1 s intervals (docs/drift.md): the order of events inside
    # one interval is not kept, so the change must not share an interval with the reference
    time.sleep(2.5)
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
    # admin actions are off by default: 404, token or not, and the alarm stays up
    assert _post(one.url + "/drift/rebaseline")[0] == 404
    assert _post(one.url + "/drift/rebaseline", ADMIN_TOKEN)[0] == 404
    assert sample(one.metrics(), "ragpulse_drift_alarm", **ALARM) == 1
    assert one.terminate() == 0  # snapshots the drift state after the drain

    two = sidecar_factory(topics, **DRIFT_ENV, **ADMIN_ENV).start(tmp_path)
    # the alarm that was up is up again as soon as the series is owned, without being
    # raised (paged) twice
    m = _wait_alarm(two, 1)
    assert sample(m, "ragpulse_drift_alarms_total", **ALARM) == 0
    assert "1 series restored, 1 alarms up" in two.output()
    produce(two.bootstrap, topics.input, _events("c", 50, REFUSE))
    m = two.wait_consumed(50)
    assert sample(m, "ragpulse_drift_alarms_total", **ALARM) == 0

    # anyone else who reaches the port: refused, and the alarm stays up
    for headers in ({}, {"Authorization": "Bearer not-the-token-0123456789"}):
        req = urllib.request.Request(two.url + "/drift/rebaseline", method="POST", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=15)
        assert info.value.code == 401
        assert info.value.headers["WWW-Authenticate"].startswith("Bearer")
    assert sample(two.metrics(), "ragpulse_drift_alarm", **ALARM) == 1

    # operator command with the token: the current level is the new normal
    code, body = _post(two.url + "/drift/rebaseline", ADMIN_TOKEN)
    assert code == 200, body
    answer = json.loads(body)
    assert answer["rebaseline"] == "requested" and answer["partitions"] == 4, answer
    _wait_alarm(two, 0)
    alarms = [json.loads(r.value) for r in consume_all(two.bootstrap, topics.alarms, 2)]
    assert [a["state"] for a in alarms] == ["raised", "cleared"]  # no clear from the 401s
    assert two.terminate() == 0
    log = two.output()
    assert "refused POST /drift/rebaseline" in log and "admin: POST /drift/rebaseline" in log
    assert ADMIN_TOKEN not in log


def test_separate_admin_port_takes_the_actions_off_the_metrics_port(
    sidecar_factory,  # type: ignore[no-untyped-def]
    topics: Topics,
    tmp_path: Path,
) -> None:
    admin_port = free_port()
    sc = sidecar_factory(topics, **ADMIN_ENV, RAGPULSE_SERVER__ADMIN__PORT=str(admin_port)).start(
        tmp_path
    )
    admin = f"http://127.0.0.1:{admin_port}"
    assert _post(sc.url + "/drift/rebaseline", ADMIN_TOKEN)[0] == 404  # not on /metrics' port
    assert _post(admin + "/drift/rebaseline")[0] == 401
    code, body = _post(admin + "/drift/rebaseline", ADMIN_TOKEN)
    assert code == 200 and json.loads(body)["rebaseline"] == "requested"
    assert any(name == "ragpulse_build_info" for name, _ in sc.metrics())  # GETs: no token
    assert sc.terminate() == 0
    assert f"admin actions (bearer token) on {admin}: /drift/rebaseline" in sc.output()
