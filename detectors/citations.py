"""Citation validity: markers in the response against `citations` and retrieved chunks.

A marker is a bracket group such as ``[1]``, ``[2, 3]``, ``[1-3]``, ``[doc-7]`` or the
footnote form ``[^1]``. Categories (failure mode ``invalid_citation`` unless noted):

- ``dangling_marker``: a marker key in the response with no entry in `citations`
  (``citation.marker`` may be written ``[1]``, ``1`` or ``^1``); one hit per key.
- ``unknown_source``: a citation whose `source_id` is missing or not the id of any
  retrieved chunk (skipped when the event carries no `retrieved_context`).
- ``no_use_citation``: a citation pointing at a chunk whose policy is `no_use`.
- ``uncited_citation`` (failure mode None, informational): a citation whose marker
  never appears in the response.

Not markers: markdown links ``[text](url)``, anything inside inline or fenced code,
indexing such as ``arr[1]`` / ``m[0][1]`` (a non-footnote group directly after an
identifier character, or after the ``]`` of such an index, unless its key is a
declared citation marker), and groups with no digit (``[x]``, ``[sic]``) unless
footnote-style or declared.

Limits: a bracketed interval like ``[1, 5]`` in prose reads as markers (groups with a
``0`` or a decimal key are skipped); ``word[1]`` with no declared marker ``1`` reads as
indexing; ranges ``[1-3]`` expand up to 50 keys; only the first ``max_markers`` (500)
bracket groups and 1000 inline code spans are read, so hostile text costs bounded time.
"""

from __future__ import annotations

import string
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache

from detectors.base import Detection, register_detector
from detectors.lexical import code_regions
from detectors.regex import compile_pattern, iter_spans
from detectors.scan import Detector, Scan
from stream.contract.events import Chunk, Event

__all__ = ["CitationDetector", "normalize_marker"]

FAILURE = "invalid_citation"
#: A marker is a match of ``\[\s*(KEY(?:\s*[,;]\s*KEY){0,20})\s*\]`` (RE2, case-insensitive)
#: with KEY = ``\^?[A-Za-z0-9][A-Za-z0-9_.:\-]{0,40}``. No ``[`` or ``]`` can occur inside
#: the brackets, so a match runs from a ``[`` to the first ``]`` after it, with no ``[`` in
#: between, and such candidates never overlap: :func:`_marker_matches` walks them with
#: ``str.find`` and checks each inner text with ``str`` methods (several times cheaper than
#: a regex pass on everyday text, and no UTF-8 offset translation on non-ASCII text). Text
#: with many bracket groups that are not markers is left to `_MARKER`, the pattern without
#: the bounds (a fraction of the program's size), whose matches are then bound-checked.
_SPACE = " \t\n\f\r"  # RE2's \s
_FOLDS = "\u017f\u212a"  # what case folding adds to [A-Za-z]: long s, Kelvin sign
_KEY_FIRST = frozenset("0123456789" + string.ascii_letters + _FOLDS)
_KEY_CHARS = "0123456789" + string.ascii_letters + _FOLDS + "_.:-"
_MAX_KEYS, _MAX_KEY_CHARS = 21, 41  # the bounds (a key's leading "^" aside)
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_]")
_MAX_RANGE = 50
_CACHED_CHARS = 64  # inner texts and citation markers up to this size are cached
_MAX_MISSES = 64  # bracket groups that are not markers before the pattern takes over
_KEY = r"\^?[A-Za-z0-9][A-Za-z0-9_.:\-]*"
_MARKER = compile_pattern(rf"\[\s*{_KEY}(?:\s*[,;]\s*{_KEY})*\s*\]")  # the bounds aside


def normalize_marker(marker: str) -> str:
    """``"[^1]"``, ``"[1]"``, ``"^1"`` and ``"1"`` all become ``"1"`` (lowercased)."""
    return marker.strip().strip("[]").strip().lstrip("^").strip().lower()


def _expand(key: str) -> list[str]:
    lo, sep, hi = key.replace("\u2013", "-").partition("-")
    if sep and lo.isdigit() and hi.isdigit() and 0 <= int(hi) - int(lo) < _MAX_RANGE:
        return [str(i) for i in range(int(lo), int(hi) + 1)]
    return [key]


def _numeric(keys: list[str]) -> bool:
    """An interval or a list of numbers rather than citations: [0, 1], [1.5, 2.5]."""
    return "0" in keys or any("." in k and k.replace(".", "", 1).isdigit() for k in keys)


@lru_cache(maxsize=1024)
def _parse(inner: str) -> tuple[tuple[str, ...], bool, bool]:
    """The normalised keys of a marker's inner text, whether it is footnote-style, and
    whether it reads as citations when undeclared (every key has a digit, not numeric).

    `inner` is the marker pattern's group: keys without whitespace or brackets joined by
    ``,`` / ``;`` and spaces, so :func:`normalize_marker` of a key is its lowercased
    form without a leading ``^``."""
    raw = [k.strip() for k in inner.replace(";", ",").split(",")]
    keys = [normalize_marker(k) for k in raw]
    digits = all(any(c.isdigit() for c in k) for k in keys)
    return tuple(keys), raw[0].startswith("^"), digits and not _numeric(keys)


def _valid(inner: str) -> bool:
    """Whether `inner` (a candidate's inner text, spaces stripped) is the marker pattern's
    group: at most 21 keys, each of at most 41 characters after a "^", joined by ``,`` /
    ``;`` and spaces. Linear: a few ``str`` passes."""
    keys = inner.replace(";", ",").split(",", _MAX_KEYS)
    if len(keys) > _MAX_KEYS:
        return False
    for key in keys:
        key = key.strip(_SPACE)
        if key[:1] == "^":
            key = key[1:]
        if not key or len(key) > _MAX_KEY_CHARS or key[0] not in _KEY_FIRST:
            return False
        if key.strip(_KEY_CHARS):  # a character outside the key class
            return False
    return True


_valid_cached = lru_cache(maxsize=1024)(_valid)


def _marker_matches(text: str, limit: int) -> Iterator[tuple[int, int, str]]:
    """(start, end, inner text) of the first `limit` markers in `text`, in order: for each
    ``]``, the last ``[`` before it (an earlier one has a ``[`` inside) when its inner
    text is valid. Linear: each ``find`` / ``rfind`` covers text no other one of its kind
    does. Past `_MAX_MISSES` groups that are not markers, the rest of the text is left to
    the `_MARKER` pattern (RE2: linear in C, whatever the text)."""
    pos = text.find("[")
    close = -1
    misses = 0
    while pos >= 0 and limit > 0:
        if close < pos:
            close = text.find("]", pos)
            if close < 0:
                return
        pos = text.rfind("[", pos, close)
        inner = text[pos + 1 : close].strip(_SPACE)
        if _valid_cached(inner) if len(inner) <= _CACHED_CHARS else _valid(inner):
            limit -= 1
            yield pos, close + 1, inner
        else:
            misses += 1
            if misses > _MAX_MISSES:
                yield from _pattern_matches(text, close + 1, limit)
                return
        pos = text.find("[", close + 1)


def _pattern_matches(text: str, begin: int, limit: int) -> Iterator[tuple[int, int, str]]:
    """`_marker_matches` of text[begin:] (offsets in `text`) by the `_MARKER` pattern: its
    matches within the bounds. No marker can start before `begin` and end after it."""
    rest = text[begin:]
    for start, end in iter_spans(_MARKER, rest, len(rest)):
        inner = rest[start + 1 : end - 1].strip(_SPACE)
        if len(inner) > _MAX_KEY_CHARS and not _valid(inner):
            continue
        if limit <= 0:
            return
        limit -= 1
        yield begin + start, begin + end, inner


def _inside(regions: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < regions[i][1]


def _citation_keys(marker: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A citation's `marker` as (every normalised key, the keys of its non-blank parts)."""
    parts = marker.split(",")
    norm = tuple(normalize_marker(k) for k in parts)
    return norm, tuple(n for k, n in zip(parts, norm, strict=True) if k.strip())


_citation_keys_cached = lru_cache(maxsize=1024)(_citation_keys)


def _policies(chunks: list[Chunk], sids: set[str]) -> dict[str, str]:
    """Policy of the last chunk whose stripped id is each of `sids` (those retrieved): the
    chunks are read from the end and only until every one is found."""
    found: dict[str, str] = {}
    for chunk in reversed(chunks):
        cid = chunk.id.strip()
        if cid in sids and cid not in found:
            found[cid] = chunk.policy
            if len(found) == len(sids):
                break
    return found


@register_detector("citations")
class CitationDetector(Detector):
    name = "citations"

    def __init__(self, *, max_markers: int = 500) -> None:
        self.max_markers = max_markers

    @property
    def categories(self) -> tuple[str, ...]:
        return ("dangling_marker", "unknown_source", "no_use_citation", "uncited_citation")

    def _markers(self, text: str, declared: set[str]) -> dict[str, tuple[int, int]]:
        """Marker key -> span of its first occurrence in `text`."""
        found: dict[str, tuple[int, int]] = {}
        if "[" not in text:
            return found
        regions = code_regions(text)
        starts = [s for s, _ in regions]
        skipped_end = -1
        size = len(text)
        for start, end, inner in _marker_matches(text, self.max_markers):
            if end < size and text[end] == "(":
                continue  # markdown link [text](url)
            if regions and _inside(regions, starts, start):
                continue
            keys, footnote, citation_like = _parse(inner)
            if not footnote and declared.isdisjoint(keys):
                prev = text[start - 1] if start else " "
                if prev in _IDENT_CHARS and (prev != "]" or skipped_end == start):
                    skipped_end = end  # indexing: arr[1], m[0][1]
                    continue
                if not citation_like:
                    continue
            span = (start, end)
            for key in keys:
                if key in found:
                    continue
                if key in declared:
                    found[key] = span
                else:
                    for one in _expand(key):
                        found.setdefault(one, span)
        return found

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        response = event.response
        citations = event.citations
        if not citations and "[" not in response:
            return []
        declared: set[str] = set()
        cited: list[tuple[tuple[str, ...], str]] = []  # per citation: non-blank keys, source
        for cit in citations:
            marker = cit.marker
            keys: tuple[str, ...] = ()
            if marker:
                if len(marker) <= _CACHED_CHARS:
                    norm, keys = _citation_keys_cached(marker)
                else:
                    norm, keys = _citation_keys(marker)
                declared.update(norm)
            cited.append((keys, (cit.source_id or "").strip()))
        markers = self._markers(response, declared)
        if not markers and not citations:
            return []
        name = self.name
        hits = [
            Detection(name, "dangling_marker", f"marker [{key[:40]}] has no citation entry",
                      first, FAILURE)
            for key, first in markers.items()
            if key not in declared
        ]  # fmt: skip
        if not citations:
            return hits
        retrieved = event.retrieved_context
        policies = _policies(retrieved, {sid for _, sid in cited})
        seen: set[tuple[str, str]] = set()
        for keys, sid in cited:
            span = None
            for key in keys:
                if key in markers:
                    span = markers[key]
                    break
            if keys and span is None:
                self._hit(hits, seen, "uncited_citation", ",".join(keys), keys, sid, None)
            if retrieved and sid not in policies:
                self._hit(hits, seen, "unknown_source", sid, keys, sid, span)
            elif policies.get(sid) == "no_use":
                self._hit(hits, seen, "no_use_citation", sid, keys, sid, span)
        return hits

    def _hit(
        self,
        hits: list[Detection],
        seen: set[tuple[str, str]],
        category: str,
        key: str,
        keys: tuple[str, ...],
        sid: str,
        span: tuple[int, int] | None,
    ) -> None:
        """Append the `category` finding for a citation (its marker `keys`, source `sid`),
        once per (category, key)."""
        if (category, key) in seen:
            return
        seen.add((category, key))
        label = f"[{', '.join(keys)[:40]}]" if keys else "(no marker)"
        if category == "uncited_citation":
            evidence, failure = f"citation {label} not in response", None
        elif category == "unknown_source":
            what = f"source {sid[:60]!r}" if sid else "no source_id"
            evidence, failure = f"citation {label}: {what} not retrieved", FAILURE
        else:
            evidence, failure = f"citation {label} cites no_use chunk {sid[:60]}", FAILURE
        hits.append(Detection(self.name, category, evidence[:160], span, failure))
