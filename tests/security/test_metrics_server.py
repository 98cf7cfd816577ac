"""Finding 7 (second half): clients of the metrics port cannot flood stderr or start
threads without bound. A real loopback MetricsServer, real sockets."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
import urllib.request

import pytest
from prometheus_client import Gauge

from exporters import MetricsServer, PromFamilies
from tests.conftest import sample, scrape


def _big_registry() -> PromFamilies:
    """~0.5 MB of /metrics: an answer no socket buffer holds, so a client that resets the
    connection makes the server's write fail mid-answer."""
    metrics = PromFamilies()
    filler = Gauge("filler", "padding", ["k"], registry=metrics.registry)
    for i in range(6_000):
        filler.labels(f"value-{i:06d}-" + "x" * 60).set(i)
    return metrics


def _rude_client(url_port: int) -> None:
    """GET /metrics, then reset the connection without reading the answer."""
    with socket.create_connection(("127.0.0.1", url_port), timeout=60) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.recv(1024)  # the answer has started
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_clients_that_hang_up_are_counted_not_printed(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    metrics = _big_registry()
    server = MetricsServer(metrics.registry, lambda: (True, "ok"), "127.0.0.1", 0).start()
    try:
        with caplog.at_level("WARNING", logger="exporters.http"):
            threads = [
                threading.Thread(target=_rude_client, args=(server.port,)) for _ in range(30)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                got = sample(
                    scrape(server.url + "/metrics"),
                    "ragpulse_http_client_errors_total",
                    reason="disconnected",
                )
                if got >= 3:
                    break
                time.sleep(0.2)
        assert got >= 3  # the hang-ups really broke the server's writes
        err = capfd.readouterr().err
        assert "Traceback" not in err and "BrokenPipeError" not in err
        lines = [r for r in caplog.records if "client connection" in r.getMessage()]
        assert len(lines) == 1  # one throttled line for the whole burst
        assert "Traceback" not in caplog.text
    finally:
        server.stop()


def test_connections_beyond_the_cap_are_closed_at_once() -> None:
    metrics = PromFamilies()
    server = MetricsServer(
        metrics.registry, lambda: (True, "ok"), "127.0.0.1", 0, max_connections=4
    ).start()
    idle: list[socket.socket] = []
    try:
        before = threading.active_count()
        for _ in range(4):  # connected, never send a request: each holds a handler thread
            idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        time.sleep(0.3)
        extra = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(20)]
        for sock in extra:  # closed by the server without an answer, without a thread
            sock.settimeout(5)
            assert sock.recv(1) == b""
            sock.close()
        assert threading.active_count() <= before + 5  # 4 handlers + the deadline reaper
        for sock in idle:
            sock.close()
        time.sleep(0.3)
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as resp:
            assert resp.status == 200  # slots come back once the idle clients go
        m = scrape(server.url + "/metrics")
        assert sample(m, "ragpulse_http_client_errors_total", reason="over_capacity") == 20
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def test_a_client_trickling_bytes_loses_its_slot_at_the_deadline() -> None:
    # slowloris: every read arrives before the 10 s socket timeout, so only a deadline for
    # the whole connection frees the slot; with all slots held, /healthz would go dark
    metrics = PromFamilies()
    server = MetricsServer(
        metrics.registry, lambda: (True, "ok"), "127.0.0.1", 0, max_connections=4, deadline_s=2.0
    ).start()
    slow = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(4)]
    try:
        start = time.monotonic()
        closed = 0
        while closed < 4 and time.monotonic() - start < 8:
            for sock in slow:
                with contextlib.suppress(OSError):
                    sock.sendall(b"G")  # one byte every 0.5 s: never idle long enough
            time.sleep(0.5)
            closed = 0
            for sock in slow:
                sock.setblocking(False)
                try:
                    closed += sock.recv(1) == b""
                except BlockingIOError:
                    pass
                except OSError:
                    closed += 1
                finally:
                    sock.setblocking(True)
        took = time.monotonic() - start
        assert closed == 4 and took < 6, (closed, took)
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as resp:
            assert resp.status == 200
        m = scrape(server.url + "/metrics")
        assert sample(m, "ragpulse_http_client_errors_total", reason="timeout") >= 4
    finally:
        for sock in slow:
            sock.close()
        server.stop()
