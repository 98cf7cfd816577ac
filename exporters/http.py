"""One HTTP port: `/metrics` (Prometheus text format), `/healthz`, `/readyz`.

Served from a daemon thread, so a busy or stuck event loop never hides the
metrics or the liveness answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

__all__ = ["Action", "MetricsServer", "Readiness"]

#: returns (ready, reason)
Readiness = Callable[[], tuple[bool, str]]
#: POST actions: path -> callable returning a JSON-able result (runs on the HTTP thread)
Action = Callable[[], object]


class MetricsServer:
    def __init__(
        self,
        registry: CollectorRegistry,
        readiness: Readiness,
        host: str = "0.0.0.0",
        port: int = 9108,
        actions: dict[str, Action] | None = None,
    ) -> None:
        self._registry = registry
        self._readiness = readiness
        self._actions = dict(actions or {})
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._server.server_address[0])
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{host}:{self.port}"

    def start(self) -> MetricsServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="ragpulse-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
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
                action = server._actions.get(self.path.split("?", 1)[0])
                if action is None:
                    self._send(404, b"not found\n", "text/plain")
                    return
                body = json.dumps(action()).encode() + b"\n"
                self._send(200, body, "application/json")

            def _send(self, code: int, body: bytes, content_type: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # no access log: scrapes every 15 s would flood it

        return Handler
