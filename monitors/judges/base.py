"""Judges: what scores a sampled turn. Two kinds behind one registry.

* an **LLM judge** (`LLMJudge`) answers a prompt with JSON that must validate against a
  pydantic model (strict output schema); after bounded retries it raises `JudgeError`
  with a bounded reason, never a made-up answer;
* the **embedded judge** (`EmbeddedJudge`) computes support / relevance scores locally,
  with no network and no prompt.

Metrics (`monitors.metrics`) take whichever judge is configured and use the path they
support; a metric the judge cannot compute is *skipped*, not scored 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from stream.contract.errors import RagpulseError
from stream.contract.registry import Registry

__all__ = [
    "JUDGE_ERROR_REASONS",
    "CalibratedJudge",
    "EmbeddedJudge",
    "JudgeCall",
    "JudgeError",
    "JudgeReply",
    "LLMJudge",
    "SupportResult",
    "available_judges",
    "create_judge",
    "register_judge",
]

#: bounded values of the `reason` of a judge error (a metric label and a scorecard field)
JUDGE_ERROR_REASONS = (
    "timeout",
    "connect_error",
    "rate_limited",
    "server_error",
    "client_error",
    "invalid_json",
    "schema_violation",
    "response_too_large",
    "circuit_open",
    "budget_exhausted",
    "internal_error",
)


class JudgeError(RagpulseError):
    """A judge call that failed for good; `reason` is one of JUDGE_ERROR_REASONS."""

    def __init__(self, reason: str, detail: str = "", call: JudgeCall | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason if reason in JUDGE_ERROR_REASONS else "internal_error"
        self.detail = detail
        self.call = call


@dataclass
class JudgeCall:
    """Accounting of one logical judge call (all its attempts)."""

    judge: str
    model: str
    prompt_version: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    attempts: int = 0


M = TypeVar("M", bound=BaseModel)


@dataclass
class JudgeReply(Generic[M]):
    parsed: M
    call: JudgeCall


@runtime_checkable
class LLMJudge(Protocol):
    """An LLM behind an API. `name` goes into scorecards (`openai:gpt-4o-mini`)."""

    name: str

    async def complete(
        self, system: str, user: str, output: type[M], prompt_version: str
    ) -> JudgeReply[M]:
        """Ask once (with retries inside); temperature 0; the reply validated as `output`."""
        ...

    async def aclose(self) -> None: ...


@dataclass
class SupportResult:
    """How well `text` is supported by the context, with the weakest sentences."""

    score: float  # [0, 1]
    sentences: list[tuple[str, float]] = field(default_factory=list)  # (sentence, support)
    justification: str = ""


@runtime_checkable
class EmbeddedJudge(Protocol):
    """A local model; `name` like `embedded-minilm-v1`. Synchronous and CPU-bound."""

    name: str

    def support(
        self, text: str, contexts: Sequence[str], known: Sequence[str] = ()
    ) -> SupportResult:
        """Is each claim of `text` supported by `contexts`? 1 = fully supported.

        `known`: the user's own inputs (query, case, user messages); a number, name or
        identifier found there is not invented, but they are not evidence."""
        ...

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        """Relevance of each of `texts` to `query`, in [0, 1]."""
        ...


@runtime_checkable
class CalibratedJudge(Protocol):
    """A judge that maps a metric's raw score to a calibrated one (optional)."""

    def calibrate(self, metric: str, raw: float) -> float | None:
        """The probability that the turn is fine given `metric`'s raw score, or None when
        the judge has no calibration for `metric` (the raw score stands)."""
        ...


# a judge names itself (e.g. "embedded-minilm-v1"), so the decorator leaves `name` alone
_JUDGES: Registry[LLMJudge | EmbeddedJudge] = Registry("judge", set_name=False)

#: class decorator: a judge factory under a name (config ``judge.type``)
register_judge = _JUDGES.register
available_judges = _JUDGES.available
create_judge = _JUDGES.create
