"""`lexical.inline_code` (a `str.find` walk) against the inline-code RE2 pattern it stands
for, and `code_regions` built on it."""

from __future__ import annotations

import random

import pytest

from detectors.lexical import _INLINE_CODE, MAX_BACKTICKS, code_regions, inline_code
from detectors.regex import iter_matches


def _pattern(text: str, limit: int) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _ in iter_matches(_INLINE_CODE, text, limit)]


@pytest.mark.parametrize("seed", range(3))
def test_inline_code_is_the_pattern(seed: int) -> None:
    rnd = random.Random(seed)
    alphabet = ["`", "`", "``", "a", " ", "\n", "\u00e9", "\U0001f600", "[1]"]
    for _ in range(3000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        for limit in (0, 1, 2, 1000):
            assert inline_code(text, limit) == _pattern(text, limit), (text, limit)


def test_many_backticks_take_the_pattern() -> None:
    """Over MAX_BACKTICKS the pattern answers (the walk would cost a step per backtick)."""
    for text in ("`a`" + "``" * MAX_BACKTICKS, "`a` " * (MAX_BACKTICKS // 2 + 1), "`\n" * 5000):
        assert text.count("`") > MAX_BACKTICKS
        assert inline_code(text, 1000) == _pattern(text, 1000)
    text = "`a` " * (MAX_BACKTICKS // 2)  # at the limit: the walk, the same spans
    assert inline_code(text, 2000) == _pattern(text, 2000)


def test_code_regions_mask_fences_then_find_inline_code() -> None:
    text = "see `x`\n```bash\nrun `y`\n```\nthen `z`"
    fence_start, fence_end = text.index("run"), text.index("```\nthen")
    assert code_regions(text) == [(4, 7), (fence_start, fence_end), (text.index("`z"), len(text))]
    assert code_regions("no code here") == []
