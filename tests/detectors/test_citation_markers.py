"""The citation markers found by the unbounded pattern and its bound checks are exactly
the matches of the bounded pattern it replaces (keys of at most 41 characters after a
"^", at most 21 keys), in order, and the first `limit` of them."""

from __future__ import annotations

import random

import pytest

from detectors.citations import _marker_matches
from detectors.regex import compile_pattern, iter_matches

_KEY = r"\^?[A-Za-z0-9][A-Za-z0-9_.:\-]{0,40}"
_BOUNDED = compile_pattern(rf"\[\s*({_KEY}(?:\s*[,;]\s*{_KEY}){{0,20}})\s*\]")
_NOISE = "[[]]]^^ab1Z_.:-,;;,  \t\n\f\r\v\u00e9x(9"


def _group(rnd: random.Random) -> str:
    keys = [
        "^" * (rnd.random() < 0.2) + "a" * rnd.choice([1, 40, 41, 42])
        for _ in range(rnd.choice([1, 20, 21, 22]))
    ]
    return "[" + rnd.choice([",", " ; ", ",\n"]).join(keys) + rnd.choice(["]", " ]", ""])


def _text(rnd: random.Random) -> str:
    parts = []
    for _ in range(rnd.randint(1, 6)):
        if rnd.random() < 0.3:
            parts.append(_group(rnd))
        else:
            size = rnd.choice([5, 20, 60])
            parts.append("".join(rnd.choice(_NOISE) for _ in range(rnd.randint(0, size))))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_markers_equal_the_bounded_pattern(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(3000):
        text = _text(rnd)
        for limit in (0, 1, 3, 500):
            assert list(_marker_matches(text, limit)) == list(
                iter_matches(_BOUNDED, text, limit, 1)
            ), (text, limit)


def test_bound_edges() -> None:
    key41, key42 = "a" * 41, "a" * 42
    for text in (
        f"[{key41}] [{key42}] [^{key41}] [^{key42}]",
        "[" + ",".join(["1"] * 21) + "] [" + ",".join(["1"] * 22) + "] [3]",
        f"[ {key41} ; 2 ]x[ {key42} ; 2 ]",
    ):
        assert list(_marker_matches(text, 500)) == list(iter_matches(_BOUNDED, text, 500, 1))
