"""Judge canaries: a fixed set of turns with known verdicts, re-judged on a schedule.

A canary set is a JSONL file, one turn per line::

    {"id": "grounded", "event": {<an event, the same schema as the input topic>},
     "expected": {"faithfulness": 1.0, "answer_relevance": 1.0}}

`expected` holds the true verdict of each metric output the turn was written to test
(1 = fine, 0 = the failure). The file is untrusted input: it is size-capped, each event
goes through the input topic's parser (the same caps), and every expected value must be
a number in [0, 1]. The bundled set (``canaries_default.jsonl``) has a few turns per
default metric.

:class:`CanaryMonitor` turns each judged *round* (every canary turn once) into one sample
per metric: the mean over the round's canaries of ``score - expected``. A judge that
keeps behaving gives the same round after round (up to its sampling noise); a judge that
changed moves the mean. Each metric's samples feed drift detectors from the drift
registry (``{type: ..., ...}``) through the same raise / hold / clear policy as the
service's drift alarms (:class:`~monitors.drift.alarms.MonitoredStream`). It also reports
the round's agreement: the share of canary verdicts on the same side of the metric's
gate floor as the expected verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from monitors.drift.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey
from monitors.drift.base import create_drift_detector
from stream.contract.errors import RagpulseError
from stream.contract.events import Event, InvalidEvent, parse_event

__all__ = [
    "MAX_CANARIES",
    "MAX_FILE_BYTES",
    "CanaryError",
    "CanaryMonitor",
    "CanaryRound",
    "CanarySet",
    "CanaryTurn",
    "load_canaries",
]

MAX_FILE_BYTES = 1 << 20  # a canary file larger than this is refused
MAX_CANARIES = 100  # turns per set: a round judges every one
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


class CanaryError(RagpulseError, ValueError):
    """A canary file that cannot be used (the message names the file and line)."""


@dataclass(frozen=True)
class CanaryTurn:
    id: str
    event: Event
    expected: dict[str, float]


@dataclass(frozen=True)
class CanarySet:
    name: str  # the `canary_set` label: the file's stem, lower case
    turns: tuple[CanaryTurn, ...]
    fingerprint: str  # sha256 of the file's bytes, first 16 hex digits

    def metrics(self) -> list[str]:
        return sorted({m for t in self.turns for m in t.expected})


def _label(stem: str) -> str:
    name = stem.lower().replace(".", "_")[:40]
    return "".join(c if c in _NAME_CHARS else "_" for c in name) or "canaries"


def load_canaries(path: str | Path | None = None) -> CanarySet:
    """The canary set in `path` (JSONL), or the bundled one; CanaryError naming the line."""
    if path is None:
        data = (files("monitors.judges") / "canaries_default.jsonl").read_bytes()
        name = "default"
    else:
        p = Path(path)
        try:
            with p.open("rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise CanaryError(f"canary file {p}: {exc.strerror or exc}") from None
        if len(data) > MAX_FILE_BYTES:
            raise CanaryError(f"canary file {p}: larger than {MAX_FILE_BYTES} bytes")
        name = _label(p.stem)
    where = str(path) if path is not None else "bundled canaries"
    turns: list[CanaryTurn] = []
    seen: set[str] = set()
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        turn = _turn(line, f"{where}:{number}")
        if turn.id in seen:
            raise CanaryError(f"{where}:{number}: canary id {turn.id!r} appears twice")
        seen.add(turn.id)
        turns.append(turn)
        if len(turns) > MAX_CANARIES:
            raise CanaryError(f"{where}: more than {MAX_CANARIES} canary turns")
    if not turns:
        raise CanaryError(f"{where}: no canary turns")
    return CanarySet(name, tuple(turns), hashlib.sha256(data).hexdigest()[:16])


def _turn(line: bytes, where: str) -> CanaryTurn:
    try:
        doc = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CanaryError(f"{where}: not JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict) or set(doc) - {"id", "event", "expected"}:
        raise CanaryError(f"{where}: a canary is {{id, event, expected}}")
    cid, event, expected = doc.get("id"), doc.get("event"), doc.get("expected")
    if not isinstance(cid, str) or not 0 < len(cid) <= 64:
        raise CanaryError(f"{where}: id must be a string of 1-64 characters")
    if not isinstance(event, dict):
        raise CanaryError(f"{where}: event must be an object")
    try:
        parsed = parse_event(json.dumps(event).encode())
    except InvalidEvent as exc:
        raise CanaryError(f"{where}: event: {exc.reason}: {exc.detail}") from None
    if not isinstance(expected, dict) or not expected:
        raise CanaryError(f"{where}: expected must be a non-empty {{metric: verdict}} object")
    verdicts: dict[str, float] = {}
    for metric, value in expected.items():
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not 0.0 <= float(value) <= 1.0 or len(metric) > 64:
            raise CanaryError(f"{where}: expected.{metric} must be a number in [0, 1]")
        verdicts[metric] = float(value)
    return CanaryTurn(cid, parsed, verdicts)


@dataclass
class CanaryRound:
    """One judged round, per metric: mean score, mean deviation, agreement, errors."""

    scores: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (got, want)
    errors: dict[str, int] = field(default_factory=dict)

    def add(self, metric: str, expected: float, score: float | None) -> None:
        if score is None or not math.isfinite(score):
            self.errors[metric] = self.errors.get(metric, 0) + 1
        else:
            self.scores.setdefault(metric, []).append((score, expected))

    def mean_score(self, metric: str) -> float | None:
        pairs = self.scores.get(metric)
        return sum(s for s, _ in pairs) / len(pairs) if pairs else None

    def deviation(self, metric: str) -> float | None:
        pairs = self.scores.get(metric)
        return sum(s - e for s, e in pairs) / len(pairs) if pairs else None

    def verdicts(self, metric: str, floor: float) -> tuple[int, int]:
        """(agreeing, disagreeing) verdicts: both on the same side of `floor`, or not."""
        pairs = self.scores.get(metric, [])
        agree = sum((s >= floor) == (e >= floor) for s, e in pairs)
        return agree, len(pairs) - agree


class CanaryMonitor:
    """Drift detectors on each metric's round deviations (see the module docstring)."""

    def __init__(
        self,
        judge: str,
        detectors: Sequence[Mapping[str, Any]],
        policy: AlarmPolicy,
        floor: Callable[[str], float],
    ) -> None:
        for spec in detectors:  # fail at start, naming the bad option
            create_drift_detector(dict(spec))
        self.judge = judge
        self.specs = [dict(s) for s in detectors]
        self.policy = policy
        self.floor = floor
        self.streams: dict[tuple[str, str], MonitoredStream] = {}

    def _stream(self, metric: str, spec: dict[str, Any]) -> MonitoredStream:
        key = (metric, str(spec["type"]))
        stream = self.streams.get(key)
        if stream is None:
            sk = StreamKey(metric, str(spec["type"]), f"judge:{self.judge}")
            stream = MonitoredStream(sk, create_drift_detector(dict(spec)), self.policy)
            self.streams[key] = stream
        return stream

    def observe(self, round_: CanaryRound, now: float) -> list[AlarmEvent]:
        """Feed one round; the alarm transitions it caused."""
        events: list[AlarmEvent] = []
        for metric in sorted(round_.scores):
            value = round_.deviation(metric)
            if value is None:
                continue
            for spec in self.specs:
                event = self._stream(metric, spec).update(value, now)
                if event is not None:
                    events.append(event)
        return events

    def active(self, metric: str) -> bool:
        return any(s.active for (m, _), s in self.streams.items() if m == metric)
