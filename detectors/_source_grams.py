"""The source-policy detector's n-gram machinery (:mod:`detectors.source_policy`).

A view of the response (:class:`_Side`) with cached n-gram keys, the n-grams of a chunk
that can be shared with it (:class:`_ChunkGrams`), and long n-grams keyed as tuples of
short ones (:func:`_covering`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet

from detectors.lexical import ngram_keys, word_span, words

__all__ = ["MAX_PROBES", "_ChunkGrams", "_Side", "_covering"]

MAX_PROBES = 64  # n-grams looked up by substring per response side (see `_Side.shares`)


class _ChunkGrams:
    """A chunk's n-grams that can be shared with one side of the response.

    Only an n-gram whose words all occur on the side (`vocab`) can be one of the side's
    n-grams, so the chunk is cut into runs of such words at least `least` long (a byte
    flag per word, runs found with ``bytes.find``) and n-grams are joined inside those
    runs only: intersections with the side's n-grams are unchanged. No run: nothing
    can be shared.
    """

    __slots__ = ("_keys", "runs", "words")

    def __init__(self, chunk_words: list[str], vocab: frozenset[str], least: int) -> None:
        self.words = chunk_words
        flags = bytes(map(vocab.__contains__, chunk_words))
        need = b"\x01" * max(1, least)
        self.runs: list[tuple[int, int]] = []
        pos = flags.find(need)
        while pos >= 0:
            stop = flags.find(b"\x00", pos)
            if stop < 0:
                stop = len(flags)
            self.runs.append((pos, stop))
            pos = flags.find(need, stop)
        self._keys: dict[int, list[list[str]]] = {}

    def _run_keys(self, n: int) -> list[list[str]]:
        got = self._keys.get(n)
        if got is None:
            got = self._keys[n] = [ngram_keys(self.words[a:b], n) for a, b in self.runs]
        return got

    def keys(self, n: int) -> list[str]:
        out: list[str] = []
        for keys in self._run_keys(n):
            out += keys
        return out

    def long_keys(self, long_n: int, short_n: int) -> list[tuple[str, ...]]:
        """The `long_n`-grams as :func:`_covering` tuples."""
        base, offsets = _covering(long_n, short_n)
        out: list[tuple[str, ...]] = []
        for keys in self._run_keys(base):
            out += zip(*(keys[o:] for o in offsets), strict=False)
        return out


def _covering(long_n: int, short_n: int) -> tuple[int, tuple[int, ...]]:
    """How a long n-gram is keyed without joining its words: as the tuple of the (already
    joined) `base`-grams at `offsets` from its first word, which cover it, so two long
    n-grams are equal exactly when their tuples are. `base` is `short_n` unless that is
    longer than `long_n` (then the long n-gram itself, a 1-tuple)."""
    if long_n < short_n:
        return long_n, (0,)
    last = long_n - short_n
    return short_n, tuple(sorted({*range(0, last + 1, short_n), last}))


class _Side:
    """One view of the response (whole, or outside quotes) with cached n-gram keys."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = words(text)
        self.vocab = frozenset(self.words)
        self._keys: dict[int, list[str]] = {}
        self._sets: dict[int, set[str]] = {}
        self._long: dict[tuple[int, int], list[tuple[str, ...]]] = {}
        self._joined = ""
        self._probes = 0

    def shares(self, keys: list[str], n: int) -> bool:
        """Whether one of `keys` (n-grams) is one of this side's n-grams.

        A chunk has few n-grams that can be shared (:class:`_ChunkGrams`), and most are
        not: up to `MAX_PROBES` per side are looked up as substrings of the side's words
        joined by spaces (" a b c " occurs there only as words a, b, c in a row), which
        costs less than joining every n-gram of the side; past that, set algebra.
        """
        got = self._sets.get(n)
        if got is None and self._probes + len(keys) <= MAX_PROBES:
            self._probes += len(keys)
            if not self._joined:
                self._joined = " " + " ".join(self.words) + " "
            return any(f" {key} " in self._joined for key in keys)
        return not self.kset(n).isdisjoint(keys)

    def keys(self, n: int) -> list[str]:
        got = self._keys.get(n)
        if got is None:
            got = self._keys[n] = ngram_keys(self.words, n)
        return got

    def kset(self, n: int) -> set[str]:
        got = self._sets.get(n)
        if got is None:
            got = self._sets[n] = set(self.keys(n))
        return got

    def long_keys(self, long_n: int, short_n: int) -> list[tuple[str, ...]]:
        """The side's `long_n`-grams in order, as :func:`_covering` tuples."""
        got = self._long.get((long_n, short_n))
        if got is None:
            base, offsets = _covering(long_n, short_n)
            keys = self.keys(base)
            got = list(zip(*(keys[o:] for o in offsets), strict=False))
            self._long[long_n, short_n] = got
        return got

    def chunk_grams(self, chunk_words: list[str], least: int) -> _ChunkGrams:
        """The chunk's n-grams that can be shared with this side (``n >= least``)."""
        return _ChunkGrams(chunk_words, self.vocab, least)

    def shared_long(
        self, chunk: _ChunkGrams, long_n: int, short_hits: set[str], short_n: int
    ) -> set[tuple[str, ...]]:
        """Distinct `long_n`-grams shared with the chunk, as :func:`_covering` tuples.

        A shared long n-gram is a run of ``long_n - short_n + 1`` shared short n-grams:
        without such a run there is none.
        """
        if long_n >= short_n:
            if not short_hits:
                return set()
            flags = bytes(map(short_hits.__contains__, self.keys(short_n)))
            if b"\x01" * (long_n - short_n + 1) not in flags:
                return set()
        return set(chunk.long_keys(long_n, short_n)).intersection(self.long_keys(long_n, short_n))

    def first_span(
        self, keys: Sequence[Hashable], shared: AbstractSet[Hashable], n: int
    ) -> tuple[int, int] | None:
        """Character span of the first run of shared n-grams (approximate); `keys` are
        this side's n-grams in order."""
        for i, key in enumerate(keys):
            if key in shared:
                j = i
                while j + 1 < len(keys) and keys[j + 1] in shared:
                    j += 1
                return word_span(self.text, i, j + n - 1)
        return None
