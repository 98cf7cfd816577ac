"""The identifiers detector's grounding in the sources (:mod:`detectors.identifiers`).

The sources of an event joined and normalised (:func:`_sources`), looked up lazily by
:class:`_Sources` (raw text first, then lowered bytes, then the normalised str); whole
words (:func:`_has_word`); and the separator-blind match of an error code or ticket id
(:func:`_grounded_separated`: the same letter / digit runs joined by nothing, ``-``,
``_`` or a space).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from detectors.regex import compile_pattern, search
from stream.contract.events import Event

__all__ = [
    "_TO_ASCII",
    "_WORD_BYTES",
    "_Sources",
    "_chunk_labels",
    "_grounded_separated",
    "_has_word",
    "_normalize",
    "_segments",
    "_separated",
    "_source_parts",
    "_sources",
    "_wordish",
]


def _segments(key: str) -> list[str]:
    """Alphanumeric runs of a normalised key, split at separators and letter/digit changes:
    ``kb-00-5512`` -> kb, 00, 5512; ``err_conn_4021`` -> err, conn, 4021; ``e1234`` -> e, 1234."""
    out: list[str] = []
    cur = ""
    for ch in key:
        if not (ch.isascii() and ch.isalnum()):
            if cur:
                out.append(cur)
            cur = ""
        elif cur and cur[-1].isdigit() != ch.isdigit():
            out.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _grounded_separated(key: str, source: str) -> bool:
    """`key` found in `source` up to separators: the same segments in order, each pair
    joined by nothing, ``-``, ``_`` or a space, as a whole word (``err 4012`` is grounded
    by ``ERR-4012`` or ``err_4012``; ``kb-00-5512`` is not grounded by ``KB-00-5521``);
    "error" and "err" are one prefix. One small RE2 search, only for a key that the
    plain substring test did not find."""
    segs = _segments(key)
    if len(segs) < 2 or len(key) > 80:
        return False
    parts = ["err(?:or)?" if segs[0] in ("err", "error") else segs[0], *segs[1:]]
    pattern = _separated(r"\b" + "[-_ ]?".join(parts) + r"\b")
    return search(pattern, source)


@lru_cache(maxsize=256)
def _separated(regex: str) -> Any:
    return compile_pattern(regex)


def _has_word(source: str, words: str, limit: int = 50) -> bool:
    """`words` in `source` with no word character (or ``-``) right before or after it."""
    pos = source.find(words)
    while pos >= 0 and limit > 0:
        end = pos + len(words)
        if not _wordish(source[pos - 1 : pos]) and not _wordish(source[end : end + 1]):
            return True
        pos = source.find(words, pos + 1)
        limit -= 1
    return False


def _wordish(ch: str) -> bool:
    return bool(ch) and (ch.isalnum() or ch in "_-")


def _source_parts(event: Event) -> list[str]:
    parts = [event.query, *(m.content for m in event.history)]
    if event.case is not None:
        parts += [event.case.subject or "", event.case.description or ""]
        parts += [str(v) for v in (event.case.metadata or {}).values()]
    for chunk in event.retrieved_context:
        parts.append(chunk.content)
        parts += _chunk_labels(chunk)
    return parts


def _chunk_labels(chunk: Any) -> list[str]:
    """A chunk's id, source, title and metadata values: the most common grounding a RAG
    service has for a knowledge-base or ticket id (``kb0052210-s2``,
    ``kb/orbitmail/KB0052210.md``). Strings and numbers only, one level of metadata."""
    out = [chunk.id]
    if chunk.source:
        out.append(chunk.source)
    extra = chunk.model_extra or {}
    title = extra.get("title")
    if isinstance(title, str):
        out.append(title)
    meta = extra.get("metadata")
    if isinstance(meta, dict):
        out += [
            str(v) for v in meta.values() if isinstance(v, str | int) and not isinstance(v, bool)
        ]
    return out


def _normalize(text: str) -> str:
    return text.lower().replace("\\", "/").replace("//", "/")


def _sources(event: Event) -> str:
    """All the sources, normalised, one per line: what identifiers are looked up in."""
    return _normalize("\n".join(_source_parts(event)))


#: the only characters whose lowercase holds an ASCII character (İ -> "i̇", KELVIN SIGN -> "k")
_TO_ASCII = ("\u0130", "\u212a")
_WORD_BYTES = frozenset(b"_-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class _Sources:
    """:func:`_sources` of one event, lowered only when a key is not in the raw text.

    Most keys are in the raw sources as they are (see :meth:`grounded`). Otherwise an
    ASCII key is looked up in the UTF-8 bytes of the joined parts with their ASCII
    letters lowered, a few times cheaper than lowering the str: no character but those
    of ``_TO_ASCII`` lowers to anything holding an ASCII character, so without them the
    ASCII runs of both texts are the same (same occurrences, in order), and for a key
    with no slash or backslash the slash rewrites change nothing (they keep slash runs).
    Anything else (and a whole word next to a non-ASCII character) takes the str.
    """

    __slots__ = ("_exact", "_joined", "_lowered", "_text")

    def __init__(self, event: Event) -> None:
        self._joined = joined = "\n".join(_source_parts(event))
        self._exact = all(c not in joined for c in _TO_ASCII)
        self._lowered: bytes | None = None
        self._text: str | None = None

    def _data(self, key: str) -> bytes | None:
        """The bytes to look `key` up in; None when only the str is exact."""
        if not self._exact or not key.isascii() or "/" in key or "\\" in key:
            return None
        if self._lowered is None:
            self._lowered = self._joined.encode("utf-8", "surrogatepass").lower()
        return self._lowered

    def __contains__(self, key: str) -> bool:
        data = self._data(key)
        return key in self.text if data is None else key.encode() in data

    def grounded(self, key: str, raw: str) -> bool:
        """``key in self`` for the normalised form `key` of `raw`: an ASCII `raw` found as
        it is in the raw sources is enough, and skips the lowering (its lowercase is then
        in the lowered sources, and the slash rewrites shorten each run of slashes in it
        as they do in the key: a run at one of its ends is only longer in the sources)."""
        return (raw.isascii() and raw in self._joined) or key in self

    def has_word(self, words: str, limit: int = 50) -> bool:
        """:func:`_has_word` on the joined sources: the same occurrences, in order."""
        data = self._data(words) if words else None
        if data is None:
            return _has_word(self.text, words, limit)
        key, size, tries = words.encode(), len(words), limit
        pos = data.find(key)
        while pos >= 0 and tries > 0:
            around = data[max(pos - 1, 0) : pos] + data[pos + size : pos + size + 1]
            if not around.isascii():  # its lowercase decides: the str answers
                return _has_word(self.text, words, limit)
            if _WORD_BYTES.isdisjoint(around):
                return True
            pos = data.find(key, pos + 1)
            tries -= 1
        return False

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _normalize(self._joined)
        return self._text
