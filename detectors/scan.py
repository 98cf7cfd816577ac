"""The one detector contract, and one shared scan of each text for every detector's patterns.

Every detector subclasses :class:`Detector`: it *declares* its patterns
(:class:`PatternSpec`: id, RE2 regex, text fields, case sensitivity; a detector that
needs none declares none) and implements ``detect(event, scan)``. The pipeline builds one
:class:`Scanner` over all enabled detectors: per text field, ONE ``re2.Set`` holds every
declared pattern, so each text is screened in a single linear pass however many detectors
look at it. Per event,
``scanner.scan()`` gives a :class:`Scan`; a detector asks it which of *its* patterns
match a text (``scan.matching(self, field, text)``: the text is screened on first use
and the answer cached for the rest of the event) and for the spans of those only
(``scan.spans``). Called on its own, ``detector(event)`` scans with a scanner over its
own patterns: the same answers, since a set reports each pattern independently.

``PatternSpec.prefilter``: a very large pattern (the policy packs splice their
``defs`` into patterns of up to ~30,000 characters) stays out of the one-pass set,
whose DFA would cost tens of MiB; it is screened by its required literals instead
(RE2's FilteredRE2) and confirmed by its own RE2 program, which also gives its spans.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import re2

from detectors.detection import Detection
from detectors.regex import (
    compile_pattern,
    iter_spans,
    release_memory,
    set_options,
    wrap_filtered,
)
from stream.contract.events import Event

__all__ = ["FIELDS", "Detector", "PatternDetector", "PatternSpec", "Scan", "Scanner", "TextField"]

TextField = Literal["response", "query", "history", "context", "case", "citations"]
FIELDS: tuple[TextField, ...] = ("response", "query", "history", "context", "case", "citations")


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """A declared pattern: `id` is unique within its detector."""

    id: str
    regex: str
    fields: tuple[TextField, ...] = ("response",)
    case_sensitive: bool = False
    prefilter: bool = False  # screened by required literals, not in the one-pass set


class Detector:
    """The one detector contract: `name`, `categories` (the bounded `category` label values),
    `patterns` (declared RE2 patterns, possibly none) and `detect(event, scan)`, which gets
    the event and the shared scan's answers for its own patterns. Calling a detector,
    ``detector(event)``, scans with a scanner over its own patterns."""

    name: ClassVar[str] = ""
    patterns: Sequence[PatternSpec] = ()
    _own: Scanner | None = None

    @property
    def categories(self) -> tuple[str, ...]:
        raise NotImplementedError

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        raise NotImplementedError

    def precompiled(self, pattern_id: str) -> Any:
        """The RE2 program this detector already holds for its declared pattern
        `pattern_id` (compiled by `compile_pattern` from the same regex and case
        sensitivity), or None: the scan then compiles its own. Sharing it keeps one
        program, and one lazy DFA cache, per pattern instead of two."""
        return None

    def __call__(self, event: Event) -> list[Detection]:
        return self.detect(event, self._scanner().scan())

    def _scanner(self) -> Scanner:
        """A scanner over this detector's own patterns (built on first use)."""
        if self._own is None:
            self._own = Scanner([self])
        return self._own


#: the contract's former name (kept for plugins; use :class:`Detector`)
PatternDetector = Detector


class _FieldSet:
    """The one-pass set and the prefilter of one text field."""

    def __init__(self, entries: list[tuple[int, PatternSpec]]) -> None:
        self.set_ids = [g for g, s in entries if not s.prefilter]
        self.filter_ids = [g for g, s in entries if s.prefilter]
        self._set: Any = None
        if self.set_ids:
            self._set = re2._re2.Set(re2._Anchor.UNANCHORED, set_options())
            for _, spec in (e for e in entries if not e[1].prefilter):
                regex = spec.regex if spec.case_sensitive else f"(?i:{spec.regex})"
                if self._set.Add(regex.encode()) < 0:
                    raise ValueError(f"invalid RE2 pattern {spec.id!r}: {spec.regex[:80]!r}")
            self._set.Compile()
        self._filter: Any = None
        self.filtered: dict[int, Any] = {}
        if self.filter_ids:
            self._filter = re2._re2.Filter()
            specs = [s for _, s in entries if s.prefilter]
            for spec in specs:
                if self._filter.Add(spec.regex.encode(), set_options(spec.case_sensitive)) < 0:
                    raise ValueError(f"invalid RE2 pattern {spec.id!r}: {spec.regex[:80]!r}")
            self._filter.Compile()
            for i, (gid, spec) in enumerate(zip(self.filter_ids, specs, strict=True)):
                self.filtered[gid] = wrap_filtered(
                    spec.regex, self._filter.GetRE2(i), spec.case_sensitive
                )

    def match(self, text: str) -> list[int]:
        """Global ids of the patterns that match `text`, sorted."""
        found: list[int] = []
        data = text.encode()
        if self._set is not None:
            found += [self.set_ids[i] for i in self._set.Match(data)]
        if self._filter is not None:
            found += [self.filter_ids[i] for i in self._filter.Match(data, False)]
        found.sort()
        return found


class Scanner:
    """Every declared pattern of `detectors`, one matcher per text field."""

    def __init__(self, detectors: Iterable[object]) -> None:
        self._declarer: list[Detector] = []  # global id -> the declaring detector
        self._local: list[str] = []  # global id -> the detector's own pattern id
        self._compiled: dict[int, Any] = {}
        self._spec: list[PatternSpec] = []
        by_field: dict[str, list[tuple[int, PatternSpec]]] = {f: [] for f in FIELDS}
        self.detectors: list[Detector] = []
        for det in detectors:
            if not isinstance(det, Detector):
                raise TypeError(f"{det!r} is not a detectors.Detector")
            self.detectors.append(det)
            seen: set[str] = set()
            for spec in det.patterns:
                if spec.id in seen:
                    raise ValueError(f"detector {det.name!r}: duplicate pattern id {spec.id!r}")
                seen.add(spec.id)
                gid = len(self._spec)
                self._spec.append(spec)
                self._declarer.append(det)
                self._local.append(spec.id)
                for field in spec.fields:
                    by_field[field].append((gid, spec))
        self._fields = {f: _FieldSet(e) for f, e in by_field.items() if e}
        for fs in self._fields.values():
            self._compiled.update(fs.filtered)
        self._by_local = {
            (id(d), pid): g
            for g, (d, pid) in enumerate(zip(self._declarer, self._local, strict=True))
        }
        self._members = {id(d) for d in self.detectors}
        release_memory()  # the compile's parse trees are freed: hand their pages back

    def scan(self) -> Scan:
        """A fresh per-event cache of screening results."""
        return Scan(self)

    def run(self, detector: Detector, event: Event, scan: Scan) -> list[Detection]:
        """One detector on one event: a member of this scanner gets `scan`; a detector that
        was not given to the scanner scans with its own."""
        if id(detector) in self._members:
            return detector.detect(event, scan)
        return detector(event)

    def compiled(self, gid: int) -> Any:
        got = self._compiled.get(gid)
        if got is None:
            spec = self._spec[gid]
            got = self._declarer[gid].precompiled(self._local[gid])
            if got is None:
                got = compile_pattern(spec.regex, spec.case_sensitive)
                release_memory()  # once per pattern: its compile garbage is not kept
            self._compiled[gid] = got
        return got


class Scan:
    """Screening results for one event: each (field, text) is scanned at most once."""

    __slots__ = ("_cache", "_scanner")

    def __init__(self, scanner: Scanner) -> None:
        self._scanner = scanner
        self._cache: dict[tuple[str, str], list[int]] = {}

    def _global(self, field: str, text: str) -> list[int]:
        key = (field, text)
        got = self._cache.get(key)
        if got is None:
            fs = self._scanner._fields.get(field)
            got = self._cache[key] = fs.match(text) if fs is not None and text else []
        return got

    def matching(self, detector: object, field: TextField, text: str) -> list[str]:
        """`detector`'s pattern ids that match anywhere in `text`, in declaration order."""
        sc = self._scanner
        return [sc._local[g] for g in self._global(field, text) if sc._declarer[g] is detector]

    def compiled(self, detector: object, pattern_id: str) -> Any:
        """The compiled RE2 pattern of one declared pattern (for spans with groups)."""
        return self._scanner.compiled(self._scanner._by_local[(id(detector), pattern_id)])

    def spans(
        self, detector: object, pattern_id: str, text: str, limit: int
    ) -> Iterator[tuple[int, int]]:
        """(start, end) of the first `limit` matches of one declared pattern in `text`."""
        return iter_spans(self.compiled(detector, pattern_id), text, limit)
