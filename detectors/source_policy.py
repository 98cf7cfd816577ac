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
  ``quote_ngram`` (5) grams occur in it. Verbatim quotation inside quotes is fine;
  a span in single quotation marks ('…' or the typographic pair) counts as quoted when
  its words are a verbatim run of a `quote_only` chunk (an apostrophe is not a quote).
  Also **reported speech**: the clause after an attribution cue ("the CFO said (that)
  …", "according to the CEO, …", "in her words, …", "as the chair put it, …"), to the
  end of its sentence, in a sentence that quotes nothing, when at least
  ``reported_min_overlap`` (0.6) of its distinct content words (stop words dropped,
  crudely stemmed: "returning" = "return") occur in the chunk, at least three of them,
  and two of its word pairs do, in order (clauses of fewer than ``reported_min_words``
  (6) words are skipped). This catches a restatement inside a long answer, where the
  fraction of the whole response is small, and a reworded one ("the CFO said buybacks
  will keep returning surplus cash to shareholders").

The fraction checks also need ``min_shared`` (2) shared n-grams, so one stock phrase
in a short answer does not fire. Limits: a real paraphrase that shares no 5-word run
(synonyms, reordering) is not seen unless it is reported speech as above — the rest is
the judge's `source_policy_usage` metric; the attribution cues are speech verbs only
("reported", "announced", "found" are not cues: they usually introduce facts from a
summarize chunk); common boilerplate shared with a chunk can fire; the span is
approximate (the first run of shared n-grams, or the reported clause); quotation marks
pair in order within a paragraph (an odd one out is ignored). Skipped at once when no
chunk has a non-default policy. At most ``MAX_CUES`` (50) cues and ``MAX_QUOTES`` (200)
single-quoted spans are examined per response.
"""

from __future__ import annotations

from detectors._source_grams import _Side
from detectors._source_quotes import MAX_CUES as MAX_CUES  # re-export: the docstring's limits
from detectors._source_quotes import MAX_QUOTES as MAX_QUOTES
from detectors._source_quotes import (
    _blank_verbatim_single_quotes,
    _content,
    _in_chunk,
    _reported_clauses,
    _stem,
)
from detectors.base import Detection, register_detector
from detectors.lexical import blank_quoted, ngram_keys, words
from detectors.scan import Detector, Scan
from stream.contract.events import Chunk, Event

__all__ = ["SourcePolicyDetector"]

NO_USE_COPY = "no_use_copy"
QUOTE_ONLY_PARAPHRASE = "quote_only_paraphrase"


@register_detector("source_policy")
class SourcePolicyDetector(Detector):
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
        reported_min_overlap: float = 0.6,
        reported_min_words: int = 6,
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
            ("reported_min_overlap", reported_min_overlap),
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
        self.reported_min_overlap = reported_min_overlap
        self.reported_min_words = max(2, reported_min_words)

    @property
    def categories(self) -> tuple[str, ...]:
        return (NO_USE_COPY, QUOTE_ONLY_PARAPHRASE)

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        chunks = [c for c in event.retrieved_context if c.policy != "summarize"]
        if not chunks or not event.response:
            return []
        whole: _Side | None = None
        outside: _Side | None = None
        clauses: list[tuple[int, int]] | None = None
        found: list[Detection] = []
        for chunk in chunks:
            cwords = words(chunk.content)
            if chunk.policy == "no_use":
                if whole is None:  # the same view as outside quotes when nothing is quoted
                    if outside is not None and outside.text == event.response:
                        whole = outside
                    else:
                        whole = _Side(event.response)
                hit = self._check(
                    whole, chunk, cwords, NO_USE_COPY, self.no_use_ngram,
                    self.no_use_overlap_ngram, self.no_use_min_overlap,
                )  # fmt: skip
            else:
                if outside is None:
                    quote_only = [c.content for c in chunks if c.policy == "quote_only"]
                    text = _blank_verbatim_single_quotes(blank_quoted(event.response), quote_only)
                    outside = whole if whole is not None and whole.text == text else _Side(text)
                hit = self._check(
                    outside, chunk, cwords, QUOTE_ONLY_PARAPHRASE, self.quote_long_ngram,
                    self.quote_ngram, self.quote_min_overlap,
                )  # fmt: skip
                if hit is None:
                    if clauses is None:
                        clauses = _reported_clauses(event.response, outside.text)
                    hit = self._reported(outside.text, clauses, chunk, cwords)
            if hit is not None:
                found.append(hit)
        return found

    def _reported(
        self, text: str, clauses: list[tuple[int, int]], chunk: Chunk, cwords: list[str]
    ) -> Detection | None:
        """Reported speech that restates the chunk: "the CFO said margins would improve …".

        The clause after an attribution cue (to the end of its sentence, outside quotes, in
        a sentence that quotes nothing) restates the chunk when at least
        ``reported_min_overlap`` of its distinct content words (stop words dropped, crudely
        stemmed) occur in the chunk and two of its word pairs do, in order.
        """
        if not clauses:
            return None
        cset = set(cwords)
        cpairs: set[str] | None = None
        for start, end in clauses:
            ws = words(text[start:end])
            if len(ws) < self.reported_min_words:
                continue
            mine = _content(ws)
            if not mine:
                continue
            shared = {stem for stem in mine if _in_chunk(stem, cset)}
            if len(shared) < 3 or len(shared) < self.reported_min_overlap * len(mine):
                continue
            if cpairs is None:
                cpairs = set(ngram_keys([_stem(w) for w in cwords], 2))
            pairs = cpairs.intersection(ngram_keys([_stem(w) for w in ws], 2))
            if len(pairs) < 2:
                continue
            start += len(text[start:end]) - len(text[start:end].lstrip())
            evidence = (
                f"chunk {chunk.id[:60]}: reported speech, {len(shared)}/{len(mine)} content "
                f"words and {len(pairs)} word pairs in the chunk"
            )
            return Detection(
                detector=self.name,
                category=QUOTE_ONLY_PARAPHRASE,
                evidence=evidence[:160],
                span=(start, end),
                failure_mode=QUOTE_ONLY_PARAPHRASE,
            )
        return None

    def _check(
        self,
        side: _Side,
        chunk: Chunk,
        cwords: list[str],
        category: str,
        long_n: int,
        short_n: int,
        min_frac: float,
    ) -> Detection | None:
        least = min(long_n, short_n)
        if len(cwords) < least:
            return None
        grams = side.chunk_grams(cwords, least)
        if not grams.runs or len(side.words) < least:  # no n-gram can be shared
            return None
        chunk_short = grams.keys(short_n)
        if long_n >= short_n and not side.shares(chunk_short, short_n):
            return None  # no short n-gram shared, so no long one either
        mine = side.kset(short_n)
        shared_short = mine.intersection(chunk_short)
        shared_long = side.shared_long(grams, long_n, shared_short, short_n)
        frac = len(shared_short) / len(mine) if mine else 0.0
        if not shared_long and not (frac >= min_frac and len(shared_short) >= self.min_shared):
            return None
        if shared_long:
            span = side.first_span(side.long_keys(long_n, short_n), shared_long, long_n)
        else:
            span = side.first_span(side.keys(short_n), shared_short, short_n)
        evidence = (
            f"chunk {chunk.id[:60]}: {len(shared_long)} shared {long_n}-grams, "
            f"{frac:.0%} of {short_n}-grams"
        )
        return Detection(
            detector=self.name,
            category=category,
            evidence=evidence,
            span=span,
            failure_mode=category,
        )
