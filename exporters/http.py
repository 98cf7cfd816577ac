"""The HTTP endpoint: `/metrics` (Prometheus text format), `/healthz`, `/readyz`, and the
state-changing POST actions (`/drift/rebaseline`) behind a bearer token.

Served from daemon threads, so a busy or stuck event loop never hides the metrics or the
liveness answer. GETs never need a token. Actions exist only when passed in (the sidecar
passes them when `server.admin.enabled`); then each POST needs
`Authorization: Bearer <token>`, compared in constant time, else 401 and nothing runs.
With `admin_port` the actions get a listener of their own on `admin_host` and the metrics
port answers 404 for them.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from exporters.http_guard import CONNECTION_DEADLINE_S, ClientErrors, GuardedHTTPServer

__all__ = ["Action", "MetricsServer", "Readiness"]

log = logging.getLogger("exporters.http")

#: returns (ready, reason)
Readiness = Callable[[], tuple[bool, str]]
#: POST actions: path -> callable returning a JSON-able result (runs on the HTTP thread)
Action = Callable[[], object]

_REJECT_LOG_EVERY_S = 60.0  # a flood of unauthorised POSTs must not flood the log
_SOCKET_TIMEOUT_S = 10.0


class MetricsServer:
    def __init__(
        self,
        registry: CollectorRegistry,
        readiness: Readiness,
        host: str = "0.0.0.0",
        port: int = 9108,
        actions: dict[str, Action] | None = None,
        *,
        token: str | None = None,
        admin_host: str = "127.0.0.1",
        admin_port: int | None = None,
        max_connections: int = 64,
        deadline_s: float = CONNECTION_DEADLINE_S,
    ) -> None:
        """`actions` need `token`; `admin_port` (0: any free port) serves them apart;
        `max_connections` per listener (one more is closed at once, and counted), each
        for `deadline_s` at most."""
        self._registry = registry
        self._readiness = readiness
        self._actions = dict(actions or {})
        if self._actions and not token:
            raise ValueError("POST actions need a bearer token")
        self._token = (token or "").encode()
        self._rejected = 0
        self._rejected_logged = 0.0
        self._lock = threading.Lock()
        self._max_connections = max_connections
        self._deadline_s = deadline_s
        self.client_errors = ClientErrors()
        self.client_errors.register(registry)
        separate = bool(self._actions) and admin_port is not None
        self._server = self._listen(host, port, metrics=True, actions=not separate)
        self._admin = self._listen(admin_host, admin_port or 0, False, True) if separate else None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return _url(self._server)

    @property
    def admin_url(self) -> str | None:
        """The separate admin listener (None: actions, if any, are on `url`)."""
        return _url(self._admin) if self._admin is not None else None

    def start(self) -> MetricsServer:
        for name, server in (("ragpulse-http", self._server), ("ragpulse-admin", self._admin)):
            if server is not None:
                threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
        return self

    def stop(self) -> None:
        for server in (self._server, self._admin):
            if server is not None:
                server.shutdown()
                server.server_close()

    def _authorized(self, header: str | None) -> bool:
        scheme, _, credentials = (header or "").strip().partition(" ")
        given = credentials.strip().encode("latin-1", "replace")  # headers arrive as latin-1
        # compare_digest on bytes: time does not depend on where the tokens differ
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self._token)

    def _rejected_request(self, path: str, client: str, why: str) -> None:
        with self._lock:
            self._rejected += 1
            now = time.monotonic()
            if now - self._rejected_logged < _REJECT_LOG_EVERY_S and self._rejected > 1:
                return
            self._rejected_logged, count = now, self._rejected
        log.warning(
            "admin: refused POST %s from %s (%s); %d refused so far", path, client, why, count
        )

    def _listen(self, host: str, port: int, metrics: bool, actions: bool) -> GuardedHTTPServer:
        handler = self._handler(metrics, actions)
        return GuardedHTTPServer(
            (host, port), handler, self.client_errors, self._max_connections, self._deadline_s
        )

    def _handler(self, metrics: bool, actions: bool) -> type[BaseHTTPRequestHandler]:
        """A handler serving the GET endpoints (`metrics`) and/or the POST actions."""
        server = self
        served = self._actions if actions else {}

        class Handler(BaseHTTPRequestHandler):
            timeout = _SOCKET_TIMEOUT_S  # a client that stalls cannot hold a thread forever

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if not metrics:
                    self._send(404, b"not found\n", "text/plain")
                elif path == "/metrics":
                    encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
                    self._send(200, encoder(server._registry), content_type)
                elif path == "/healthz":
                    self._send(200, b"ok\n", "text/plain")
                elif path == "/readyz":
                    ready, reason = server._readiness()
                    body = json.dumps({"ready": ready, "reason": reason}).encode() + b"\n"
                    self._send(200 if ready else 503, body, "application/json")
                else:
                    self._send(404, b"not found\n", "text/plain")

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                self._discard_body()  # closing on an unread body can reset the answer
                action = served.get(path)
                if action is None:
                    self._send(404, b"not found\n", "text/plain")
                    return
                header = self.headers.get("Authorization")
                if not server._authorized(header):
                    why = "no bearer token" if header is None else "wrong credentials"
                    server._rejected_request(path, self.client_address[0], why)
                    self._send(401, b"unauthorized\n", "text/plain", auth=True)
                    return
                log.warning("admin: POST %s from %s", path, self.client_address[0])
                try:
                    body = json.dumps(action()).encode() + b"\n"
                except Exception as exc:  # the action's own failure, never the token
                    log.error("admin: POST %s failed: %s", path, type(exc).__name__)
                    self._send(500, b'{"error": "action failed"}\n', "application/json")
                    return
                self._send(200, body, "application/json")

            def _discard_body(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    return
                if 0 < length <= 65536:
                    with contextlib.suppress(OSError):  # a stalled body: answer anyway
                        self.rfile.read(length)

            def _send(self, code: int, body: bytes, content_type: str, auth: bool = False) -> None:
                self.send_response(code)
                if auth:
                    self.send_header("WWW-Authenticate", 'Bearer realm="ragpulse"')
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # no access log: scrapes every 15 s would flood it

        return Handler


def _url(server: ThreadingHTTPServer) -> str:
    host = str(server.server_address[0])
    host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://{host}:{server.server_address[1]}"
