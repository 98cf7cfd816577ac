"""Reading a response for the citation metrics: sentences, citation markers, factual sentences.

Sentences are split at ``.``/``!``/``?`` followed by white space and at line breaks; a
citation marker right after a sentence end (``... record. [1]``) belongs to that
sentence. Fenced code blocks are not sentences. Markers are bracket groups as the
`citations` detector reads them (``[1]``, ``[1, 2]``, ``[1-3]``, ``[^1]``, ``[doc-7]``),
not markdown links or text inside code. A sentence is *factual* when it has at least 4
words, is not a question, and contains a digit, inline code, an identifier-like token
(``/``, ``_``, ``a.b``) or a capitalised word after its first word (a name).

A response *states facts* (:func:`states_facts`: a judge that finds no factual claim in
it has failed) when, outside fenced code and not counting questions, it has a sentence of
at least 4 words with a digit, inline code or an identifier-like token, or at least
:data:`SUBSTANTIVE_WORDS` words in all. Acknowledgements ("Sure, happy to help."),
short refusals and offers of help do not.

Matching runs on RE2 (linear time) and reads at most 500 markers and 300 sentence ends.
Limits: abbreviations (``e.g. x``) end a sentence; a capitalised common word after the
first one (``the SPF record``) makes a sentence factual, which is usually right.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from detectors.citations import normalize_marker
from detectors.lexical import code_regions, fenced_blocks
from detectors.regex import compile_pattern, iter_matches, iter_spans

__all__ = [
    "Marker",
    "find_markers",
    "is_factual",
    "looks_like_citation",
    "sentences",
    "states_facts",
    "strip_markers",
]

MAX_SENTENCES = 300
#: words (in sentences that are not questions) from which a response states facts
SUBSTANTIVE_WORDS = 20
_KEY = r"\^?[A-Za-z0-9][A-Za-z0-9_.:\-]{0,40}"
_MARKER = compile_pattern(rf"\[\s*({_KEY}(?:\s*[,;]\s*{_KEY}){{0,20}})\s*\]")
_BOUNDARY = compile_pattern(r"[.!?]+[\"')]*\s+|\n")
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(frozen=True)
class Marker:
    start: int
    end: int
    keys: tuple[str, ...]  # normalised (`normalize_marker`)
    footnote: bool


def find_markers(text: str, limit: int = 500) -> list[Marker]:
    """Citation-like bracket groups of `text`, outside code and markdown links."""
    if "[" not in text:
        return []
    regions = code_regions(text)
    starts = [s for s, _ in regions]
    found = []
    for start, end, inner in iter_matches(_MARKER, text, limit, 1):
        if end < len(text) and text[end] == "(":
            continue  # a markdown link [text](url)
        i = bisect_right(starts, start) - 1
        if i >= 0 and start < regions[i][1]:
            continue  # inside code
        raw = [k.strip() for k in inner.replace(";", ",").split(",")]
        keys = [key for k in raw for key in _expand(normalize_marker(k))]
        found.append(Marker(start, end, tuple(keys), raw[0][0] == "^"))
    return found


def _expand(key: str) -> list[str]:
    """``1-3`` -> 1, 2, 3 (up to 50 keys); anything else as is."""
    lo, sep, hi = key.replace("\u2013", "-").partition("-")
    if sep and lo.isdigit() and hi.isdigit() and 0 <= int(hi) - int(lo) < 50:
        return [str(i) for i in range(int(lo), int(hi) + 1)]
    return [key]


def looks_like_citation(text: str, marker: Marker, declared: set[str]) -> bool:
    if marker.footnote or any(k in declared for k in marker.keys):
        return True
    prev = text[marker.start - 1] if marker.start else " "
    return prev not in _IDENT and all(any(c.isdigit() for c in k) for k in marker.keys)


def sentences(text: str, markers: list[Marker]) -> list[tuple[int, int]]:
    """(start, end) of the sentences of `text`; markers after a sentence end join it."""
    for body_start, body_end, _ in fenced_blocks(text):  # blank the fences too
        start = text.rfind("\n", 0, max(body_start - 1, 0)) + 1
        end = text.find("\n", body_end)
        end = len(text) if end < 0 else end
        text = text[:start] + " " * (end - start) + text[end:]
    spans: list[tuple[int, int]] = []
    pos = 0
    cuts = [e for _, e in iter_spans(_BOUNDARY, text, MAX_SENTENCES)] + [len(text)]
    starts = {m.start: m.end for m in markers}
    for cut in cuts:
        s, e = pos, cut
        while s < e and text[s].isspace():
            s += 1
        while s in starts and spans:  # leading marker: it cites the previous sentence
            prev_start, _ = spans[-1]
            spans[-1] = (prev_start, starts[s])
            s = starts[s]
            while s < e and text[s].isspace():
                s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        pos = max(cut, pos)
    return spans


def strip_markers(text: str, start: int, end: int, markers: list[Marker]) -> str:
    parts, pos = [], start
    for m in markers:
        if start <= m.start and m.end <= end:
            parts.append(text[pos : m.start])
            pos = m.end
    parts.append(text[pos:end])
    return " ".join("".join(parts).split())


def is_factual(sentence: str) -> bool:
    """A sentence states a checkable fact (see the module docstring); markers stripped."""
    words = sentence.split()
    if len(words) < 4 or sentence.rstrip().endswith("?"):
        return False
    if any(c.isdigit() for c in sentence) or "`" in sentence:
        return True
    for i, word in enumerate(words):
        core = word.strip(".,;:!?\"'()[]")
        if "/" in core or "_" in core or ("." in core and core.replace(".", "").isalnum()):
            return True
        if i > 0 and core[:1].isupper() and core != "I":
            return True
    return False


def _anchored(sentence: str) -> bool:
    """At least 4 words and a digit, inline code or an identifier-like token (``/``,
    ``_``, ``a.b``); unlike :func:`is_factual`, a capitalised word alone (a greeting's
    brand name) does not count."""
    words = sentence.split()
    if len(words) < 4:
        return False
    if any(c.isdigit() for c in sentence) or "`" in sentence:
        return True
    for word in words:
        core = word.strip(".,;:!?\"'()[]")
        if "/" in core or "_" in core or ("." in core and core.replace(".", "").isalnum()):
            return True
    return False


def states_facts(text: str) -> bool:
    """True when `text` (a response) states facts, so an empty claim list for it is a
    judge failure, not "no factual claims" (see the module docstring)."""
    markers = find_markers(text)
    total = 0
    for start, end in sentences(text, markers):
        sentence = strip_markers(text, start, end, markers)
        if sentence.rstrip().endswith("?"):
            continue
        if _anchored(sentence):
            return True
        total += len(sentence.split())
    return total >= SUBSTANTIVE_WORDS
