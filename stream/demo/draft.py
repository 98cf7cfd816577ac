"""The shape of a clean turn before failure injection, and the chunk-building helpers.

Each world (:mod:`stream.demo.earnings`, :mod:`stream.demo.it_support`) returns a
:class:`Draft`: the query, the retrieved chunks and the parts of a *clean* answer, plus the
material the injector needs to turn it into a failure (quote-only / no-use sentences,
identifiers that can be corrupted, an answer-anyway variant for requests that should be
rejected). Every number and identifier in a clean answer is copied from the chunks, the
case or the query.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "CHUNK_MAX",
    "CHUNK_MIN",
    "Draft",
    "Rng",
    "Seg",
    "chunk",
    "fill",
    "finish_chunks",
    "pick",
]

T = TypeVar("T")
Rng = random.Random

CHUNK_MIN, CHUNK_MAX = 500, 1500


def pick(rng: Rng, seq: Sequence[T]) -> T:
    return seq[rng.randrange(len(seq))]


@dataclass
class Seg:
    """One sentence (or list step) of an answer; `cite` is the supporting chunk id."""

    text: str
    cite: str | None = None


@dataclass
class Draft:
    """A clean turn before rendering, plus what failure injection needs."""

    domain: str
    query: str
    chunks: list[dict[str, Any]]
    intro: str
    body: list[Seg]
    outro: str | None = None
    steps: bool = False
    case: dict[str, Any] | None = None
    topic: str = ""
    reject: str | None = None  # "policy" | "no_context" for requests that should be rejected
    reject_kind: str = ""  # advice | price | other_company | other_customer | credentials | ...
    refusal: str = ""  # the correct refusal for a reject-type request
    accept: list[Seg] = field(default_factory=list)  # answer-anyway text for reject-type
    partial_note: str | None = None
    quote_only: list[tuple[str, str, str]] = field(default_factory=list)  # id, sentence, who
    no_use: list[tuple[str, str, str]] = field(default_factory=list)  # id, sentence, paraphrase
    identifiers: list[str] = field(default_factory=list)
    alt_ids: list[str] = field(default_factory=list)  # chunk ids that look real, not retrieved
    vars: dict[str, str] = field(default_factory=dict)

    def sources_text(self, history: str = "") -> str:
        parts = [self.query, history]
        if self.case:
            parts += [str(self.case.get("subject", "")), str(self.case.get("description", ""))]
            parts += [str(v) for v in (self.case.get("metadata") or {}).values()]
        parts += [str(c["content"]) for c in self.chunks]
        return "\n".join(parts)


def fill(rng: Rng, header: str, required: list[str], pool: list[str], sep: str = " ") -> str:
    """Chunk text: header, required sentences in order, pool sentences interleaved,
    between CHUNK_MIN and CHUNK_MAX characters."""
    target = rng.randint(CHUNK_MIN + 60, CHUNK_MAX - 60)
    body = list(required)
    extras = list(pool)
    rng.shuffle(extras)
    size = len(header) + 1 + sum(len(s) + 1 for s in body)
    for s in extras:
        if size >= target:
            break
        if size + len(s) + 1 > CHUNK_MAX:
            continue
        body.insert(rng.randint(0, len(body)), s) if rng.random() < 0.5 else body.append(s)
        size += len(s) + 1
    text = (header + "\n" if header else "") + sep.join(body)
    if len(text) < CHUNK_MIN:  # pool exhausted: repeat boilerplate rather than fail
        for s in extras:
            if len(text) >= CHUNK_MIN:
                break
            if len(text) + len(s) + 1 <= CHUNK_MAX:
                text += " " + s
    return text[:CHUNK_MAX]


def chunk(
    cid: str, content: str, source: str, score: float, policy: str = "summarize"
) -> dict[str, Any]:
    return {
        "id": cid,
        "content": content,
        "source": source,
        "score": round(score, 3),
        "policy": policy,
    }


def finish_chunks(rng: Rng, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Order by score like a retriever would; drop `policy` when it is the default sometimes."""
    chunks.sort(key=lambda c: -c["score"])
    for c in chunks:
        if c["policy"] == "summarize" and rng.random() < 0.35:
            del c["policy"]
    return chunks
