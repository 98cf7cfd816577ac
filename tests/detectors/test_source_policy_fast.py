"""The source-policy detector's shortcuts give exactly what the computations they replace
give: substring probes for shared n-grams, long n-grams keyed by covering tuples, the
single-quote pre-check and the reported-speech clauses."""

from __future__ import annotations

import random
from itertools import combinations, pairwise

import pytest

from detectors._source_grams import MAX_PROBES, _covering, _Side
from detectors._source_quotes import (
    _ATTRIBUTION,
    _SENTENCE_END,
    _SINGLE_QUOTED,
    MAX_CUES,
    _may_open_quote,
    _reported_clauses,
)
from detectors.lexical import BARRIER, ngram_keys
from detectors.regex import iter_matches

_WORDS = ["the", "a", "cfo", "said", "margins", "will", "improve", BARRIER, "é"]


def _words(rnd: random.Random, most: int) -> list[str]:
    return [rnd.choice(_WORDS) for _ in range(rnd.randint(0, most))]


def test_probes_answer_like_set_algebra_before_and_after_the_budget() -> None:
    rnd = random.Random(2)
    for _ in range(300):
        side = _Side(" ".join(_words(rnd, 30)))
        for _ in range(12):  # past MAX_PROBES: the side's n-gram set answers
            n = rnd.randint(1, 4)
            keys = ngram_keys(_words(rnd, 12), n)
            want = not set(ngram_keys(side.words, n)).isdisjoint(keys)
            assert side.shares(keys, n) == want, (side.words, keys)
        assert side._probes <= MAX_PROBES


@pytest.mark.parametrize("long_n, short_n", [(8, 5), (5, 5), (12, 3), (11, 5), (2, 4), (1, 1)])
def test_covering_tuples_key_long_ngrams_like_joined_words(long_n: int, short_n: int) -> None:
    rnd = random.Random(long_n * 100 + short_n)
    base, offsets = _covering(long_n, short_n)
    assert offsets[0] == 0 and offsets[-1] + base == long_n
    assert all(b - a <= base for a, b in pairwise(offsets))
    for _ in range(200):
        side = _Side(" ".join(_words(rnd, 40)))
        joined = ngram_keys(side.words, long_n)
        tuples = side.long_keys(long_n, short_n)
        assert len(tuples) == len(joined)
        for i, j in combinations(range(len(joined)), 2):
            assert (joined[i] == joined[j]) == (tuples[i] == tuples[j])


def test_shared_long_ngrams_are_the_joined_intersection() -> None:
    rnd = random.Random(4)
    for _ in range(500):
        side = _Side(" ".join(_words(rnd, 30)))
        chunk = _words(rnd, 40)
        for long_n, short_n in ((8, 5), (4, 2), (3, 3), (2, 4)):
            grams = side.chunk_grams(chunk, min(long_n, short_n))
            short_hits = side.kset(short_n).intersection(grams.keys(short_n))
            got = side.shared_long(grams, long_n, short_hits, short_n)
            want = set(ngram_keys(side.words, long_n)) & set(ngram_keys(chunk, long_n))
            assert len(got) == len(want), (side.words, chunk, long_n, short_n)
            keys, joined = side.long_keys(long_n, short_n), ngram_keys(side.words, long_n)
            assert [k in got for k in keys] == [k in want for k in joined]


def test_quote_pre_check_misses_no_single_quoted_span() -> None:
    rnd = random.Random(6)
    alphabet = "ab '\u2018\u2019\n(-\u2014:,.x"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30))) for _ in range(20000)]
    texts += ["x'" * 300 + " 'quoted text' y", "'at start' z", "it's Bob's"]
    for text in texts:
        if next(iter_matches(_SINGLE_QUOTED, text, 1, group=1), None) is not None:
            assert _may_open_quote(text), text
    assert not _may_open_quote("it's Bob's dog, isn't it")


def _clauses_reference(raw: str, text: str) -> list[tuple[int, int]]:
    """`_reported_clauses` as first written."""
    if not raw.isascii():
        raw = raw.encode("ascii", "replace").decode("ascii")
    out: list[tuple[int, int]] = []
    for _, cue_end, _ in iter_matches(_ATTRIBUTION, raw, MAX_CUES):
        ends = [i for mark in _SENTENCE_END if (i := text.find(mark, cue_end, cue_end + 600)) >= 0]
        end = min(ends) if ends else min(len(text), cue_end + 600)
        begin = max(text.rfind(mark, max(0, cue_end - 600), cue_end) for mark in _SENTENCE_END)
        if BARRIER in text[max(begin, 0) : end]:
            continue
        if out and cue_end < out[-1][1]:
            continue
        out.append((cue_end, end))
    return out


def test_reported_clauses_are_unchanged() -> None:
    rnd = random.Random(8)
    pieces = ["the CFO said ", "according to the CEO, ", "in her words, ", "notes ", "x" * 250]
    pieces += [". ", "! ", "? ", "\n", "margins will improve ", "é ", BARRIER + "  "]
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        raw = text.replace(BARRIER, '"')
        assert _reported_clauses(raw, text) == _clauses_reference(raw, text), text
