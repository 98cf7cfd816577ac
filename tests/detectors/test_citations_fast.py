"""The citation detector's str-method paths give exactly what the RE2 passes they replace
give: markers (the bounded marker pattern, case folding included), a citation's keys and
the chunks' policies (inline code: tests/detectors/test_lexical.py)."""

from __future__ import annotations

import random
import time

import pytest

from detectors import citations
from detectors.citations import (
    _citation_keys,
    _marker_matches,
    _policies,
    normalize_marker,
)
from detectors.regex import compile_pattern, iter_matches
from stream.contract.events import Chunk

_KEY = r"\^?[A-Za-z0-9][A-Za-z0-9_.:\-]{0,40}"
_BOUNDED = compile_pattern(rf"\[\s*({_KEY}(?:\s*[,;]\s*{_KEY}){{0,20}})\s*\]")
# brackets, key characters, RE2's spaces and others, case-folding look-alikes, non-ASCII
_NOISE = "[[]]]^^aZ19_.:-,;  \t\n\f\r\v\u00a0\u017f\u212a\u0131\u00e9(x😀"


def _text(rnd: random.Random) -> str:
    parts = []
    for _ in range(rnd.randint(1, 8)):
        roll = rnd.random()
        if roll < 0.3:
            chars = ["1", "a", "\u017f", "\u212a", "_"]
            keys = [
                rnd.choice(["", "^"]) + rnd.choice(chars) * rnd.choice([1, 41, 42])
                for _ in range(rnd.choice([1, 2, 21, 22]))
            ]
            parts.append("[" + rnd.choice([",", " ; ", ",\n"]).join(keys) + rnd.choice("] "))
        else:
            parts.append("".join(rnd.choice(_NOISE) for _ in range(rnd.randint(0, 40))))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("misses", [64, 2, 0])  # after that many non-markers: the pattern
def test_markers_are_the_bounded_patterns_matches(
    seed: int, misses: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(citations, "_MAX_MISSES", misses)
    rnd = random.Random(seed)
    for _ in range(3000):
        text = _text(rnd)
        for limit in (0, 1, 2, 500):
            want = list(iter_matches(_BOUNDED, text, limit, 1))
            assert list(_marker_matches(text, limit)) == want, (text, limit)


def test_marker_keys_fold_like_re2() -> None:
    for text in ("[\u017f1]", "[\u212a]", "[1\u212a_2]", "[^\u017f]", "[\u0131]", "[1\u00e9]"):
        want = list(iter_matches(_BOUNDED, text, 5, 1))
        assert list(_marker_matches(text, 5)) == want, text


def test_hostile_brackets_cost_little() -> None:
    texts = ["[" * 200_000 + "1]" + "[1 x" * 100_000 + "]", "[" + " ," * 300_000 + "1]"]
    texts += ["[a b]" * 100_000 + "[1] [2]", "[1]" * 100_000, "]" * 200_000 + "[" * 200_000]
    for text in texts:
        started = time.process_time()
        got = list(_marker_matches(text, 500))
        assert time.process_time() - started < 0.5
        assert got == list(iter_matches(_BOUNDED, text, 500, 1))


def test_citation_keys_are_the_per_part_normalisation() -> None:
    for marker in ("[1]", "1, 2", "^3,", " , [a] ,^B", "[1-3]", "x,,y"):
        parts = marker.split(",")
        norm, keys = _citation_keys(marker)
        assert norm == tuple(normalize_marker(k) for k in parts)
        assert keys == tuple(normalize_marker(k) for k in parts if k.strip())


def test_policies_are_the_last_chunk_per_stripped_id() -> None:
    rnd = random.Random(1)
    ids = ["a", " a", "b ", "c", ""]
    for _ in range(2000):
        chunks = [
            Chunk(id=rnd.choice(ids), content="x", policy=rnd.choice(["summarize", "no_use"]))
            for _ in range(rnd.randint(0, 6))
        ]
        sids = {rnd.choice(["a", "b", "c", "", "z"]) for _ in range(rnd.randint(1, 3))}
        full = {c.id.strip(): c.policy for c in chunks}
        assert _policies(chunks, sids) == {s: p for s, p in full.items() if s in sids}
