"""Small text helpers shared by the lexical detectors: words, n-grams, quotes, code.

Everything here is linear in the input and uses only ``str`` methods (split, find,
translate) or RE2, never Python's ``re``. Words are normalised by mapping
punctuation to spaces and lowercasing. Functions that blank regions keep the text
length, so character offsets still index the original text.
"""

from __future__ import annotations

import string

from detectors.regex import compile_pattern, iter_matches

__all__ = [
    "BARRIER",
    "blank_quoted",
    "code_regions",
    "fenced_blocks",
    "ngram_keys",
    "word_span",
    "words",
]

#: Stands in for removed text so that n-grams do not bridge over it.
BARRIER = "\ue000"

_UNI_PUNCT = "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00ab\u00bb\u2010\u2011\u2012\u2013"
_UNI_PUNCT += "\u2014\u2015\u2026\u00b7\u2022\u00a1\u00bf\u00a0"
_TABLE = str.maketrans(string.punctuation, " " * len(string.punctuation))
_BYTES_TABLE = bytes.maketrans(string.punctuation.encode(), b" " * len(string.punctuation))
#: punctuation to spaces and A-Z to a-z, for ASCII text as bytes (see `words`)
_WORDS_TABLE = _BYTES_TABLE.translate(
    bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
)
_OPEN_CLOSE = "\u201c\u201d\u201e\u00ab\u00bb"

_INLINE_CODE = compile_pattern(r"`[^`\n]+`")


def _depunct(text: str) -> str:
    """Punctuation to spaces, one char to one char (offsets are kept).

    ``str.translate`` is fast only on ASCII text; otherwise translate the UTF-8 bytes
    (ASCII punctuation) and replace the few non-ASCII marks one by one.
    """
    if text.isascii():
        return text.translate(_TABLE)
    out = (
        text.encode("utf-8", "surrogatepass")
        .translate(_BYTES_TABLE)
        .decode("utf-8", "surrogatepass")
    )
    for mark in _UNI_PUNCT:
        if mark in out:
            out = out.replace(mark, " ")
    return out


def words(text: str) -> list[str]:
    """Lowercased words of `text`, punctuation removed.

    ASCII text (also text whose only non-ASCII characters are the marks of
    ``_UNI_PUNCT``, once those are spaces) in one ``bytes.translate`` that maps
    punctuation to spaces and upper case to lower: what ``str.lower`` does to ASCII.
    """
    if not text.isascii():
        for mark in _UNI_PUNCT:
            if mark in text:
                text = text.replace(mark, " ")
        if not text.isascii():
            return _depunct(text).lower().split()
    return text.encode("ascii").translate(_WORDS_TABLE).decode("ascii").split()


def word_span(text: str, first: int, last: int) -> tuple[int, int]:
    """Character span in `text` from the start of word `first` to the end of word `last`.

    Word indices are those of :func:`words`; linear, in C (``str.split`` with maxsplit).
    """
    plain = _depunct(text)
    rest = plain.split(None, last)
    if len(rest) <= last:
        return len(text), len(text)
    end = len(plain) - len(rest[last]) + len(rest[last].split(None, 1)[0])
    head = plain.split(None, first)
    start = len(plain) - len(head[first]) if len(head) > first else end
    return start, end


def ngram_keys(seq: list[str], n: int) -> list[str]:
    """Word n-grams of `seq` in order, each as one space-joined string (hashes are cached)."""
    if n <= 0 or len(seq) < n:
        return []
    return list(map(" ".join, zip(*(seq[i:] for i in range(n)), strict=False)))


def _blank(size: int) -> str:
    return BARRIER + " " * (size - 1) if size > 0 else ""


def _blank_straight(par: str) -> str:
    parts = par.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unmatched
        parts[-2:] = [parts[-2] + '"' + parts[-1]]
    parts[1::2] = map(_blank, map(len, parts[1::2]))
    return '"'.join(parts)


def _blank_line(part: str) -> str:
    j = part.find("\n")
    if j < 0:
        j = len(part)
    return _blank(j) + part[j:]


def blank_quoted(text: str) -> str:
    """`text` with quoted content blanked (same length): "…", “…”, «…», '>' lines.

    Quotation marks pair within a paragraph (no blank line inside), in order, whatever
    their direction; an unmatched last mark is ignored. Blanked content starts with
    :data:`BARRIER`. The result has the quotation marks as plain ``"``: it is for
    :func:`words` and offsets, not for display.
    """
    if ">" in text:
        parts = ("\n" + text).split("\n>")
        parts[1:] = map(_blank_line, parts[1:])
        text = "\n>".join(parts)[1:]
    for mark in _OPEN_CLOSE:
        if mark in text:
            text = text.replace(mark, '"')
    if '"' not in text:
        return text
    pars = text.split("\n\n")
    pars = [_blank_straight(p) if '"' in p else p for p in pars]
    return "\n\n".join(pars)


def fenced_blocks(text: str) -> list[tuple[int, int, str]]:
    """Fenced code blocks as (body_start, body_end, language); unclosed runs to the end."""
    if "```" not in text:
        return []
    fences: list[tuple[int, int, str]] = []  # (line_start, line_end, info string)
    pos = text.find("```")
    while pos >= 0:
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", pos)
        if line_end < 0:
            line_end = len(text)
        if not text[line_start:pos].strip(" \t"):
            fences.append((line_start, line_end, text[pos:line_end].strip("`").strip().lower()))
        pos = text.find("```", line_end)
    blocks: list[tuple[int, int, str]] = []
    opened: tuple[int, int, str] | None = None
    for fence in fences:
        if opened is None:
            opened = fence
        elif not fence[2]:
            blocks.append((min(opened[1] + 1, fence[0]), fence[0], opened[2].split(" ")[0]))
            opened = None
    if opened is not None:
        blocks.append((min(opened[1] + 1, len(text)), len(text), opened[2].split(" ")[0]))
    return blocks


#: above this many backticks `inline_code` leaves the text to the RE2 pattern: a Python
#: step per backtick costs 20-40x its single pass on hostile text ("``" * 50,000)
MAX_BACKTICKS = 2000


def inline_code(text: str, limit: int = 1000) -> list[tuple[int, int]]:
    """(start, end) of the first `limit` inline `code` spans (matches of ``_INLINE_CODE``),
    in order: a backtick pairs with the next one when something and no newline is between
    them, else the next one is tried as an opening. Found with ``str.find`` (several times
    cheaper than RE2 calls on everyday text; linear, each ``find`` starts where the last
    one stopped), or by the pattern when the text holds over `MAX_BACKTICKS` backticks."""
    if text.count("`") > MAX_BACKTICKS:
        return [(start, end) for start, end, _ in iter_matches(_INLINE_CODE, text, limit)]
    spans: list[tuple[int, int]] = []
    pos = text.find("`")
    while pos >= 0 and len(spans) < limit and (close := text.find("`", pos + 1)) > 0:
        if close > pos + 1 and text.find("\n", pos + 1, close) < 0:
            spans.append((pos, close + 1))
            close = text.find("`", close + 1)
        pos = close
    return spans


def code_regions(text: str, limit: int = 1000) -> list[tuple[int, int]]:
    """Sorted (start, end) of fenced code blocks and (at most `limit`) inline `code` spans."""
    if "`" not in text:
        return []
    regions = [(s, e) for s, e, _ in fenced_blocks(text)]
    masked = text
    if regions:
        parts: list[str] = []
        pos = 0
        for s, e in regions:
            parts.append(text[pos:s])
            parts.append(" " * (e - s))
            pos = e
        parts.append(text[pos:])
        masked = "".join(parts)
    regions.extend(inline_code(masked, limit))
    regions.sort()
    return regions
