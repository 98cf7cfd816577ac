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

from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet

from detectors.base import Detection, register_detector
from detectors.lexical import BARRIER, blank_quoted, ngram_keys, word_span, words
from detectors.regex import compile_pattern, iter_matches
from stream.contract.events import Chunk, Event

__all__ = ["SourcePolicyDetector"]

NO_USE_COPY = "no_use_copy"
QUOTE_ONLY_PARAPHRASE = "quote_only_paraphrase"
MAX_CUES = 50  # attribution cues examined per response (bounded time on hostile text)
MAX_QUOTES = 200  # single-quoted spans examined per response
MAX_PROBES = 64  # n-grams looked up by substring per response side (see `_Side.shares`)

#: A quotation in single marks, 'text' or typographic U+2018 text U+2019: an opening
#: mark after a space or bracket, a closing one before a space or punctuation. Blanked
#: only when verbatim.
_SINGLE_QUOTED = compile_pattern(
    "(?:^|[\\s(\\[{:\u2014\u2013-])['\u2018]([^\\n]{2,600}?)['\u2019](?:$|[\\s.,;:!?)\\]}\u2014\u2013-])"
)
_OPENERS = frozenset(" \t\n\f\r([{:\u2014\u2013-")  # what may precede an opening mark
#: Reported speech / attribution: "the CFO said (that) …", "according to the CEO, …",
#: "in her words, …", "as the chair put it, …". Speech-act verbs only: "reported",
#: "announced" and "found" are common for facts taken from a summarize chunk.
_ATTRIBUTION = compile_pattern(
    r"\b(?:(?:said|says|stated|states|noted|notes|wrote|writes|told (?:\w+ ){0,2}?"
    r"|explained|explains|added|adds|argued|argues|claimed|claims|insisted|insists"
    r"|maintained|maintains|stressed|stresses|emphasi[sz](?:ed|es)|warned|warns"
    r"|confirmed|confirms|acknowledged|acknowledges|admitted|admits|reiterated"
    r"|reiterates|promised|promises|pledged|pledges|assured (?:\w+ )?|remarked|remarks"
    r"|commented|comments|signall?ed|signals|described (?:it|this|that|them) as"
    r"|put it|puts it)(?:,)?(?: that)?|according to [^,.;:!?\n]{1,60},"
    r"|in (?:the )?(?:his|her|their|its|[\w.'?-]+['?]s) (?:own )?words,"
    r"|as (?:[\w.'?-]+ ){1,4}(?:put|puts|said|says|noted|notes) it,)"
)
_SENTENCE_END = (". ", "! ", "? ", "\n")
_STOP_WORDS = (
    "the a an and or but of to in on at by for with from as is are was were be been being "
    "it its this that these those they them their we our us you your he she his her i my "
    "will would shall should can could may might must do does did has have had not no "
    "so than then there here which who whom what when where while also very any all"
)
_STOP = frozenset(_STOP_WORDS.split())


def _stem(word: str) -> str:
    """A crude stem, enough to match "returning" with "return" and "rates" with "rate"."""
    for suffix, keep in (("ing", 5), ("ed", 4), ("es", 4), ("s", 3)):
        if word.endswith(suffix) and len(word) >= keep:
            return word[: -len(suffix)]
    return word


def _content(ws: list[str]) -> set[str]:
    return {_stem(w) for w in ws if w not in _STOP and (len(w) > 2 or w.isdigit())}


def _in_chunk(stem: str, chunk_words: set[str]) -> bool:
    """Some chunk word has this stem: only the surface forms :func:`_stem` maps to it are
    looked up, so the chunk's words need not all be stemmed."""
    return any(
        form in chunk_words and _stem(form) == stem
        for form in (stem, stem + "s", stem + "es", stem + "ed", stem + "ing")
    )


def _may_open_quote(text: str) -> bool:
    """Whether `text` may hold a `_SINGLE_QUOTED` match: an opening mark at the start or
    after one of its opening characters (an apostrophe inside a word is not one). Past
    `MAX_QUOTES` marks, yes: the pattern decides."""
    seen = 0
    for mark in "'\u2018":
        pos = text.find(mark)
        while pos >= 0:
            if pos == 0 or text[pos - 1] in _OPENERS:
                return True
            seen += 1
            if seen > MAX_QUOTES:
                return True
            pos = text.find(mark, pos + 1)
    return False


def _blank_verbatim_single_quotes(text: str, chunk_texts: list[str]) -> str:
    """`text` with each 'single-quoted' span blanked when its words are a verbatim run of
    one of `chunk_texts` (same length). Apostrophes make single marks ambiguous, so only a
    span that is provably a quotation of the source counts as quoted."""
    if not _may_open_quote(text):
        return text
    runs: list[str] | None = None
    parts: list[str] = []
    pos = 0
    for _, end, inner in iter_matches(_SINGLE_QUOTED, text, MAX_QUOTES, group=1):
        start = text.rfind(inner, 0, end)
        quoted = " " + " ".join(words(inner)) + " "
        if start < pos or len(quoted) < 3:
            continue
        if runs is None:  # the chunks' words, only once a quote-like span is found
            runs = [" " + " ".join(words(c)) + " " for c in chunk_texts]
        if not any(quoted in run for run in runs):
            continue
        parts += [text[pos:start], BARRIER + " " * (len(inner) - 1)]
        pos = start + len(inner)
    return "".join(parts) + text[pos:] if parts else text


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


def _reported_clauses(raw: str, text: str) -> list[tuple[int, int]]:
    """(start, end) of the clause after each attribution cue, to the end of its sentence;
    sentences holding a quotation (blanked in `text`, so they contain BARRIER) are left
    out: there the speaker is being quoted, and the unquoted rest is left to the n-gram
    checks. Cues are looked for in `raw` (same length as `text`) with every non-ASCII
    character read as "?": RE2 then matches bytes, several times cheaper, and offsets
    are unchanged (a cue spelt with a typographic apostrophe is not seen)."""
    if not raw.isascii():
        raw = raw.encode("ascii", "replace").decode("ascii")
    out: list[tuple[int, int]] = []
    quoted = BARRIER in text
    for _, cue_end, _ in iter_matches(_ATTRIBUTION, raw, MAX_CUES):
        if out and cue_end < out[-1][1]:  # a second cue in one clause: keep the first
            continue
        limit = cue_end + 600
        end = min(len(text), limit)
        for mark in _SENTENCE_END:
            i = text.find(mark, cue_end, limit)
            if 0 <= i < end:
                end = i
        if quoted:
            start = max(0, cue_end - 600)
            begin = max(text.rfind(mark, start, cue_end) for mark in _SENTENCE_END)
            if text.find(BARRIER, max(begin, 0), end) >= 0:
                continue
        out.append((cue_end, end))
    return out


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

    def __call__(self, event: Event) -> list[Detection]:
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
