"""Judge self-consistency: the same turn judged twice, the context shuffled the second time.

A share of sampled turns (``judge.health.consistency.rate``) is judged a second time by an
independent call, with the shown context chunks in another order (so position bias
counts as disagreement too). :func:`compare` turns the two verdicts of one metric into a
:class:`Pair`: the absolute difference and whether the two fall on opposite sides of the
metric's gate floor (a *flip*: the gate would have passed on one call and failed on the
other). The first verdict is the one that counts; the pair goes into the scorecard and
the consistency families. A deterministic judge (the embedded one) gives the same
verdict twice by construction: it is not asked again.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from stream.contract.events import Event

__all__ = ["SHUFFLED_CHUNKS", "Pair", "compare", "shuffled"]

#: chunks reordered on the second call: the default number a judge prompt shows
#: (`PromptLimits.max_chunks`), so with the default limits both calls see the same chunks
SHUFFLED_CHUNKS = 12


@dataclass(frozen=True, slots=True)
class Pair:
    first: float
    second: float
    floor: float

    @property
    def abs_diff(self) -> float:
        return abs(self.first - self.second)

    @property
    def flip(self) -> bool:
        return (self.first >= self.floor) != (self.second >= self.floor)

    def to_dict(self) -> dict[str, Any]:
        return {
            "first": round(self.first, 4),
            "second": round(self.second, 4),
            "abs_diff": round(self.abs_diff, 4),
            "flip": self.flip,
        }


def shuffled(event: Event) -> Event:
    """`event` with its first :data:`SHUFFLED_CHUNKS` chunks in another order, the same
    order for the same event id (a permutation that differs from the original when there
    are at least two chunks)."""
    chunks = list(event.retrieved_context)
    head, tail = chunks[:SHUFFLED_CHUNKS], chunks[SHUFFLED_CHUNKS:]
    if len(head) < 2:
        return event
    seed = int.from_bytes(hashlib.blake2b(event.event_id.encode(), digest_size=8).digest(), "big")
    order = list(range(len(head)))
    random.Random(seed).shuffle(order)
    if order == sorted(order):  # the identity: rotate by one instead
        order = order[1:] + order[:1]
    return event.model_copy(update={"retrieved_context": [head[i] for i in order] + tail})


def compare(
    first: Mapping[str, float], second: Mapping[str, float], floor: Callable[[str], float]
) -> dict[str, Pair]:
    """A pair for every metric scored on both calls."""
    return {m: Pair(first[m], second[m], floor(m)) for m in sorted(first) if m in second}
