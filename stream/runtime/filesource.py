"""The offline twin of the stream: the same Pipeline over a JSONL file or stdin.

One output line per input line: a scorecard, `{"line": N, "error": ...}` for an
invalid line, or `{"line": N, "event_id": ..., "duplicate": true}`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from stream.runtime.judging import JudgeService
from stream.runtime.pipeline import Pipeline

__all__ = ["ScoreSummary", "open_input", "open_output", "score_stream"]


@dataclass
class ScoreSummary:
    lines: int = 0
    scored: int = 0
    invalid: int = 0
    duplicate: int = 0
    judged: int = 0
    failure_modes: Counter[str] = field(default_factory=Counter)

    def render(self) -> str:
        modes = ", ".join(f"{k}={v}" for k, v in sorted(self.failure_modes.items())) or "none"
        return (
            f"ragpulse score: {self.lines} lines, {self.scored} scored, {self.invalid} invalid, "
            f"{self.duplicate} duplicate, {self.judged} judged; failure modes: {modes}"
        )


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
        return
    with Path(path).open("rb") as fh:
        yield fh


@contextmanager
def open_output(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with Path(path).open("wb") as fh:
        yield fh


def score_stream(
    pipeline: Pipeline, src: IO[bytes], dst: IO[bytes], judging: JudgeService | None = None
) -> ScoreSummary:
    summary = ScoreSummary()
    for n, line in enumerate(src, start=1):
        raw = line.rstrip(b"\r\n")
        if not raw.strip():
            continue
        summary.lines += 1
        result = pipeline.process(raw)
        if result.outcome == "scored":
            summary.scored += 1
            card = result.scorecard or {}
            summary.failure_modes.update(card.get("failure_modes", []))
            if judging is not None and result.judge_event is not None:
                judged = judging.judge_now(
                    result.judge_event, result.sample_reason or "base", result.judge_repeat
                )
                update = judged.scorecard_update()
                card["metrics"], card["gates"] = update["metrics"], update["gates"]
                summary.judged += 1
            dst.write(result.scorecard_bytes() + b"\n")
            continue
        if result.outcome == "invalid":
            summary.invalid += 1
            out = {"line": n, "error": f"{result.reason}: {result.detail}"}
        else:
            summary.duplicate += 1
            out = {"line": n, "event_id": result.event_id, "duplicate": True}
        dst.write(json.dumps(out, ensure_ascii=False).encode() + b"\n")
    return summary
