"""Linear-time multi-pattern matching on RE2 (google-re2).

RE2 guarantees time linear in the input, so hostile text cannot stall the stream.
A :class:`PatternSet` screens a text once with an ``re2.Set`` (one pass for all
patterns) and only then runs the few patterns that matched to get their spans.
RE2 has no look-around or back-references; write patterns without them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import re2

from stream.platform.heap import trim_heap

__all__ = [
    "Match",
    "PatternSet",
    "compile_pattern",
    "iter_matches",
    "iter_spans",
    "release_memory",
    "search",
    "set_options",
    "wrap_filtered",
]


@dataclass(frozen=True, slots=True)
class Match:
    pattern_id: str
    start: int
    end: int
    text: str
    groups: tuple[str | None, ...] = ()


#: RE2 memory budget (program + lazy DFA cache) of a pattern set, and of one pattern.
#: The sets hold the policy packs' ~30,000-character patterns and need 64 MiB to compile.
#: A single pattern gets 2 MiB, and 64 only when it does not compile in 2: the lazy DFA
#: caches of the ~100 per-pattern programs fill up with traffic; after 20,000 events they
#: held 15.7 MiB less at 2 MiB than at 64 (9.6 less at 8), for the same detections and the
#: same CPU (an exhausted DFA cache is reset and rebuilt, never a wrong answer).
SET_MAX_MEM = 64 << 20
PATTERN_MAX_MEM = 2 << 20


def _options(case_sensitive: bool, max_mem: int = SET_MAX_MEM) -> Any:
    opts = re2.Options()
    opts.case_sensitive = case_sensitive
    opts.max_mem = max_mem
    opts.log_errors = False
    return opts


def set_options(case_sensitive: bool = True) -> Any:
    """RE2 options for a pattern set (case-insensitive members are wrapped in ``(?i:…)``)."""
    return _options(case_sensitive)


# The wrapper's `re2.compile` keeps the last 128 programs in an LRU cache: with the
# policy packs' ~30,000-character patterns (and every def compiled once to validate it)
# that pins tens of MiB. Compile outside the cache; the caller keeps what it needs.
_REGEXP: Any = getattr(re2, "_Regexp", None)


def compile_pattern(pattern: str, case_sensitive: bool = False) -> Any:
    """Compile one RE2 pattern; raises ValueError naming the pattern when RE2 rejects it."""
    make = _REGEXP if _REGEXP is not None else re2.compile
    try:
        return make(pattern, _options(case_sensitive, PATTERN_MAX_MEM))
    except re2.error:
        pass  # too large for the small budget, or invalid: the full budget decides
    try:
        return make(pattern, _options(case_sensitive, SET_MAX_MEM))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(f"invalid RE2 pattern {pattern!r}: {reason}") from None


def wrap_filtered(pattern: str, program: Any, case_sensitive: bool = False) -> Any:
    """A compiled-pattern object around an RE2 program owned by an RE2 Filter (so the
    program is not compiled twice); a fresh compile when the wrapper has no such class."""
    if _REGEXP is None:
        return compile_pattern(pattern, case_sensitive)
    wrapped = object.__new__(_REGEXP)
    wrapped._pattern = pattern
    wrapped._regexp = program
    return wrapped


_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_TO_CHARS: Any = getattr(getattr(re2, "_re2", None), "BytesToCharLen", None)
_TO_BYTES = getattr(getattr(re2, "_re2", None), "CharLenToBytes", None)


def _ascii_spans(pattern: Any, data: bytes, limit: int) -> Iterator[Any]:
    """Match spans straight from the RE2 object (no Match objects, no offset tables): the
    loop of the wrapper's `finditer` on bytes, which costs ~3x less per match here."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None or _UNANCHORED is None:  # another wrapper version: the public API
        for m in islice(pattern.finditer(data), limit):
            yield [m.span(i) for i in range(pattern.groups + 1)]
        return
    pos, end, count = 0, len(data), 0
    while count < limit:
        spans = regexp.Match(_UNANCHORED, data, pos, end)
        stop = spans[0][1]
        if stop < 0:
            return
        yield spans
        count += 1
        if pos == end:
            return
        pos = pos + 1 if pos == stop else stop  # an empty match at `pos` moves on by one


def _char_len(data: bytes, start: int, end: int) -> int:
    """Characters in the UTF-8 bytes data[start:end]: decoding the slice in C is several
    times cheaper than the wrapper's byte-by-byte ``BytesToCharLen``, and gives the same
    count between character boundaries (where RE2 offsets fall); anything else (a ``\\C``
    match ending inside a character) is left to ``BytesToCharLen``."""
    try:
        return len(data[start:end].decode("utf-8"))
    except UnicodeDecodeError:
        return int(_TO_CHARS(data, start, end))


def _utf8_spans(pattern: Any, text: str, limit: int) -> Iterator[Any]:
    """`_ascii_spans` for non-ASCII text: the wrapper's `finditer` loop on the UTF-8 bytes
    (same positions, same step past an empty match), with the byte offsets turned into
    character offsets incrementally (linear), but no Match objects."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None or _UNANCHORED is None or _TO_CHARS is None or _TO_BYTES is None:
        for m in islice(pattern.finditer(text), limit):
            yield [m.span(i) for i in range(pattern.groups + 1)]
        return
    data = text.encode("utf-8")
    pos, end, count = 0, len(data), 0
    last_b = last_c = 0
    while count < limit:
        spans = regexp.Match(_UNANCHORED, data, pos, end)
        stop = spans[0][1]
        if stop < 0:
            return
        if len(spans) == 1:  # no groups: the two offsets in order
            begin = spans[0][0]
            start = last_c = last_c + _char_len(data, last_b, begin)
            last_c += _char_len(data, begin, stop)
            last_b = stop
            yield [(start, last_c)]
        elif len(spans) == 2 and 0 <= spans[0][0] <= spans[1][0] <= spans[1][1] <= stop:
            # one group inside the match (always so with RE2): the offsets in order
            (begin, _), (g_start, g_end) = spans
            start = last_c = last_c + _char_len(data, last_b, begin)
            g_first = last_c = last_c + _char_len(data, begin, g_start)
            g_last = last_c = last_c + _char_len(data, g_start, g_end)
            last_c += _char_len(data, g_end, stop)
            last_b = stop
            yield [(start, last_c), (g_first, g_last)]
        else:
            chars: dict[int, int] = {}
            for off in sorted({o for span in spans for o in span if o >= 0}):
                last_c += _char_len(data, last_b, off)
                last_b = off
                chars[off] = last_c
            yield [(chars[a], chars[b]) if a >= 0 else (a, b) for a, b in spans]
        count += 1
        if pos == end:
            return
        pos = pos + _TO_BYTES(data, pos, 1) if pos == stop else stop


def iter_matches(
    pattern: Any, text: str, limit: int, group: int = 0
) -> Iterator[tuple[int, int, str]]:
    """(start, end, text of `group`) of the first `limit` matches of a compiled RE2 pattern.

    ASCII text is matched as bytes: same offsets, and the wrapper skips its per-match
    UTF-8 offset translation (about 3x cheaper on match-dense text); other text as its
    UTF-8 bytes, offsets translated here (no Match objects).
    """
    if not text.isascii():
        for spans in _utf8_spans(pattern, text, limit):
            (start, end), (gs, ge) = spans[0], spans[group]
            yield start, end, text[gs:ge] if gs >= 0 else ""
        return
    match = getattr(getattr(pattern, "_regexp", None), "Match", None)
    if match is None or _UNANCHORED is None:
        for spans in _ascii_spans(pattern, text.encode("ascii"), limit):
            (start, end), (gs, ge) = spans[0], spans[group]
            yield start, end, text[gs:ge] if gs >= 0 else ""
        return
    # `_ascii_spans` inlined (one generator, not two: this runs for every match)
    data = text.encode("ascii")
    pos, size, count = 0, len(data), 0
    while count < limit:
        spans = match(_UNANCHORED, data, pos, size)
        start, stop = spans[0]
        if stop < 0:
            return
        gs, ge = spans[group]
        yield start, stop, text[gs:ge] if gs >= 0 else ""
        count += 1
        if pos == size:
            return
        pos = pos + 1 if pos == stop else stop


def iter_spans(pattern: Any, text: str, limit: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the first `limit` matches (see `iter_matches`)."""
    if not text.isascii():
        for spans in _utf8_spans(pattern, text, limit):
            yield spans[0]
        return
    match = getattr(getattr(pattern, "_regexp", None), "Match", None)
    if match is None or _UNANCHORED is None:
        for spans in _ascii_spans(pattern, text.encode("ascii"), limit):
            yield spans[0]
        return
    data = text.encode("ascii")  # `_ascii_spans` inlined, as in `iter_matches`
    pos, size, count = 0, len(data), 0
    while count < limit:
        spans = match(_UNANCHORED, data, pos, size)
        stop = spans[0][1]
        if stop < 0:
            return
        yield spans[0]
        count += 1
        if pos == size:
            return
        pos = pos + 1 if pos == stop else stop


def search(pattern: Any, text: str, pos: int = 0, endpos: int | None = None) -> bool:
    """Whether `pattern` matches in text[pos:endpos] (the wrapper's ``search(text, pos,
    endpos) is not None``); ASCII text straight from the RE2 object, no Match object."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None or _UNANCHORED is None or not text.isascii():
        return pattern.search(text, pos, endpos) is not None
    size = len(text)
    pos = max(0, min(pos, size))
    endpos = size if endpos is None else max(0, min(endpos, size))
    if pos > endpos:
        return False
    return bool(regexp.Match(_UNANCHORED, text.encode("ascii"), pos, endpos)[0][1] >= 0)


class PatternSet:
    """Several named patterns searched in one RE2 pass."""

    def __init__(self, patterns: Sequence[tuple[str, str]], case_sensitive: bool = False) -> None:
        self.ids = [pid for pid, _ in patterns]
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("duplicate pattern ids in one PatternSet")
        self._compiled = [compile_pattern(p, case_sensitive) for _, p in patterns]
        self._set = re2.Set.SearchSet(_options(case_sensitive))
        for pid, pattern in patterns:
            if self._set.Add(pattern) < 0:
                raise ValueError(f"invalid RE2 pattern {pid!r}: {pattern!r}")
        self._set.Compile()

    def __len__(self) -> int:
        return len(self.ids)

    def matching(self, text: str) -> list[int]:
        """Indices of the patterns that match anywhere in `text` (one pass)."""
        if not self.ids or not text:
            return []
        return sorted(self._set.Match(text) or ())  # re2.Set.Match gives None on no match

    def compiled(self, idx: int) -> Any:
        """The compiled RE2 pattern at index `idx` (for callers that need spans themselves)."""
        return self._compiled[idx]

    def finditer(self, text: str) -> Iterator[Match]:
        """All non-overlapping matches of every pattern that matches, by pattern order."""
        for idx in self.matching(text):
            pid = self.ids[idx]
            for m in self._compiled[idx].finditer(text):
                yield Match(pid, m.start(), m.end(), m.group(0), tuple(m.groups()))


def release_memory() -> None:
    """Give the heap pages freed after compiling back to the OS (glibc ``malloc_trim``).

    Compiling a large RE2 program allocates a parse tree several times the size of the
    program and frees it again; glibc keeps those pages, so without a trim the process
    RSS stays tens of MiB above what the programs use. A no-op without glibc.
    """
    trim_heap()
