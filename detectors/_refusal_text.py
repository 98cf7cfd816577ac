"""The refusal detector's text analysis (:mod:`detectors.refusal`).

:class:`_RefusalText`, the detector's methods that read the response's sentences and
clauses: where the lead sentences end, whether a candidate is dropped (in a question,
inside quotes, right after a conditional, under a veto), and whether the response
declined instead of answering (the clause walk behind ``false_rejection``); and the
module-level helpers they use (:func:`_clauses`, :func:`_inside_quotes`).
"""

from __future__ import annotations

from collections.abc import Iterator

from detectors.regex import PatternSet, compile_pattern, iter_spans, search

__all__ = ["_RefusalText", "_clauses", "_inside_quotes"]

_LEAD_MAX_CHARS = 1000  # the "first sentences" never reach further than this
_MAX_SENTENCES = 64  # clauses walked to decide whether a response declined
_CONTEXT = 400  # chars looked at around a candidate to find its sentence
# ends a sentence: terminal punctuation (plus closing quotes/brackets) then space, or a newline
_BOUNDARY = compile_pattern("[.!?]+[\"'\u201d\u2019)\\]]*(?:\\s+|$)|\n+")
# ends a clause for the "declined" walk: a sentence end, or "; " / ", but" / ", however,"
_CLAUSE = compile_pattern(
    "[.!?]+[\"'\u201d\u2019)\\]]*(?:\\s+|$)|\n+|;\\s+|,?\\s+but\\s+|,\\s+however,?\\s+"
)
# what an answer carries and a refusal does not: citation markers, code, figures
_GROUNDED = compile_pattern(
    r"\[(?:\^|doc|source|src|ref|s)?\s?\d{1,3}(?:\s*[,\x{2013}-]\s*\d{1,3})*\]|`[^`\n]+`"
    r"|[$\x{20ac}\x{a3}\x{a5}]\s?\d|\d\s?%|\d[.,]\d|\b\d+\s*(?:million|billion|thousand"
    r"|percent|bps|basis\s+points|[kmgt]b|ms|seconds?|minutes?|hours?|days?|weeks?)\b"
)
_LSQ, _RSQ, _LDQ, _RDQ = "\u2018", "\u2019", "\u201c", "\u201d"  # typographic quotes
_CONDITIONALS = {"if", "when", "whenever", "unless", "whether", "why", "once", "until", "in case"}


class _RefusalText:
    """Text analysis of :class:`detectors.refusal.RefusalDetector`, which sets these."""

    lead_sentences: int
    short_chars: int
    answer_chars: int
    _category: dict[str, str]
    _sets: dict[str, PatternSet]
    _veto: PatternSet

    def _lead_end(self, text: str) -> int:
        if len(text) <= self.short_chars:
            return len(text)
        end, seen = min(len(text), _LEAD_MAX_CHARS), 0
        for m_start, m_end in iter_spans(_BOUNDARY, text[:_LEAD_MAX_CHARS], _LEAD_MAX_CHARS):
            if m_start == 0:
                continue
            seen += 1
            if seen >= self.lead_sentences:
                end = m_end
                break
        return max(end, self.short_chars)

    @staticmethod
    def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
        """Bounds of the sentence holding [start, end), looking at most _CONTEXT chars around."""
        lo = max(0, start - _CONTEXT)
        s = lo
        for _m_start, m_end in iter_spans(_BOUNDARY, text[lo:start], _CONTEXT + 1):
            s = lo + m_end
        tail = next(iter_spans(_BOUNDARY, text[end : end + _CONTEXT], 1), None)
        return s, (end + tail[1] if tail else min(len(text), end + _CONTEXT))

    def _rejected(self, text: str, start: int, end: int) -> bool:
        s, e = self._sentence(text, start, end)
        if text[s:e].rstrip().endswith("?"):
            return True
        prefix = text[s:start]
        words = prefix.lower().replace(",", " ").split()
        if words and (words[-1] in _CONDITIONALS or " ".join(words[-2:]) in _CONDITIONALS):
            return True
        if _inside_quotes(text[text.rfind("\n", 0, start) + 1 : start], prefix):
            return True
        return any(s + v.start < end and s + v.end > start for v in self._veto.finditer(text[s:e]))

    def _decline_kind(self, text: str, start: int, end: int) -> str | None:
        """What the clause text[start:end] declines with: "training_cutoff_excuse" when it
        holds a surviving cutoff phrase, else "refusal" when it holds a refusal, else None."""
        sentence, kind = text[start:end], None
        for pset in self._sets.values():
            for idx in pset.matching(sentence):
                cat = self._category[pset.ids[idx]]
                if kind in (cat, "training_cutoff_excuse"):
                    continue
                for a, b in iter_spans(pset.compiled(idx), sentence, 4):
                    if not self._rejected(text, start + a, start + b):
                        kind = cat
                        break
        return kind

    def declined(self, text: str) -> bool:
        """Whether the response declines instead of answering (see the module docstring)."""
        first: int | None = None
        refused, substance = False, 0
        for n, (s, e) in enumerate(_clauses(text)):
            kind = self._decline_kind(text, s, e)
            if kind:
                first = n if first is None else first
                refused = refused or kind == "refusal"
            elif search(_GROUNDED, text, s, e):
                return False
            elif not text[s:e].rstrip().endswith("?"):
                substance += len(" ".join(text[s:e].split()))
            if first is None and n + 1 >= self.lead_sentences:
                return False
        return first is not None and (refused or substance <= self.answer_chars)


def _clauses(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the non-blank clauses; past _MAX_SENTENCES the rest is one span."""
    start = 0
    for _, end in iter_spans(_CLAUSE, text, _MAX_SENTENCES):
        if text[start:end].strip():
            yield start, end
        start = end
    if text[start:].strip():
        yield start, len(text)


def _inside_quotes(paragraph: str, prefix: str) -> bool:
    """Whether a quotation is still open at a match: double / typographic quotes and
    back-ticks counted over the paragraph before it, single quotes over its sentence."""
    if paragraph.count('"') % 2 or paragraph.count("`") % 2:
        return True
    if paragraph.count(_LDQ) > paragraph.count(_RDQ) or paragraph.count("«") > paragraph.count("»"):
        return True
    # single quotes double as apostrophes: count only those at word edges
    opened = closed = 0
    for i, c in enumerate(prefix):
        if c not in ("'", _LSQ, _RSQ):
            continue
        before = prefix[i - 1] if i else " "
        after = prefix[i + 1] if i + 1 < len(prefix) else " "
        if c != _RSQ and before in " ([:\t\n":
            opened += 1
        elif c != _LSQ and before not in " ([:\t\n" and not after.isalnum():
            closed += 1
    return opened > closed
