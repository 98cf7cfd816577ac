"""Deterministic meaning-preserving rewrites of a text, for the rewrite-consistency check.

Three kinds, no randomness, no model:

* ``reorder``: the sentences (``monitors.judges.claims.split_sentences``) rotated by one,
  the first sentence moved to the end, joined with single spaces (a text of one sentence
  is left unchanged);
* ``synonyms``: every whole-word occurrence of an entry of :data:`SYNONYMS` (a fixed
  table of 59 common words and phrases and their near-synonyms; contractions
  included) replaced in one pass, the case of the first letter kept;
* ``both``: ``synonyms`` applied to the ``reorder`` result.

A rewrite identical to the original (nothing to reorder, no table word) is reported as
unchanged and left out of the variance figures.
"""

from __future__ import annotations

import re

from monitors.judges.claims import split_sentences

__all__ = ["KINDS", "SYNONYMS", "paraphrase"]

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
_WORD = re.compile(
    r"\b(" + "|".join(map(re.escape, sorted(SYNONYMS, key=len, reverse=True))) + r")\b",
    re.IGNORECASE,
)


def _swap(match: re.Match[str]) -> str:
    word = match.group(0)
    new = SYNONYMS[word.lower()]
    return new[0].upper() + new[1:] if word[0].isupper() else new


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
        out = _WORD.sub(_swap, out)
    return out
