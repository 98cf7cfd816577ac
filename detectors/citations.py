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

from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache

from detectors.base import Detection, register_detector
from detectors.lexical import code_regions
from detectors.regex import compile_pattern, iter_spans
from stream.contract.events import Event

__all__ = ["CitationDetector", "normalize_marker"]

FAILURE = "invalid_citation"
#: A marker: ``\[\s*(KEY(?:\s*[,;]\s*KEY){0,20})\s*\]`` with
#: KEY = ``\^?[A-Za-z0-9][A-Za-z0-9_.:\-]{0,40}``, found as `_MARKER`'s matches that keep
#: the two bounds (:func:`_bounded`): the unbounded program is a fraction of the size and
#: about half the cost per search. Neither form lets a ``[`` or ``]`` inside the brackets,
#: so a group's match (from its ``[`` to the first ``]``) is the same in both, and a group
#: that breaks a bound hides no marker.
_KEY = r"\^?[A-Za-z0-9][A-Za-z0-9_.:\-]*"
_MARKER = compile_pattern(rf"\[\s*{_KEY}(?:\s*[,;]\s*{_KEY})*\s*\]")
_SPACE = " \t\n\f\r"  # RE2's \s
_MAX_KEYS, _MAX_KEY_CHARS = 21, 41  # the bounds (a key's leading "^" aside)
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_]")
_MAX_RANGE = 50


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


def _bounded(inner: str) -> bool:
    """Whether the inner text of a `_MARKER` match (spaces stripped) keeps the bounds:
    at most 21 keys of at most 41 characters after a "^"."""
    keys = inner.replace(";", ",").split(",")
    if len(keys) > _MAX_KEYS:
        return False
    for key in keys:
        key = key.strip(_SPACE)
        if len(key) - key.startswith("^") > _MAX_KEY_CHARS:
            return False
    return True


def _marker_matches(text: str, limit: int) -> Iterator[tuple[int, int, str]]:
    """(start, end, inner text) of the first `limit` markers in `text`: the `_MARKER`
    matches within the bounds (each holds at least three characters: linear)."""
    for start, end in iter_spans(_MARKER, text, len(text)):
        inner = text[start + 1 : end - 1].strip(_SPACE)
        if len(inner) > _MAX_KEY_CHARS and not _bounded(inner):
            continue
        if limit <= 0:
            return
        limit -= 1
        yield start, end, inner


def _inside(regions: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < regions[i][1]


@register_detector("citations")
class CitationDetector:
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
            for key in keys:
                if key in declared:
                    found.setdefault(key, (start, end))
                else:
                    for one in _expand(key):
                        found.setdefault(one, (start, end))
        return found

    def __call__(self, event: Event) -> list[Detection]:
        response = event.response
        if not event.citations and "[" not in response:
            return []
        declared: set[str] = set()
        cited: list[list[str]] = []  # per citation: its normalised non-blank marker keys
        for cit in event.citations:
            if cit.marker:
                parts = cit.marker.split(",")
                norm = [normalize_marker(k) for k in parts]
                declared.update(norm)
                cited.append([n for k, n in zip(parts, norm, strict=True) if k.strip()])
            else:
                cited.append([])
        markers = self._markers(response, declared)
        if not markers and not event.citations:
            return []
        hits: list[Detection] = []
        seen: set[tuple[str, str]] = set()

        def hit(category: str, key: str, evidence: str, span: tuple[int, int] | None) -> None:
            if (category, key) not in seen:
                seen.add((category, key))
                failure = None if category == "uncited_citation" else FAILURE
                hits.append(Detection(self.name, category, evidence[:160], span, failure))

        for key, first in markers.items():
            if key not in declared:
                hit("dangling_marker", key, f"marker [{key[:40]}] has no citation entry", first)
        policies = {c.id.strip(): c.policy for c in event.retrieved_context}
        for cit, keys in zip(event.citations, cited, strict=True):
            span = next((markers[k] for k in keys if k in markers), None)
            label = f"[{', '.join(keys)[:40]}]" if keys else "(no marker)"
            if keys and span is None:
                hit("uncited_citation", ",".join(keys), f"citation {label} not in response", None)
            sid = (cit.source_id or "").strip()
            if policies and sid not in policies:
                what = f"source {sid[:60]!r}" if sid else "no source_id"
                hit("unknown_source", sid, f"citation {label}: {what} not retrieved", span)
            elif policies.get(sid) == "no_use":
                hit("no_use_citation", sid, f"citation {label} cites no_use chunk {sid[:60]}", span)
        return hits
