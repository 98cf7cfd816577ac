"""Text helpers of the embedded judge: sentences (claims) and lexical grounding.

Sentences are cut at ``. ! ?`` followed by white space and at line breaks; a piece is
glued back to the one before when that one ends with a common abbreviation or an
initial (``Dr.``, ``e.g.``, ``J.``) or the piece starts in lower case. Grounding
looks at three kinds of *anchors* in a claim, each compared with the context after
normalisation: numbers (``$4.1B`` and ``4.1 billion`` are both ``4.1``; ``1,200`` is
``1200``; the context's spelled-out numbers up to twenty count), names (runs of
capitalised words; a run at the start of a sentence needs two words) and identifiers
(tokens mixing letters with digits or ``_``, e.g. ``ERR_CONN_4021``, ``KB0012345``).
The letter prefix of a context identifier is a context word (``KB`` of ``KB0012345``);
``I`` contractions (``I'll``, ``I've``) and lower-case parts of a hyphenated word
(``-specific`` of ``Intermodal-specific``) are not names.

Citation markers (``[1]``, ``[1, 2]``, ``[^3]``, ``[kb-7]``: a bracket group whose keys
carry a digit) are references, not claims: :func:`strip_citations` blanks them before
sentences are cut, so ``... needed. [1] Let me know.`` neither counts ``1`` as a number
nor glues the marker to the next sentence.

*Known* texts (the user's own inputs: query, case, the user's messages) take part in the
anchor checks only: a number, name or identifier the user gave is not invented. They
are not evidence: the content-word overlap is computed against the context alone.
All patterns are RE2 (linear time) through :mod:`detectors.regex`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from detectors.lexical import words
from detectors.regex import compile_pattern, iter_matches

__all__ = [
    "Grounding",
    "context_index",
    "ground",
    "split_sentences",
    "stems",
    "strip_citations",
]

_BOUNDARY = compile_pattern(r"[.!?]+[\"')\]\x{201D}\x{2019}]*\s+|\s*\n+\s*")
_NUMBER = compile_pattern(r"\d+(?:[.,]\d+)*")
_AMOUNT = compile_pattern(r"[$\x{20AC}\x{00A3}\x{00A5}]?\d+(?:[.,]\d+)*(?:%|[A-Za-z]{1,3}\b)?")
_IDENT = compile_pattern(r"[\w./-]*(?:\d[A-Za-z_]|[A-Za-z_]\d|[A-Za-z0-9]_[A-Za-z0-9])[\w./-]*")
_UNIT = compile_pattern(r"^\d+(?:\.\d+)?[a-z]{1,3}$")  # 21st, 90s, 4.1b, 5km: a number
_NAME = compile_pattern(r"\b[A-Z][\w'&-]*(?:\s+(?:of |de |von |van |the )?[A-Z][\w'&-]*)*", True)
_MARKER = compile_pattern(r"^(?:[-*#>\x{2022}]+|\(?\d{1,2}[.):]|\(?[a-zA-Z][.)])\s+")
_KEY = r"\^?[A-Za-z0-9][\w.:-]{0,40}"
_CITATION = compile_pattern(rf"\[\s*{_KEY}(?:\s*[,;]\s*{_KEY}){{0,20}}\s*\]")
_LETTERS = compile_pattern(r"^[a-z]{2,}")
_CLITICS = frozenset({"ll", "ve", "re"})  # I'll, I've, we're: not name words
_ABBREV_WORDS = (
    "mr mrs ms dr prof sr jr st vs etc e.g i.e inc ltd co corp no fig approx dept est jan feb "
    "mar apr jun jul aug sep sept oct nov dec u.s u.k a.m p.m"
)
_ABBREV = frozenset(_ABBREV_WORDS.split())
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
)
_SPELLED = {w: str(i) for i, w in enumerate(_NUMBER_WORDS.split())}
_STOP = (
    "a an and are as at be been but by can could did do does for from had has have he her his "
    "how i if in into is it its may might more most no not of on or our she should so some such "
    "than that the their them then there these they this those to too was we were what when "
    "where which while who whom why will with would you your also both each other only same "
    "very about after before between over under again further once here all any few many much "
    "however therefore additionally overall moreover furthermore according based"
)
STOPWORDS = frozenset(_STOP.split())


def strip_citations(text: str) -> str:
    """`text` without its citation markers (and the blanks before them).

    A marker is a bracket group of keys (``[1]``, ``[1, 2]``, ``[1-3]``): all numeric,
    or footnotes (``[^3]``), anywhere; keys mixing letters and digits (``[kb-7]``) only
    when the bracket does not follow a word character (``a[i1]`` is code)."""
    if "[" not in text:
        return text
    parts, pos = [], 0
    for start, end, raw in iter_matches(_CITATION, text, 500):
        keys = [k.strip() for k in raw[1:-1].replace(";", ",").split(",")]
        prev = text[start - 1] if start else " "
        numeric = all(k.replace("-", "").replace("\u2013", "").isdigit() for k in keys)
        keyed = not (prev.isalnum() or prev == "_") and all(
            any(c.isdigit() for c in k) for k in keys
        )
        if numeric or keys[0].startswith("^") or keyed:
            parts.append(text[pos:start].rstrip(" \t"))
            pos = end
    parts.append(text[pos:])
    return "".join(parts)


def split_sentences(text: str, max_sentences: int = 200) -> list[str]:
    """The sentences of `text` (at most `max_sentences`), stripped, empty ones dropped."""
    pieces: list[str] = []
    pos = 0
    for _, end, _ in iter_matches(_BOUNDARY, text, max_sentences * 4):
        pieces.append(text[pos:end].strip())
        pos = end
    pieces.append(text[pos:].strip())
    out: list[str] = []
    for piece in pieces:
        if out and _glue(out[-1], piece):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return [s for s in map(_unmark, out) if s][:max_sentences]


def _glue(prev: str, piece: str) -> bool:
    if not piece or not prev.endswith("."):
        return False
    last = prev.rsplit(None, 1)[-1].rstrip(".").lower()
    if prev[:-1].isdigit():  # a list marker "3." alone
        return True
    return last in _ABBREV or (len(last) == 1 and last.isalpha()) or piece[0].islower()


def _unmark(sentence: str) -> str:
    """`sentence` without a leading list marker ("- ", "3. ", "b) ")."""
    for _, end, _ in iter_matches(_MARKER, sentence, 1):
        return sentence[end:].strip()
    return sentence


def stems(text: str) -> set[str]:
    """Content-word stems (first 6 letters of non-stopwords of 3+ letters)."""
    return {w[:6] for w in words(text) if len(w) > 2 and w not in STOPWORDS}


def _norm_number(raw: str) -> str:
    plain = raw.replace(",", "")
    if "." in plain:
        plain = plain.rstrip("0").rstrip(".") or "0"
    return plain.lstrip("0") or "0"


@dataclass
class ContextIndex:
    """What the grounding checks look up in the context (built once per event)."""

    lower: str  # context and known texts, for identifiers
    numbers: set[str]  # context and known texts
    words: set[str]  # context and known texts, for names
    stems: set[str]  # context only: the overlap is evidence


def context_index(contexts: list[str], known: Sequence[str] = ()) -> ContextIndex:
    """The lookup tables of `contexts`; `known` texts count for anchors only."""
    evidence = "\n".join(contexts)
    joined = "\n".join([evidence, *known]) if known else evidence
    toks = words(joined)
    numbers = {_norm_number(m) for _, _, m in iter_matches(_NUMBER, joined, 100_000)}
    numbers.update(_SPELLED[w] for w in toks if w in _SPELLED)
    vocab = set(toks)
    for tok in toks:  # KB of KB0012345: the letter prefix of an identifier
        if not tok.isalpha() and tok[:1].isalpha():
            vocab.update(m for _, _, m in iter_matches(_LETTERS, tok, 1))
    return ContextIndex(joined.lower(), numbers, vocab, stems(evidence))


@dataclass
class Grounding:
    """Lexical grounding of one claim: the anchors not found and the stem overlap."""

    missing_numbers: list[str] = field(default_factory=list)
    missing_names: list[str] = field(default_factory=list)
    missing_identifiers: list[str] = field(default_factory=list)
    anchors: int = 0
    overlap: float = 1.0  # share of the claim's content stems found in the context
    content: int = 0  # number of content stems in the claim

    @property
    def missing(self) -> list[str]:
        return self.missing_numbers + self.missing_identifiers + self.missing_names


def ground(claim: str, index: ContextIndex) -> Grounding:
    """Check the numbers, identifiers and names of `claim` against the context index."""
    g = Grounding()
    rest = claim
    for start, end, raw in iter_matches(_IDENT, claim, 50):
        ident = raw.strip("./-")
        if _UNIT.search(ident.lower()):
            continue
        g.anchors += 1
        if ident.lower() not in index.lower:
            g.missing_identifiers.append(ident)
        rest = rest[:start] + " " * (end - start) + rest[end:]
    for _, _, raw in iter_matches(_AMOUNT, rest, 50):
        g.anchors += 1
        number = next(iter_matches(_NUMBER, raw, 1))[2]
        if _norm_number(number) not in index.numbers:
            g.missing_numbers.append(raw)
    for start, _, name in iter_matches(_NAME, rest, 50):
        caps = " ".join(p for p in name.replace("-", " ").split() if p[:1].isupper())
        toks = [  # capitalised parts only: "Intermodal-specific" is the name "Intermodal"
            w
            for w in words(caps)
            if len(w) > 1 and w not in STOPWORDS and w not in _CLITICS and not w.isdigit()
        ]
        initial = not rest[:start].strip(" \"'*-\u2022(")
        if not toks or (initial and len(toks) < 2):
            continue
        g.anchors += 1
        if any(w not in index.words for w in toks):
            g.missing_names.append(name)
    own = stems(claim)
    g.content = len(own)
    if own:
        g.overlap = len(own & index.stems) / len(own)
    return g
