"""The metrics port's HTTP server, hardened against its clients (docs/security.md).

`http.server.ThreadingHTTPServer` starts one thread per connection without a bound and
prints the traceback of every client that hangs up mid-answer straight to stderr (500
slow clients printed 377 `BrokenPipeError` tracebacks, past the log throttling).
:class:`GuardedHTTPServer` instead:

* holds at most `max_connections` connections at once; one more is closed at once,
  without a thread, and counted (`over_capacity`);
* gives each connection `deadline_s` in all (30 s; the handler's socket timeout bounds
  one read only, so a client trickling a byte every few seconds could otherwise hold its
  slot for good): past it the socket is shut and the connection counted as `timeout`;
* counts client errors in ``ragpulse_http_client_errors_total{reason}`` (`disconnected`,
  `timeout`, `over_capacity`, `other`) and logs at most one line per minute for them,
  without a traceback (the traceback of an `other` error goes to DEBUG).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

__all__ = ["CLIENT_ERROR_REASONS", "CONNECTION_DEADLINE_S", "ClientErrors", "GuardedHTTPServer"]

log = logging.getLogger("exporters.http")

CLIENT_ERROR_REASONS = ("disconnected", "timeout", "over_capacity", "other")
_LOG_EVERY_S = 60.0
#: a whole connection, request and answer: Prometheus' scrape timeout is 10 s by default
CONNECTION_DEADLINE_S = 30.0


class ClientErrors(Collector):
    """Counts per reason; one throttled log line, shared by the listeners of one server."""

    def __init__(self) -> None:
        self._counts = dict.fromkeys(CLIENT_ERROR_REASONS, 0)
        self._lock = threading.Lock()
        self._logged_at = -_LOG_EVERY_S
        self._since_log = 0

    def register(self, registry: CollectorRegistry) -> None:
        with contextlib.suppress(ValueError):  # a second server on the same registry
            registry.register(self)

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "ragpulse_http_client_errors",
            "Connections to the HTTP endpoint that ended in a client error, by reason",
            labels=["reason"],
        )
        with self._lock:
            counts = dict(self._counts)
        for reason, n in counts.items():
            family.add_metric([reason], n)
        yield family

    def count(self, reason: str, exc: BaseException | None = None) -> None:
        with self._lock:
            self._counts[reason] += 1
            self._since_log += 1
            now = time.monotonic()
            if now - self._logged_at < _LOG_EVERY_S:
                return
            self._logged_at, n, self._since_log = now, self._since_log, 0
        what = f"{type(exc).__name__}" if exc is not None else reason
        log.warning(
            "http: %d client connection(s) ended in an error in the last minute (latest: %s, "
            "%s); counted in ragpulse_http_client_errors_total",
            n,
            reason,
            what,
        )


def _reason(exc: BaseException | None) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionError | EOFError):  # BrokenPipe, ConnectionReset, …
        return "disconnected"
    return "other"


class GuardedHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer with a connection cap and quiet, counted client errors."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        errors: ClientErrors,
        max_connections: int,
        deadline_s: float = CONNECTION_DEADLINE_S,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        if deadline_s <= 0:
            raise ValueError("deadline_s must be > 0")
        self.errors = errors
        self.deadline_s = deadline_s
        self._open: dict[int, tuple[float, socket.socket]] = {}
        self._open_lock = threading.Lock()
        self._reaper: threading.Thread | None = None
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.errors.count("over_capacity")
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)  # starts the thread
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open[id(request)] = (time.monotonic() + self.deadline_s, request)
            if self._reaper is None:
                self._reaper = threading.Thread(
                    target=self._reap, name="http-deadline", daemon=True
                )
                self._reaper.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.pop(id(request), None)
            self._slots.release()

    def _reap(self) -> None:
        """One thread for all connections: shut those past their deadline (the handler's
        read or write then fails and its thread ends), count each once as `timeout`."""
        tick = min(1.0, self.deadline_s / 4)
        while not self._closed.wait(tick):
            now = time.monotonic()
            with self._open_lock:
                overdue = [(k, r) for k, (due, r) in self._open.items() if due <= now]
                for key, _ in overdue:
                    del self._open[key]
            for _, request in overdue:
                with contextlib.suppress(OSError):
                    request.shutdown(socket.SHUT_RDWR)
                self.errors.count("timeout")

    def server_close(self) -> None:
        self._closed.set()
        super().server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        reason = _reason(exc)
        self.errors.count(reason, exc)
        if reason == "other":
            log.debug("http: handler error", exc_info=exc)
