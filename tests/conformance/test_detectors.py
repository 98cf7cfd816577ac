"""Every registered detector, built-in or plugin, checked the same way: it builds from its
defaults, refuses a bad option naming it, gives the same detections twice (alone and on
the shared scan), stays inside its declared categories, and never raises on the hostile
corpus. Detectors keep no state between events, so there is no state to round-trip."""

from __future__ import annotations

import pytest

import detectors  # noqa: F401  (registers the built-ins)
from detectors import Detector, Scanner, available_detectors, create_detector
from detectors.detection import EVIDENCE_MAX_CHARS
from stream.contract.events import parse_event
from stream.demo import generate
from tests.conformance.hostile import hostile_events

NAMES = available_detectors()
EVENTS = hostile_events() + [parse_event(g.raw) for g in generate(60, seed=13, malformed_rate=0.0)]


def test_the_built_ins_are_all_here() -> None:
    assert {"citations", "identifiers", "pii", "policy", "refusal", "source_policy"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_builds_from_its_defaults_under_the_one_contract(name: str) -> None:
    det = create_detector(name)
    assert isinstance(det, Detector) and det.name == name
    assert det.categories and all(c.replace("_", "").isalnum() for c in det.categories)
    ids = [p.id for p in det.patterns]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_option_is_refused_naming_it(name: str) -> None:
    with pytest.raises(ValueError, match="not_an_option"):
        create_detector(name, not_an_option=1)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_bounded_and_never_raises_on_the_hostile_corpus(name: str) -> None:
    det = create_detector(name)
    scanner = Scanner([det])
    for event in EVENTS:
        alone = det(event)
        shared = scanner.run(det, event, scanner.scan())
        assert alone == shared == det(event), event.event_id
        for d in alone:
            assert d.detector == name and d.category in det.categories, d
            assert len(d.to_dict()["evidence"]) <= EVIDENCE_MAX_CHARS
            if d.span is not None:
                assert 0 <= d.span[0] <= d.span[1] <= len(event.response), d
