"""Findings A and B: a hostile judge cannot stall the process or fill its memory.

A real loopback HTTP server (tests/monitors/judges/fault_server.py) answers the
OpenAI-compatible judge with hostile replies: ~1 MB shapes that cost a backtracking regex
or a recursive parser dearly, and bodies far over the size cap (256 MiB plain, declared
or gzip-compressed). While the judge works, two tickers measure how long an event loop
waits for its 10 ms sleep: one on the judge's own loop, one on a loop in another thread
(what /healthz runs on). The figures are printed (`pytest -s`) for the report.

Before the fix: the open-fence reply of 30,000 spaces stalled both loops ~7 s per
attempt (`_FENCE` regex), a deeply nested reply escaped as RecursionError instead of a
JudgeError, a 1 MB number as ValueError, and a 256 MiB body was read whole (RSS +1 GiB).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from monitors.judges.base import JudgeError
from monitors.judges.breaker import CircuitBreaker
from monitors.judges.openai import OpenAIJudge
from monitors.judges.openai_wire import MAX_RESPONSE_BYTES, unfence
from tests.monitors.judges.fault_server import Behaviour, FaultServer, flood, ok, raw

MB = 1 << 20
MiB = 1 << 20
LAG_LIMIT_S = 0.25  # max event-loop lag allowed while the judge handles a hostile reply
RSS_LIMIT = 50 * MiB  # RSS growth allowed while the judge meets an oversized body


class Verdict(BaseModel):
    score: float = Field(ge=0, le=1)
    justification: str


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


@dataclass
class Lag:
    """Max gap beyond a 10 ms sleep, on the judge's loop and on a loop in another thread."""

    own_s: float = 0.0
    other_s: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    async def tick_own(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            await asyncio.sleep(0.01)
            self.own_s = max(self.own_s, time.perf_counter() - t0 - 0.01)

    def tick_other(self) -> None:
        async def go() -> None:
            while not self._stop.is_set():
                t0 = time.perf_counter()
                await asyncio.sleep(0.01)
                self.other_s = max(self.other_s, time.perf_counter() - t0 - 0.01)

        asyncio.run(go())


@dataclass
class Outcome:
    result: Any  # a Verdict or the JudgeError
    elapsed_s: float
    lag: Lag
    rss_growth: int


def _rss_peak() -> int:
    """The process' peak RSS since the last reset (VmHWM), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _reset_rss_peak() -> int:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS (Linux >= 4.0)
    return _rss_peak()


def run_judge(server: FaultServer, *behaviours: Behaviour, **options: Any) -> Outcome:
    """One judge call against `behaviours`, with both tickers running, and the RSS peak."""
    server.push(*behaviours)
    options.setdefault("model", "judge-model")
    options.setdefault("timeout_s", 20)
    lag = Lag()
    other = threading.Thread(target=lag.tick_other, daemon=True)
    other.start()

    async def go() -> Any:
        judge = OpenAIJudge(base_url=server.base_url, **options)
        ticker = asyncio.create_task(lag.tick_own())
        await asyncio.sleep(0.05)
        try:
            reply = await judge.complete("You grade answers.", "Supported?", Verdict, "v1")
            return reply.parsed
        except JudgeError as err:
            return err
        finally:
            await asyncio.sleep(0.03)
            lag._stop.set()
            await ticker
            await judge.aclose()

    before = _reset_rss_peak()
    t0 = time.perf_counter()
    result = asyncio.run(go())
    elapsed = time.perf_counter() - t0
    growth = _rss_peak() - before
    other.join(5)
    return Outcome(result, elapsed, lag, growth)


def _report(name: str, out: Outcome) -> None:
    what = out.result.reason if isinstance(out.result, JudgeError) else "parsed"
    print(
        f"\n[{name}] {what}: {out.elapsed_s * 1000:.0f} ms, loop lag {out.lag.own_s * 1000:.1f}"
        f" ms (own) / {out.lag.other_s * 1000:.1f} ms (other thread), "
        f"RSS peak +{out.rss_growth / MiB:.1f} MiB"
    )


def completion(content: str, usage: Any = None) -> bytes:
    body = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": usage if usage is not None else {"prompt_tokens": 1, "completion_tokens": 1},
    }
    return json.dumps(body).encode()


# name -> (server behaviour, expected reason or "parsed")
HOSTILE: dict[str, tuple[Callable[[], Behaviour], str]] = {
    # the reviewer's reproduction: 9.2 s per attempt with the old fence regex
    # (the reply is stripped first: the spaces must be followed by something)
    "open_fence_30k": (lambda: ok("```json\n{" + " " * 30_000 + "}"), "invalid_json"),
    "open_fence_1mb": (lambda: ok("```json\n{" + " " * MB + "}"), "invalid_json"),
    "open_fence_tabs_newlines_1mb": (
        lambda: ok("```\n" + "\t\n" * (MB // 2) + "x"),
        "invalid_json",
    ),
    "closed_fence_1mb": (
        lambda: ok("```json\n" + " " * (MB // 2) + "x" + " " * (MB // 2) + "```"),
        "invalid_json",
    ),
    "many_fences_1mb": (lambda: ok("```" * (MB // 3)), "invalid_json"),
    "fence_per_line_1mb": (lambda: ok("```json\n" * (MB // 8)), "invalid_json"),
    "deep_nesting_open_1mb": (lambda: ok("[" * MB), "invalid_json"),
    "deep_nesting_closed_1mb": (lambda: ok("[" * (MB // 2) + "]" * (MB // 2)), "invalid_json"),
    "deep_objects_1mb": (lambda: ok('{"a":' * (MB // 5)), "invalid_json"),
    "long_number_1mb": (lambda: ok("1" * MB), "invalid_json"),
    "many_keys_1mb": (
        lambda: ok("{" + ",".join(f'"k{i}":0' for i in range(MB // 10)) + "}"),
        "schema_violation",
    ),
    "string_1mb": (lambda: ok({"score": 0.5, "justification": "x" * MB}), "parsed"),
    "body_deep_nesting_1mb": (lambda: raw(b"[" * MB), "server_error"),
    "body_garbage_1mb": (lambda: raw(b"{" * MB), "server_error"),
    "body_long_number_1mb": (lambda: raw(b"1" * MB), "server_error"),
    "body_not_utf8_1mb": (lambda: raw(b"\xff\xfe" * (MB // 2)), "server_error"),
    "choices_not_objects": (lambda: raw(b'{"choices": ["x", 1, null]}'), "invalid_json"),
    "message_not_object": (lambda: raw(b'{"choices": [{"message": [1]}]}'), "invalid_json"),
    "hostile_usage": (
        lambda: raw(
            completion(
                json.dumps({"score": 0.5, "justification": "ok"}),
                usage={"prompt_tokens": "9" * 5000, "completion_tokens": 1e308},
            )
        ),
        "parsed",
    ),
    "usage_not_object": (
        lambda: raw(completion(json.dumps({"score": 0.5, "justification": "ok"}), usage=[1])),
        "parsed",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_replies_cost_milliseconds_and_never_stall_the_loop(
    server: FaultServer, name: str
) -> None:
    make, expected = HOSTILE[name]
    server.default = make()  # every attempt (max_attempts 3) gets the hostile reply
    out = run_judge(server)
    _report(name, out)
    if expected == "parsed":
        assert isinstance(out.result, Verdict), out.result
    else:
        assert isinstance(out.result, JudgeError), out.result
        assert out.result.reason == expected, out.result
        assert out.result.call is not None and out.result.call.attempts == 3
        assert len(out.result.detail) <= 300
    assert out.lag.own_s < LAG_LIMIT_S, f"judge's loop stalled {out.lag.own_s:.3f} s"
    assert out.lag.other_s < LAG_LIMIT_S, f"other thread's loop stalled {out.lag.other_s:.3f} s"
    assert out.elapsed_s < 3.0


def test_unfence_is_linear() -> None:
    texts = ("```json\n{" + " " * MB + "}", "```" * (MB // 3), "`" * MB, "```json" + "\n" * MB)
    for text in texts:
        t0 = time.perf_counter()
        unfence(text)
        assert time.perf_counter() - t0 < 0.05
    assert unfence('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert unfence('```\n{"a": 1}```') == '{"a": 1}'
    assert unfence('```json{"a": 1}```') == '{"a": 1}'
    assert unfence("`````") == "`````" and unfence("``````") == ""
    assert unfence('{"a": "```"}') == '{"a": "```"}'


# --- finding B: the size cap -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "behaviour"),
    [
        ("flood_256mib_chunked", lambda: flood(256 * MiB)),
        ("flood_256mib_declared", lambda: flood(256 * MiB, declare_length=True)),
        ("flood_256mib_status_500", lambda: flood(256 * MiB, code=500)),
    ],
)
def test_a_256_mib_body_is_cut_at_the_cap(
    server: FaultServer, name: str, behaviour: Callable[[], Behaviour]
) -> None:
    out = run_judge(server, behaviour())
    _report(name, out)
    assert isinstance(out.result, JudgeError) and out.result.reason == "response_too_large"
    assert "max_response_bytes=4194304" in out.result.detail
    assert out.result.call is not None and out.result.call.attempts == 1  # not retried
    assert out.rss_growth < RSS_LIMIT, f"RSS grew {out.rss_growth / MiB:.1f} MiB"
    assert server.flood_sent < 64 * MiB  # the client hung up instead of draining it
    assert out.lag.own_s < LAG_LIMIT_S and out.elapsed_s < 10


def _gzip_bomb(size: int) -> bytes:
    """`size` zero bytes, gzip-compressed (~1/1000 of it)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MiB)
    parts = [z.compress(zeros) for _ in range(size // MiB)]
    return b"".join([*parts, z.flush()])


def test_a_gzip_bomb_is_inflated_only_up_to_the_cap(server: FaultServer) -> None:
    bomb = _gzip_bomb(256 * MiB)
    assert len(bomb) < MiB
    out = run_judge(server, raw(bomb, headers={"Content-Encoding": "gzip"}))
    _report("gzip_bomb_256mib", out)
    assert isinstance(out.result, JudgeError) and out.result.reason == "response_too_large"
    assert out.rss_growth < RSS_LIMIT, f"RSS grew {out.rss_growth / MiB:.1f} MiB"


def test_a_gzip_reply_under_the_cap_is_read(server: FaultServer) -> None:
    body = gzip.compress(completion(json.dumps({"score": 0.5, "justification": "fine"})))
    out = run_judge(server, raw(body, headers={"Content-Encoding": "gzip"}))
    assert isinstance(out.result, Verdict) and out.result.score == 0.5
    assert server.requests[0]["headers"]["Accept-Encoding"] == "identity"


def test_an_unknown_content_encoding_is_refused(server: FaultServer) -> None:
    out = run_judge(server, raw(b"\x00" * 100, headers={"Content-Encoding": "br"}), max_attempts=1)
    assert isinstance(out.result, JudgeError) and out.result.reason == "server_error"


def test_the_cap_is_an_option(server: FaultServer) -> None:
    good = {"score": 0.5, "justification": "x" * 30_000}
    out = run_judge(server, ok(good), max_response_bytes=64 * 1024)
    assert isinstance(out.result, Verdict)
    good["justification"] = "x" * 70_000
    out = run_judge(server, ok(good), max_response_bytes=64 * 1024)
    assert isinstance(out.result, JudgeError) and out.result.reason == "response_too_large"
    assert "max_response_bytes=65536" in out.result.detail


def test_an_error_body_over_the_cap_is_not_read_whole(server: FaultServer) -> None:
    server.push(raw(b'{"error": "' + b"x" * (8 * MiB) + b'"}', code=400))
    out = run_judge(server)
    assert isinstance(out.result, JudgeError) and out.result.reason == "response_too_large"
    server.push(raw(b'{"error": "' + b"y" * 100_000 + b'"}', code=400))
    out = run_judge(server)
    assert isinstance(out.result, JudgeError) and out.result.reason == "client_error"
    assert len(out.result.detail) <= 300


def test_oversized_replies_open_the_breaker(server: FaultServer) -> None:
    breaker = CircuitBreaker(failure_threshold=2, reset_after_s=60)
    server.default = flood(8 * MiB)

    async def go() -> list[str]:
        judge = OpenAIJudge(base_url=server.base_url, model="m", breaker=breaker)
        reasons = []
        for _ in range(3):
            try:
                await judge.complete("s", "u", Verdict, "v1")
            except JudgeError as err:
                reasons.append(err.reason)
        await judge.aclose()
        return reasons

    assert asyncio.run(go()) == ["response_too_large", "response_too_large", "circuit_open"]


@pytest.mark.parametrize("bad", [0, 1023, 65 * MiB, "4MiB", 4.0, True])
def test_max_response_bytes_is_validated(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_response_bytes"):
        OpenAIJudge(model="m", max_response_bytes=bad)
    assert OpenAIJudge(model="m").max_response_bytes == MAX_RESPONSE_BYTES == 4 * MiB
