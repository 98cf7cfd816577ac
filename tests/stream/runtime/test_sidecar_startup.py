"""Start-up without a broker: alive but not ready, retrying with backoff, ready once it appears."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from stream.demo import EmbeddedBroker, free_port
from tests.conftest import SidecarProcess, SidecarStartError, Topics

pytestmark = pytest.mark.broker


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait_alive(url: str, timeout: float = 60.0) -> None:
    """Start-up (imports) can take 10+ s of wall time on a loaded 2-core machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if _get(url + "/healthz")[0] == 200:
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise AssertionError(f"/healthz did not answer within {timeout}s")


def test_waits_for_the_broker_then_becomes_ready(tmp_path: Path) -> None:
    port = free_port()
    sc = SidecarProcess(f"127.0.0.1:{port}", Topics.unique())
    with pytest.raises(SidecarStartError, match="not ready"):
        sc.start(tmp_path, ready_timeout=4)  # no broker: never ready ...
    try:
        _wait_alive(sc.url)
        assert sc.proc is not None and sc.proc.poll() is None  # ... but alive, not crashed
        code, body = _get(sc.url + "/readyz")
        assert code == 503 and json.loads(body)["ready"] is False
        with EmbeddedBroker(port=port):  # the broker appears on the configured address
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline and _get(sc.url + "/readyz")[0] != 200:
                time.sleep(0.5)
            assert _get(sc.url + "/readyz")[0] == 200, sc.output()[-2000:]
            assert sc.terminate() == 0
        warnings = [line for line in sc.output().splitlines() if "unreachable" in line]
        assert 1 <= len(warnings) <= 12, warnings  # bounded, not a flood
    finally:
        sc.kill()


def test_sigterm_while_waiting_for_the_broker_exits_0(tmp_path: Path) -> None:
    sc = SidecarProcess(f"127.0.0.1:{free_port()}", Topics.unique())
    with pytest.raises(SidecarStartError, match="not ready"):
        sc.start(tmp_path, ready_timeout=3)
    try:
        _wait_alive(sc.url)  # signal handlers are installed by now
        started = time.monotonic()
        assert sc.terminate(timeout=15) == 0
        assert time.monotonic() - started < 10
    finally:
        sc.kill()
