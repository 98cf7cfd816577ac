"""In-process judge doubles for metric-logic tests (not protocol tests).

`StubLLM` implements the LLMJudge protocol: it returns canned replies per output model,
validated by that model (so a canned reply must satisfy the strict schema), or raises a
canned JudgeError. `StubEmbedded` implements the EmbeddedJudge protocol with word overlap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from monitors.judges.base import JudgeCall, JudgeError, JudgeReply, SupportResult
from monitors.metrics.prompts import NONCE_CHARS
from stream.contract.events import Event

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

Canned = dict[str, Any] | JudgeError | Callable[[str], dict[str, Any]]


@dataclass
class Sent:
    system: str
    user: str
    output: type[BaseModel]
    prompt_version: str

    @property
    def code(self) -> str:
        return call_code(self.system)

    @property
    def plain(self) -> str:
        """The user prompt with the call's code taken out of the tags (`<response>`)."""
        return unsealed(self.system, self.user)


def call_code(system: str) -> str:
    """The call's delimiter code, as the data notice of the system prompt names it."""
    marker = "request's code \""
    at = system.find(marker)
    return system[at + len(marker) : at + len(marker) + NONCE_CHARS] if at >= 0 else ""


def unsealed(system: str, user: str) -> str:
    """`user` with the call's code taken out of its tags: `<response-k7q..>` -> `<response>`."""
    code = call_code(system)
    return user.replace(f"-{code}", "") if code else user


def request_user(body: dict[str, Any]) -> str:
    """The user prompt of a chat-completions request body, unsealed (see `unsealed`)."""
    messages = body["messages"]
    return unsealed(messages[0]["content"], messages[-1]["content"])


class StubLLM:
    name = "stub-llm"

    def __init__(self, reply: Canned) -> None:
        self.reply = reply
        self.sent: list[Sent] = []

    async def complete(
        self, system: str, user: str, output: type[M], prompt_version: str
    ) -> JudgeReply[M]:
        self.sent.append(Sent(system, user, output, prompt_version))
        call = JudgeCall(self.name, "stub-model", prompt_version, len(user) // 4, 50, 0.01, 0.0, 1)
        if isinstance(self.reply, JudgeError):
            raise self.reply
        data = self.reply(user) if callable(self.reply) else self.reply
        return JudgeReply(output.model_validate(data), call)

    async def aclose(self) -> None:
        return None


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?\"'`()[]").lower() for w in text.split() if len(w) > 3}


class StubEmbedded:
    """support = share of the text's words (> 3 chars) found in the contexts."""

    name = "stub-embedded"

    def __init__(self) -> None:
        self.support_calls: list[tuple[str, list[str]]] = []
        self.known_calls: list[list[str]] = []  # the `known` texts of each support call

    def support(
        self, text: str, contexts: Sequence[str], known: Sequence[str] = ()
    ) -> SupportResult:
        self.support_calls.append((text, list(contexts)))
        self.known_calls.append(list(known))
        words = _words(text)
        known = set().union(*(_words(c) for c in contexts)) if contexts else set()
        score = len(words & known) / len(words) if words else 1.0
        return SupportResult(score, [(text, score)], f"overlap {score:.2f}")

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        q = _words(query)
        return [len(q & _words(t)) / len(q | _words(t)) if q | _words(t) else 0.0 for t in texts]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def event(**fields: Any) -> Event:
    data: dict[str, Any] = {
        "event_id": "e1",
        "query": "How do I fix bounce 550 5.7.1 on Orbit Mail Gateway?",
        "response": "Update the SPF record, then run `orbitmail queue retry --all` [1].",
        "retrieved_context": [
            {
                "id": "kb-1",
                "content": "Bounce 550 5.7.1: update the SPF record, then run "
                "`orbitmail queue retry --all` to resend queued mail.",
            },
            {"id": "kb-2", "content": "Orbit Mail Gateway licences renew every January."},
        ],
        "citations": [{"marker": "[1]", "source_id": "kb-1"}],
        "case": {"subject": "550 5.7.1 Orbit Mail Gateway", "metadata": {"ticket": "INC0692743"}},
        "history": [{"role": "user", "content": "Outbound mail bounces with 550 5.7.1"}],
    }
    data.update(fields)
    return Event.model_validate(data)


#: options a metric cannot be built without (tonality refuses to start with no guidelines)
REQUIRED_OPTIONS: dict[str, dict[str, Any]] = {
    "tonality": {"guidelines": ["Address the customer politely.", "No slang."]}
}


def options_for(metric: str, **extra: Any) -> dict[str, Any]:
    """What `create_metric(metric, ...)` needs in a test: REQUIRED_OPTIONS plus `extra`."""
    return {**REQUIRED_OPTIONS.get(metric, {}), **extra}
