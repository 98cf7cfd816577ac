"""The reference a golden / labelled turn carries in `labels`."""

from __future__ import annotations

from stream.contract import Event, Reference, reference_of


def test_reference_fields_and_their_problems() -> None:
    assert reference_of(None) is None and reference_of({"category": "x"}) is None
    ref = reference_of(
        {
            "expected_answer": " 42. ",
            "required_information": "the number",
            "helpful_information": ["", "context"],
        }
    )
    assert ref == Reference("42.", ("the number",), ("context",))
    assert ref.present and ref.gold == "42."
    only_required = reference_of({"required_information": ["a", "b"]})
    assert only_required is not None and only_required.gold == "a\nb"
    bad = reference_of({"expected_answer": 3, "required_information": [1]})
    assert bad is not None and not bad.present
    assert bad.problems == (
        "labels.expected_answer: expected a string",
        "labels.required_information: expected a string or a list of strings",
    )
    helpful_only = reference_of({"helpful_information": "tip"})
    assert helpful_only is not None and not helpful_only.present


def test_event_exposes_its_reference() -> None:
    ev = Event(event_id="e", query="q", response="r", labels={"expected_answer": "a"})
    assert ev.reference is not None and ev.reference.expected_answer == "a"
    assert Event(event_id="e", query="q", response="r").reference is None
