"""Deterministic meaning-preserving rewrites of a response, for the rewrite-consistency
check of metric qualification (`ragpulse qualify`, `bench.quality.qualification`).

Three kinds, no randomness, no model:

* ``reorder``: the sentences (``monitors.judges.claims.split_sentences``) rotated by one,
  the first sentence moved to the end, joined with single spaces (a text of one sentence
  is left unchanged);
* ``synonyms``: every whole-word occurrence of an entry of :data:`SYNONYMS` (a fixed
  table of 59 common words and phrases and their near-synonyms; contractions
  included) replaced in one pass, the case of the first letter kept;
* ``both``: ``synonyms`` applied to the ``reorder`` result.

A rewrite identical to the original (nothing to reorder, no table word) is unchanged and
left out of the variance figures. A rewritten event is named ``<event_id>~rw<k>``
(:func:`rewrite_id`): ``k`` is the 1-based position of the rewrite in ``labels.rewrites``
when the event supplies them, else of its kind in :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Sequence

from monitors.judges.claims import split_sentences

__all__ = ["KINDS", "SYNONYMS", "paraphrase", "rewrite_id", "rewrites_of", "split_rewrite_id"]

KINDS = ("reorder", "synonyms", "both")

SYNONYMS: dict[str, str] = {
    "however": "nevertheless",
    "also": "additionally",
    "additionally": "also",
    "because": "since",
    "many": "numerous",
    "often": "frequently",
    "help": "assist",
    "helps": "assists",
    "use": "employ",
    "uses": "employs",
    "used": "employed",
    "important": "crucial",
    "show": "demonstrate",
    "shows": "demonstrates",
    "large": "big",
    "small": "little",
    "begin": "start",
    "began": "started",
    "buy": "purchase",
    "get": "obtain",
    "make": "create",
    "makes": "creates",
    "need": "require",
    "needs": "requires",
    "provide": "supply",
    "provides": "supplies",
    "includes": "contains",
    "include": "contain",
    "quickly": "rapidly",
    "usually": "typically",
    "typically": "usually",
    "whole": "entire",
    "mainly": "primarily",
    "main": "primary",
    "several": "a number of",
    "therefore": "thus",
    "around": "roughly",
    "different": "distinct",
    "various": "diverse",
    "method": "approach",
    "people": "individuals",
    "person": "individual",
    "problem": "issue",
    "problems": "issues",
    "quick": "fast",
    "easy": "simple",
    "difficult": "hard",
    "type": "kind",
    "types": "kinds",
    "based on": "drawing on",
    "according to": "as stated in",
    "it is": "it's",
    "do not": "don't",
    "does not": "doesn't",
    "is not": "isn't",
    "cannot": "can't",
    "are not": "aren't",
    "there is": "there's",
    "such as": "like",
}
_LENGTHS = sorted({len(k) for k in SYNONYMS}, reverse=True)


def _is_word(char: str) -> bool:
    """A word character as a regex ``\\w`` sees it in a str: alphanumeric or ``_``."""
    return char.isalnum() or char == "_"


def _swap_words(text: str) -> str:
    """Every whole-word, case-insensitive occurrence of a :data:`SYNONYMS` entry replaced
    (the longest entry that fits, left to right, no overlaps), the case of its first
    letter kept. String operations only: linear in the text, no regex engine."""
    out: list[str] = []
    done = i = 0
    n = len(text)
    while i < n:
        if not _is_word(text[i]) or (i > 0 and _is_word(text[i - 1])):
            i += 1
            continue
        for length in _LENGTHS:
            end = i + length
            if end > n or (end < n and _is_word(text[end])) or not _is_word(text[end - 1]):
                continue
            word = text[i:end]
            new = SYNONYMS.get(word.lower())
            if new is not None:
                out.append(text[done:i])
                out.append(new[0].upper() + new[1:] if word[0].isupper() else new)
                done = i = end
                break
        else:
            i += 1
    out.append(text[done:])
    return "".join(out)


def paraphrase(text: str, kind: str) -> str:
    """The `kind` rewrite of `text` (see the module doc); deterministic."""
    if kind not in KINDS:
        raise ValueError(f"unknown rewrite {kind!r}; one of {KINDS}")
    out = text
    if kind in ("reorder", "both"):
        sents = split_sentences(text)
        if len(sents) > 1:
            out = " ".join(sents[1:] + sents[:1])
    if kind in ("synonyms", "both"):
        out = _swap_words(out)
    return out


def rewrites_of(
    text: str, supplied: Sequence[str] | None = None, limit: int = 3
) -> list[tuple[int, str]]:
    """(k, rewrite) of `text` that differ from it: the first `limit` of `supplied` when
    given, else the first `limit` kinds of :data:`KINDS`; k is 1-based and stable."""
    candidates = list(supplied) if supplied else [paraphrase(text, kind) for kind in KINDS]
    return [(k, new) for k, new in enumerate(candidates[:limit], start=1) if new != text]


_SEP = "~rw"


def rewrite_id(event_id: str, k: int) -> str:
    """The event id of the k-th rewrite of `event_id`."""
    return f"{event_id}{_SEP}{k}"


def split_rewrite_id(event_id: str) -> tuple[str, int] | None:
    """(original id, k) of a rewrite id, None for any other id."""
    base, sep, k = event_id.rpartition(_SEP)
    return (base, int(k)) if sep and base and k.isdigit() else None
