"""The shared scan (detectors/scan.py): the pipeline's one-pass path says exactly what
each detector says on its own (which test_frozen_verdicts.py holds), plugins that
declare patterns or nothing, and hostile text."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

import pytest

from detectors import Detection, PatternDetector, PatternSpec, Scan, Scanner, adapt
from detectors.base import register_detector
from stream.contract.events import Event, EventLimits, InvalidEvent, parse_event
from stream.demo import generate
from stream.runtime.components import build_detectors
from stream.runtime.settings import Settings


def _events(n: int = 1500) -> list[Event]:
    out: list[Event] = []
    for g in generate(n, seed=7):
        with contextlib.suppress(InvalidEvent):
            out.append(parse_event(g.raw))
    return out


def _shared(dets: list, scanner: Scanner, event: Event) -> list[Detection]:
    scan = scanner.scan()
    return [d for det in dets for d in scanner.run(det, event, scan)]


def test_shared_scan_equals_each_detector_alone() -> None:
    dets = build_detectors(Settings())
    scanner = Scanner(dets)
    assert {d.name for d in scanner.detectors} >= {"policy", "pii", "identifiers", "refusal"}
    for event in _events():
        alone = [d for det in dets for d in det(event)]
        assert _shared(dets, scanner, event) == alone, event.event_id


@pytest.mark.parametrize(
    "unit",
    [
        "You should buy TSLA. I can't help with that. ERR_CONN_4021 v1.2.3 x@y.co ",
        "4242 4242 4242 4242 415-555-0132 DE89 3704 0044 0532 0130 00 ",
        "I'm sorry to hear that I can't stress enough as of my I don't have ",
        "Put a third of your savings into ",
        "/etc/a/b `kubectl get pods` KB-00-5512 0x80070005 ",
    ],
)
def test_shared_scan_on_100kb_hostile_text(unit: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    data = {"event_id": "h", "query": unit, "response": text}
    data["labels"] = {"expected_behavior": "answer"}  # type: ignore[assignment]
    event = Event.model_validate(data, context={"limits": EventLimits(max_text_chars=200_000)})
    dets = build_detectors(Settings())
    scanner = Scanner(dets)
    started = time.process_time()
    shared = _shared(dets, scanner, event)
    assert time.process_time() - started < 2.0  # linear: well under a second on CI
    assert shared == [d for det in dets for d in det(event)]


class _Plugin(PatternDetector):
    name = "plugin_scan_test"
    patterns: Sequence[PatternSpec] = (
        PatternSpec("hello", r"\bhello\b"),
        PatternSpec("TICKET", r"\bT-\d+\b", fields=("response", "query"), case_sensitive=True),
        PatternSpec("big", r"(?:alpha|beta) (?:gamma|delta)\b", prefilter=True),
    )

    @property
    def categories(self) -> tuple[str, ...]:
        return ("hit",)

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        out: list[Detection] = []
        for field, text in (("response", event.response), ("query", event.query)):
            for pid in scan.matching(self, field, text):  # type: ignore[arg-type]
                for start, end in scan.spans(self, pid, text, 10):
                    out.append(Detection(self.name, "hit", f"{field}:{pid}", (start, end)))
        return out


@register_detector("plain_scan_test")
class _Plain:
    name = "plain_scan_test"
    categories = ("x",)

    def __call__(self, event: Event) -> list[Detection]:
        return [Detection(self.name, "x", "called")]


def test_plugin_declares_patterns_and_receives_matches() -> None:
    plugin = _Plugin()
    with pytest.warns(DeprecationWarning, match="deprecated __call__"):
        plain = adapt("plain_scan_test", _Plain())  # the old shape, behind the one contract
    with pytest.raises(TypeError, match=r"not a detectors\.Detector"):
        Scanner([_Plain()])  # type: ignore[list-item]
    event = Event(event_id="p", query="see t-1 and T-2", response="HELLO, T-7 Beta Delta t-8")
    scanner = Scanner([plugin, plain])
    got = _shared([plugin, plain], scanner, event)
    assert [d.evidence for d in got] == [
        "response:hello",
        "response:TICKET",
        "response:big",
        "query:TICKET",
        "called",
    ]
    assert got[1].span == (7, 10) and got[2].span == (11, 21)
    assert got[:-1] == plugin(event)  # alone: its own scanner, the same answers
    assert scanner.run(plain, event, scanner.scan()) == plain(event)


def test_duplicate_pattern_ids_are_rejected() -> None:
    class Dup(_Plugin):
        patterns = (PatternSpec("a", "x"), PatternSpec("a", "y"))

    with pytest.raises(ValueError, match="duplicate pattern id"):
        Scanner([Dup()])


def test_invalid_pattern_names_it() -> None:
    class Bad(_Plugin):
        patterns = (PatternSpec("bad", "(unclosed"),)

    with pytest.raises(ValueError, match="bad"):
        Scanner([Bad()])


def test_scan_reuses_the_programs_a_detector_holds() -> None:
    """refusal compiles its patterns for its scope sets: the shared scan uses those
    programs (same regex, same case sensitivity) instead of compiling each again."""
    refusal = next(d for d in build_detectors(Settings()) if d.name == "refusal")
    scanner = Scanner([refusal])
    for gid, spec in enumerate(scanner._spec):
        program = scanner.compiled(gid)
        assert program is refusal.precompiled(spec.id) is not None, spec.id
        assert program._pattern == spec.regex
        assert program._regexp.options().case_sensitive == spec.case_sensitive
    assert refusal.precompiled("any/no_such_pattern") is None
    assert _Plugin().precompiled("hello") is None  # the default: the scan compiles its own
