"""The detectors' fast paths give exactly what the slow ones they replace give."""

from __future__ import annotations

import random
from itertools import islice

import pytest

from detectors._identifiers_sources import _has_word, _Sources, _sources
from detectors._source_grams import _ChunkGrams
from detectors.citations import _numeric, _parse, normalize_marker
from detectors.lexical import _depunct, ngram_keys, words
from detectors.pii import PiiDetector
from detectors.regex import compile_pattern, iter_matches, iter_spans, search
from stream.contract.events import Event, EventLimits

PATTERNS = [
    r"\[\s*([A-Za-z0-9]+)\s*\]",
    r"x*",
    r"\b\w+\b",
    r"(a)|(é+)",
    r"(?:^|\s)(\S+)",
    r"",
    r"[.!?]+\s*|\n+",
    r"$",
    r"\b",
]
ALPHABET = "aé x[1]\n.!?€😀b"


def _texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 30))) for _ in range(n)]


@pytest.mark.parametrize("regex", PATTERNS)
def test_spans_on_non_ascii_text_match_the_wrappers_finditer(regex: str) -> None:
    pattern = compile_pattern(regex)
    for text in _texts(300, seed=len(regex)):
        for group in range(pattern.groups + 1):
            want = [
                (m.start(), m.end(), m.group(group) or "")
                for m in islice(pattern.finditer(text), 7)
            ]
            assert list(iter_matches(pattern, text, 7, group)) == want, (text, group)
        want_spans = [m.span() for m in islice(pattern.finditer(text), 5)]
        assert list(iter_spans(pattern, text, 5)) == want_spans, text


@pytest.mark.parametrize("regex", PATTERNS)
def test_search_matches_the_wrappers_search_with_bounds(regex: str) -> None:
    pattern = compile_pattern(regex)
    for text in [*_texts(100, seed=7), "plain ascii [1] text.", ""]:
        for pos in (-1, 0, 2, 5, 40):
            for end in (None, 0, 3, 10, 50):
                want = pattern.search(text, pos, end) is not None
                assert search(pattern, text, pos, end) == want, (text, pos, end)


def test_marker_parse_is_the_per_key_normalisation() -> None:
    for inner, keys in (("1", ("1",)), ("^2", ("2",)), ("A1; b2 ,C3", ("a1", "b2", "c3"))):
        got, footnote, citation_like = _parse(inner)
        assert got == keys == tuple(normalize_marker(k) for k in got)
        assert footnote == inner.startswith("^")
        assert citation_like == (
            all(any(c.isdigit() for c in k) for k in keys) and not _numeric(list(keys))
        )
    assert _parse("0, 1")[2] is False and _parse("x")[2] is False


def test_chunk_grams_keep_every_shared_ngram() -> None:
    rnd = random.Random(3)
    vocab_words = ["the", "a", "cfo", "said", "margins", "will", "improve", "next", "rates"]
    for _ in range(300):
        side = [rnd.choice(vocab_words) for _ in range(rnd.randint(0, 30))]
        chunk = [rnd.choice([*vocab_words, "zz", "qq"]) for _ in range(rnd.randint(0, 40))]
        for least in (1, 2, 5):
            grams = _ChunkGrams(chunk, frozenset(side), least)
            for n in range(least, least + 4):
                mine = set(ngram_keys(side, n))
                assert mine.intersection(grams.keys(n)) == mine.intersection(ngram_keys(chunk, n))
            if not grams.runs:
                assert not set(ngram_keys(side, least)) & set(ngram_keys(chunk, least))


def _event(**fields: object) -> Event:
    data = {"event_id": "e1", "query": "q", "response": "r", **fields}
    return Event.model_validate(data, context={"limits": EventLimits(max_text_chars=500_000)})


def test_words_fast_path_is_depunct_lower_split() -> None:
    rnd = random.Random(5)
    alphabet = "aZq \n\t.,!?'\"-_/[](){}\u00e9\u2014\u201c\u201d\u00ab\u00bb\u2026"
    alphabet += "\u00a0\u00c9\u03a3\u0130\u212a\u017f"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(3000)]
    texts += [chr(c) for c in range(0x3000)]
    for text in texts:
        assert words(text) == _depunct(text).lower().split(), text


def test_sources_part_by_part_answer_as_the_joined_text() -> None:
    rnd = random.Random(11)
    alphabet = ["a", "B", "-", "_", " ", "/", "\\", "\n", "\u03a3", "\u0130", "kb", "KB-1"]
    alphabet += ["\u00e9", "1"]

    def text(n: int) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, n)))

    for _ in range(300):
        chunks = [{"id": f"c{i}", "content": text(30)} for i in range(rnd.randint(0, 4))]
        event = _event(query=text(20), retrieved_context=chunks)
        joined = _sources(event)
        for _ in range(10):
            key = text(4).lower()
            sources = _Sources(event)
            assert (key in sources) == (key in joined), key
            assert sources.has_word(key, 3) == _has_word(joined, key, 3), key
            assert sources.text == joined


def test_pii_context_read_until_every_response_value_is_known() -> None:
    pii = PiiDetector()
    mail, phone = "help@example.com", "+44 20 7946 0958"
    response = f"Write to {mail} or call {phone}."
    chunks = [{"id": "c1", "content": f"Contact: {mail}"}, {"id": "c2", "content": "Tel " + phone}]
    assert pii(_event(response=response, retrieved_context=chunks)) == []
    found = pii(_event(response=response, retrieved_context=chunks[:1]))
    assert [d.category for d in found] == ["phone"]
