"""Source policy: response text copied from `no_use` chunks or paraphrasing `quote_only` ones.

Each retrieved chunk carries a `policy` (DESIGN.md): `summarize` (default, anything
goes), `quote_only` (may be used only as a verbatim quotation) or `no_use` (must not
be used at all). The check is lexical, by word n-gram overlap on normalised words
(lowercase, punctuation removed):

- ``no_use_copy``: the response shares a long n-gram (``no_use_ngram`` words, 8) with
  a `no_use` chunk, or at least ``no_use_min_overlap`` (0.2) of the response's distinct
  ``no_use_overlap_ngram`` (5) grams occur in it. Quoting does not excuse a `no_use` chunk.
- ``quote_only_paraphrase``: the response text *outside* quotations ("…", “…”, «…»
  and markdown '>' blockquote lines) shares a ``quote_long_ngram`` (8) with a
  `quote_only` chunk, or at least ``quote_min_overlap`` (0.15) of its distinct
  ``quote_ngram`` (5) grams occur in it. Verbatim quotation inside quotes is fine.

The fraction checks also need ``min_shared`` (2) shared n-grams, so one stock phrase
in a short answer does not fire. Limits: a real paraphrase that shares no 5-word run
(synonyms, reordering) is not seen — that is the judge's `source_policy_usage`
metric; common boilerplate shared with a chunk can fire; the span is approximate
(the first run of shared n-grams); quotation marks pair in order within a paragraph
(an odd one out is ignored) and single quotes do not quote. Skipped at once when no
chunk has a non-default policy.
"""

from __future__ import annotations

from itertools import compress, count

from detectors.base import Detection, register_detector
from detectors.text import blank_quoted, ngram_keys, word_span, words
from stream.events import Chunk, Event

__all__ = ["SourcePolicyDetector"]

NO_USE_COPY = "no_use_copy"
QUOTE_ONLY_PARAPHRASE = "quote_only_paraphrase"


class _Side:
    """One view of the response (whole, or outside quotes) with cached n-gram keys."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = words(text)
        self._keys: dict[int, list[str]] = {}
        self._sets: dict[int, set[str]] = {}

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

    def shared_long(
        self, chunk_words: list[str], long_n: int, short_hits: set[str], short_n: int
    ) -> set[str]:
        """Distinct `long_n`-grams shared with the chunk.

        A shared long n-gram is a run of ``long_n - short_n + 1`` shared short n-grams,
        so with few shared short n-grams only such runs are joined and looked up.
        """
        if long_n < short_n:
            return self.kset(long_n).intersection(ngram_keys(chunk_words, long_n))
        if not short_hits:
            return set()
        flags = list(map(short_hits.__contains__, self.keys(short_n)))
        need = long_n - short_n + 1
        runs = map(all, zip(*(flags[k:] for k in range(need)), strict=False))
        starts = list(compress(count(), runs))
        if len(starts) > len(self.words) // 8:  # heavy overlap: plain set algebra
            return self.kset(long_n).intersection(ngram_keys(chunk_words, long_n))
        found = {" ".join(self.words[i : i + long_n]) for i in starts}
        return found.intersection(ngram_keys(chunk_words, long_n)) if found else set()

    def first_span(self, shared: set[str], n: int) -> tuple[int, int] | None:
        """Character span of the first run of shared n-grams (approximate)."""
        keys = self.keys(n)
        for i, key in enumerate(keys):
            if key in shared:
                j = i
                while j + 1 < len(keys) and keys[j + 1] in shared:
                    j += 1
                return word_span(self.text, i, j + n - 1)
        return None


@register_detector("source_policy")
class SourcePolicyDetector:
    name = "source_policy"

    def __init__(
        self,
        *,
        no_use_ngram: int = 8,
        no_use_overlap_ngram: int = 5,
        no_use_min_overlap: float = 0.2,
        quote_ngram: int = 5,
        quote_long_ngram: int = 8,
        quote_min_overlap: float = 0.15,
        min_shared: int = 2,
    ) -> None:
        for opt, val in (
            ("no_use_ngram", no_use_ngram),
            ("no_use_overlap_ngram", no_use_overlap_ngram),
            ("quote_ngram", quote_ngram),
            ("quote_long_ngram", quote_long_ngram),
        ):
            if not 1 <= val <= 64:
                raise ValueError(f"{opt} must be in 1..64, got {val}")
        for opt, frac in (
            ("no_use_min_overlap", no_use_min_overlap),
            ("quote_min_overlap", quote_min_overlap),
        ):
            if not 0.0 < frac <= 1.0:
                raise ValueError(f"{opt} must be in (0, 1], got {frac}")
        self.no_use_ngram = no_use_ngram
        self.no_use_overlap_ngram = no_use_overlap_ngram
        self.no_use_min_overlap = no_use_min_overlap
        self.quote_ngram = quote_ngram
        self.quote_long_ngram = quote_long_ngram
        self.quote_min_overlap = quote_min_overlap
        self.min_shared = max(1, min_shared)

    @property
    def categories(self) -> tuple[str, ...]:
        return (NO_USE_COPY, QUOTE_ONLY_PARAPHRASE)

    def __call__(self, event: Event) -> list[Detection]:
        chunks = [c for c in event.retrieved_context if c.policy != "summarize"]
        if not chunks or not event.response:
            return []
        whole: _Side | None = None
        outside: _Side | None = None
        found: list[Detection] = []
        for chunk in chunks:
            if chunk.policy == "no_use":
                whole = whole or _Side(event.response)
                hit = self._check(
                    whole, chunk, NO_USE_COPY, self.no_use_ngram,
                    self.no_use_overlap_ngram, self.no_use_min_overlap,
                )  # fmt: skip
            else:
                outside = outside or _Side(blank_quoted(event.response))
                hit = self._check(
                    outside, chunk, QUOTE_ONLY_PARAPHRASE, self.quote_long_ngram,
                    self.quote_ngram, self.quote_min_overlap,
                )  # fmt: skip
            if hit is not None:
                found.append(hit)
        return found

    def _check(
        self, side: _Side, chunk: Chunk, category: str, long_n: int, short_n: int, min_frac: float
    ) -> Detection | None:
        mine = side.kset(short_n)
        if not mine and len(side.words) < long_n:
            return None
        cwords = words(chunk.content)
        if len(cwords) < min(long_n, short_n):
            return None
        shared_short = mine.intersection(ngram_keys(cwords, short_n))
        shared_long = side.shared_long(cwords, long_n, shared_short, short_n)
        frac = len(shared_short) / len(mine) if mine else 0.0
        if not shared_long and not (frac >= min_frac and len(shared_short) >= self.min_shared):
            return None
        shared, n = (shared_long, long_n) if shared_long else (shared_short, short_n)
        evidence = (
            f"chunk {chunk.id[:60]}: {len(shared_long)} shared {long_n}-grams, "
            f"{frac:.0%} of {short_n}-grams"
        )
        return Detection(
            detector=self.name,
            category=category,
            evidence=evidence,
            span=side.first_span(shared, n),
            failure_mode=category,
        )
