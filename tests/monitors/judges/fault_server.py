"""A real loopback HTTP server speaking POST /v1/chat/completions, driven by a script.

Each request takes the next scripted behaviour (or `default` when the script is empty):
`ok` (a completion with the given content and usage), `slow` (wait, then ok), `status`
(an error status, optionally with Retry-After), `truncated` / `schema_violating`
(ok with bad content), `drop` (close the connection with no response), `raw` (any
status, headers and body bytes) and `flood` (a body of `size` bytes streamed in chunks,
for the response-size cap; it stops when the client hangs up). The server
runs aiohttp on its own event loop in a thread, so the client under test talks to it
over real TCP; it records every request and the peak number of requests in flight.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

GOOD = {"score": 0.75, "justification": "supported by the context"}


@dataclass(frozen=True)
class Behaviour:
    kind: str  # ok | slow | status | drop
    content: str = json.dumps(GOOD)
    usage: tuple[int, int] = (100, 20)
    delay_s: float = 0.0
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    finish_reason: str = "stop"
    raw: bytes = b""
    size: int = 0
    declare_length: bool = False


def raw(body: bytes, code: int = 200, headers: dict[str, str] | None = None) -> Behaviour:
    """Exactly this body (no completion around it)."""
    return Behaviour("raw", status=code, raw=body, headers=dict(headers or {}))


def flood(
    size: int,
    chunk: bytes = b" " * 65536,
    declare_length: bool = False,
    headers: dict[str, str] | None = None,
    code: int = 200,
) -> Behaviour:
    """A 200 whose body is `chunk` repeated up to `size` bytes, streamed (chunked unless
    `declare_length`); the server stops writing when the client hangs up."""
    return Behaviour(
        "flood",
        status=code,
        raw=chunk,
        size=size,
        declare_length=declare_length,
        headers=dict(headers or {}),
    )


def ok(content: Any = GOOD, usage: tuple[int, int] = (100, 20)) -> Behaviour:
    text = content if isinstance(content, str) else json.dumps(content)
    return Behaviour("ok", content=text, usage=usage)


def slow(seconds: float, content: Any = GOOD) -> Behaviour:
    return Behaviour("slow", content=ok(content).content, delay_s=seconds)


def status(code: int, retry_after: str | None = None, body: str = "") -> Behaviour:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    error = {"error": {"message": body or f"scripted {code}", "type": "scripted", "code": code}}
    return Behaviour("status", status=code, headers=headers, body=json.dumps(error))


def truncated(usage: tuple[int, int] = (100, 20)) -> Behaviour:
    return Behaviour("ok", content='{"score": 0.7, "justif', usage=usage, finish_reason="length")


def schema_violating(usage: tuple[int, int] = (100, 20)) -> Behaviour:
    return Behaviour("ok", content=json.dumps({"score": "high", "why": 3}), usage=usage)


def drop() -> Behaviour:
    return Behaviour("drop")


class FaultServer:
    def __init__(self) -> None:
        self.flood_sent = 0  # bytes written by `flood` behaviours before the client hung up
        self.script: deque[Behaviour] = deque()
        self.default: Behaviour = ok()
        self.requests: list[dict[str, Any]] = []  # {"body", "headers", "query", "path", "at"}
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *behaviours: Behaviour) -> FaultServer:
        with self._lock:
            self.script.extend(behaviours)
        return self

    def start(self) -> FaultServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(
                {
                    "body": body,
                    "headers": dict(request.headers),
                    "query": dict(request.query),
                    "path": request.path,
                    "at": time.monotonic(),
                }
            )
            behaviour = self.script.popleft() if self.script else self.default
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._respond(request, body, behaviour)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _respond(
        self, request: web.Request, body: dict[str, Any], b: Behaviour
    ) -> web.StreamResponse:
        if b.kind == "drop":
            assert request.transport is not None
            request.transport.abort()  # no status line, no body: the peer sees a reset
            raise asyncio.CancelledError
        if b.kind == "slow":
            await asyncio.sleep(b.delay_s)
        if b.kind == "status":
            return web.Response(
                status=b.status, text=b.body, headers=b.headers, content_type="application/json"
            )
        if b.kind == "raw":
            headers = {"Content-Type": "application/json", **b.headers}
            return web.Response(status=b.status, body=b.raw, headers=headers)
        if b.kind == "flood":
            return await self._flood(request, b)
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fault"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": b.content},
                    "finish_reason": b.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": b.usage[0],
                "completion_tokens": b.usage[1],
                "total_tokens": sum(b.usage),
            },
        }
        return web.json_response(completion)

    async def _flood(self, request: web.Request, b: Behaviour) -> web.StreamResponse:
        resp = web.StreamResponse(
            status=b.status, headers={"Content-Type": "application/json", **b.headers}
        )
        if b.declare_length:
            resp.content_length = b.size
        await resp.prepare(request)
        sent = 0
        try:
            while sent < b.size:
                piece = b.raw[: b.size - sent]
                await resp.write(piece)  # waits while the client does not read
                sent += len(piece)
                self.flood_sent = sent
            await resp.write_eof()
        except (ConnectionError, RuntimeError):  # the client hung up: what a cap does
            pass
        return resp
