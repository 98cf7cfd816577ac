"""The reference a labelled or golden turn carries (DESIGN.md "The event", `labels.*`).

Golden/canary questions replayed through the live service, and turns a reviewer
labelled, carry what a good answer says:

* ``labels.expected_answer`` (string): the golden answer;
* ``labels.required_information`` (string or list of strings): what an answer must
  contain (DeCE's recall criteria are extracted from it);
* ``labels.helpful_information`` (string or list, optional): supportive, not required;
* ``labels.human.overall`` (bool or 0-1): a reviewer's overall verdict (read by
  ``ragpulse qualify`` and ``ragpulse weights fit``, not by the sidecar).

`labels` is free-form, so a wrongly typed reference field does not reject the event:
:func:`reference_of` reports it in :attr:`Reference.problems` and the reference-based
metrics skip the turn with that reason (the detectors still run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["REFERENCE_FIELDS", "Reference", "reference_of"]

#: the `labels` keys that make a turn a reference turn
REFERENCE_FIELDS = ("expected_answer", "required_information", "helpful_information")


@dataclass(frozen=True, slots=True)
class Reference:
    expected_answer: str = ""
    required_information: tuple[str, ...] = ()
    helpful_information: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # "labels.<field>: <what is wrong>"

    @property
    def present(self) -> bool:
        """A usable reference: an expected answer or required information."""
        return bool(self.expected_answer or self.required_information)

    @property
    def gold(self) -> str:
        """The expected answer, else the required information joined: what the answer is
        compared with."""
        return self.expected_answer or "\n".join(self.required_information)


def _texts(labels: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...]:
    value = labels.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value.strip(),) if value.strip() else ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    problems.append(f"labels.{key}: expected a string or a list of strings")
    return ()


def reference_of(labels: Mapping[str, Any] | None) -> Reference | None:
    """The turn's reference, or None when its labels carry none of REFERENCE_FIELDS."""
    if not labels or not any(labels.get(k) is not None for k in REFERENCE_FIELDS):
        return None
    problems: list[str] = []
    expected = labels.get("expected_answer")
    if expected is not None and not isinstance(expected, str):
        problems.append("labels.expected_answer: expected a string")
        expected = None
    return Reference(
        expected_answer=(expected or "").strip(),
        required_information=_texts(labels, "required_information", problems),
        helpful_information=_texts(labels, "helpful_information", problems),
        problems=tuple(problems),
    )
