"""What :mod:`detectors.source_policy` counts as quoted, or as reported speech.

Single-quoted spans blanked when they are a verbatim run of a `quote_only` chunk, the
clauses after attribution cues (reported speech), and the crude stemming and content-word
helpers that compare such a clause with a chunk.
"""

from __future__ import annotations

from detectors.lexical import BARRIER, words
from detectors.regex import compile_pattern, iter_matches

__all__ = [
    "MAX_CUES",
    "MAX_QUOTES",
    "_blank_verbatim_single_quotes",
    "_content",
    "_in_chunk",
    "_may_open_quote",
    "_reported_clauses",
    "_stem",
]

MAX_CUES = 50  # attribution cues examined per response (bounded time on hostile text)
MAX_QUOTES = 200  # single-quoted spans examined per response

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
