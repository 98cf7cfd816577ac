"""source_policy_usage: quote-only paraphrase and no-use use."""

from __future__ import annotations

from typing import Any

import pytest

from monitors.judges.base import JudgeError
from monitors.metrics import create_metric
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run

LEGAL = "Customers may terminate the agreement with thirty days written notice to Contoso."
SECRET = "Internal margin target for enterprise renewals is fourteen percent this quarter."
CTX = [
    {"id": "kb-1", "content": "Open the billing portal to manage subscriptions."},
    {"id": "legal-7", "content": LEGAL, "policy": "quote_only"},
    {"id": "fin-2", "content": SECRET, "policy": "no_use"},
]


def _ev(response: str, ctx: list[dict[str, Any]] | None = None) -> Any:
    return event(response=response, retrieved_context=CTX if ctx is None else ctx)


def _uses(legal: str, fin: str) -> dict[str, Any]:
    chunks = [
        {"chunk_id": "legal-7", "reason": "r", "verdict": legal},
        {"chunk_id": "fin-2", "reason": "copied margin", "verdict": fin},
    ]
    return {"chunks": chunks, "justification": "checked"}


def test_skipped_without_restricted_chunks() -> None:
    ctx = [CTX[0]]
    [out] = run(
        create_metric("source_policy_usage")(
            _ev("Open the portal.", ctx), StubLLM(_uses("not_used", "not_used"))
        )
    )
    assert (out.status, out.reason) == ("skipped", "no quote_only or no_use chunk")
    [out] = run(create_metric("source_policy_usage")(_ev("x", []), StubEmbedded()))
    assert (out.status, out.reason) == ("skipped", "missing: context")


@pytest.mark.parametrize(
    ("legal", "fin", "score"),
    [
        ("not_used", "not_used", 1.0),
        ("quoted_verbatim", "not_used", 1.0),  # quote-only content inside quotes is fine
        ("used_unquoted", "not_used", 0.0),  # paraphrased quote-only content
        ("not_used", "quoted_verbatim", 0.0),  # no-use content may not even be quoted
        ("not_used", "used_unquoted", 0.0),
    ],
)
def test_llm_verdicts_to_compliance(legal: str, fin: str, score: float) -> None:
    judge = StubLLM(_uses(legal, fin))
    [out] = run(create_metric("source_policy_usage")(_ev("Some answer."), judge))
    assert out.status == "scored" and out.score == score
    user = judge.sent[0].plain
    assert 'id="legal-7" policy="quote_only"' in user and 'id="fin-2" policy="no_use"' in user
    assert 'id="kb-1"' not in user  # only restricted chunks are shown
    if score == 0.0:
        assert "violated" in out.justification


def test_llm_unrated_restricted_chunk_fails_closed() -> None:
    reply = {
        "chunks": [{"chunk_id": "legal-7", "reason": "r", "verdict": "not_used"}],
        "justification": "x",
    }
    [out] = run(create_metric("source_policy_usage")(_ev("Some answer."), StubLLM(reply)))
    assert (out.status, out.reason, out.score) == ("judge_error", "schema_violation", None)


def test_llm_judge_error() -> None:
    [out] = run(
        create_metric("source_policy_usage")(_ev("x y z"), StubLLM(JudgeError("circuit_open")))
    )
    assert (out.status, out.reason) == ("judge_error", "circuit_open")


def test_embedded_no_use_copy_scores_low() -> None:
    judge = StubEmbedded()
    clean = run(
        create_metric("source_policy_usage")(_ev("Open the billing portal to manage it."), judge)
    )[0]
    leak = run(
        create_metric("source_policy_usage")(
            _ev("Your margin target for enterprise renewals is fourteen percent."), judge
        )
    )[0]
    assert clean.score is not None and leak.score is not None
    assert clean.score > 0.6 and leak.score < 0.2
    assert "no_use" in leak.justification


def test_embedded_quote_only_quoted_is_fine_paraphrase_is_not() -> None:
    judge = StubEmbedded()
    quoted = f'The contract says: "{LEGAL}"'
    paraphrase = "You can terminate the agreement by giving Contoso thirty days written notice."
    q = run(create_metric("source_policy_usage")(_ev(quoted), judge))[0]
    p = run(create_metric("source_policy_usage")(_ev(paraphrase), judge))[0]
    assert q.score is not None and p.score is not None
    assert q.score > 0.6 and p.score < 0.3
    assert "quote_only" in p.justification
