"""The metrics endpoint and the admin actions on a real loopback HTTP server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from exporters import EVENT_OUTCOMES, Action, MetricsServer, PromFamilies
from tests.conftest import sample, scrape


def test_metrics_health_and_readiness() -> None:
    metrics = PromFamilies(version="1.2.3")
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


# ------------------------------------------------------------------ admin actions
TOKEN = "t0ken-for-the-tests-0123456789abcdef"


class _Calls:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> object:
        self.n += 1
        return {"rebaselined": 1}


def _post(
    url: str, token: str | None = None, scheme: str = "Bearer"
) -> tuple[int, dict[str, str], bytes]:
    headers = {} if token is None else {"Authorization": f"{scheme} {token}"}
    req = urllib.request.Request(url, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _server(calls: _Calls, enabled: bool = True, admin_port: int | None = None) -> MetricsServer:
    """What the sidecar builds: the actions only when `server.admin.enabled`."""
    actions: dict[str, Action] | None = {"/drift/rebaseline": calls} if enabled else None
    return MetricsServer(
        PromFamilies().registry, lambda: (True, "ok"), "127.0.0.1", 0, actions,
        token=TOKEN, admin_host="127.0.0.1", admin_port=admin_port,
    ).start()  # fmt: skip


def test_actions_are_404_when_not_enabled() -> None:
    calls = _Calls()
    server = _server(calls, enabled=False)
    try:
        for token in (None, TOKEN):
            code, _, _ = _post(server.url + "/drift/rebaseline", token)
            assert code == 404
        assert calls.n == 0
        with urllib.request.urlopen(server.url + "/metrics") as resp:
            assert resp.status == 200
    finally:
        server.stop()


def test_actions_need_the_bearer_token() -> None:
    calls = _Calls()
    server = _server(calls)
    url = server.url + "/drift/rebaseline"
    try:
        for token, scheme in [
            (None, "Bearer"),
            ("", "Bearer"),
            ("wrong-" + TOKEN, "Bearer"),
            (TOKEN[:-1], "Bearer"),
            (TOKEN, "Basic"),
            (TOKEN + "x", "Bearer"),
        ]:
            code, headers, body = _post(url, token, scheme)
            assert code == 401, (token, scheme)
            assert headers["WWW-Authenticate"].startswith("Bearer")
            assert TOKEN.encode() not in body
        assert calls.n == 0  # nothing ran

        code, _, body = _post(url, TOKEN)
        assert (code, json.loads(body)) == (200, {"rebaselined": 1})
        code, _, _ = _post(url, TOKEN, scheme="bearer")  # the scheme is case-insensitive
        assert code == 200 and calls.n == 2

        # GETs never need a token; unknown POST paths stay 404
        for path in ("/metrics", "/healthz", "/readyz"):
            with urllib.request.urlopen(server.url + path) as resp:
                assert resp.status == 200, path
        assert _post(server.url + "/nope", TOKEN)[0] == 404
        assert server.admin_url is None
    finally:
        server.stop()


def test_separate_admin_port_serves_the_actions_only_there() -> None:
    calls = _Calls()
    server = _server(calls, admin_port=0)
    try:
        assert server.admin_url is not None and server.admin_url != server.url
        assert server.admin_url.startswith("http://127.0.0.1:")
        # the metrics port answers 404 for the actions, with or without the token
        assert _post(server.url + "/drift/rebaseline", TOKEN)[0] == 404
        assert _post(server.url + "/drift/rebaseline")[0] == 404
        assert calls.n == 0
        # the admin listener: token required, and nothing but the actions
        assert _post(server.admin_url + "/drift/rebaseline")[0] == 401
        assert calls.n == 0
        assert _post(server.admin_url + "/drift/rebaseline", TOKEN)[0] == 200
        assert calls.n == 1
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.admin_url + "/metrics")
        assert info.value.code == 404
        with urllib.request.urlopen(server.url + "/metrics") as resp:
            assert resp.status == 200
    finally:
        server.stop()


def test_a_failing_action_answers_500_without_details() -> None:
    def boom() -> object:
        raise TimeoutError("secret detail")

    server = MetricsServer(
        PromFamilies().registry, lambda: (True, "ok"), "127.0.0.1", 0, {"/x": boom}, token=TOKEN
    ).start()
    try:
        code, _, body = _post(server.url + "/x", TOKEN)
        assert code == 500 and b"secret detail" not in body
    finally:
        server.stop()


def test_actions_without_a_token_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="bearer token"):
        MetricsServer(
            PromFamilies().registry, lambda: (True, "ok"), "127.0.0.1", 0, {"/x": _Calls()}
        )


def test_refused_requests_are_logged_without_the_token(caplog: pytest.LogCaptureFixture) -> None:
    server = _server(_Calls())
    try:
        with caplog.at_level("WARNING", logger="exporters.http"):
            _post(server.url + "/drift/rebaseline", "guess-" + TOKEN)
            _post(server.url + "/drift/rebaseline", TOKEN)
        text = caplog.text
        assert "refused POST /drift/rebaseline" in text and "wrong credentials" in text
        assert "admin: POST /drift/rebaseline from 127.0.0.1" in text
        assert TOKEN not in text
    finally:
        server.stop()


def test_an_action_with_a_request_body_still_answers() -> None:
    calls = _Calls()
    server = _server(calls)
    try:
        req = urllib.request.Request(
            server.url + "/drift/rebaseline",
            data=b'{"reason": "accepted prompt v2"}',
            method="POST",
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert resp.status == 200 and calls.n == 1
    finally:
        server.stop()
