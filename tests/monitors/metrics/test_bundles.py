"""Metric bundles: the separate metrics' outputs and contracts from one LLM call per bundle."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from monitors.judges.base import JudgeError, JudgeReply
from monitors.judges.settings import BUNDLED_METRICS, DEFAULT_METRICS, JudgeSettings
from monitors.metrics import MetricOutcome, create_metric, distinct_calls
from monitors.metrics.bundles import CitationPolicyVerdict, RagTriadVerdict
from monitors.metrics.case_aware import CRITERIA
from stream.contract.events import Event
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run

FAITH = {
    "claims": [
        {"claim": "Update the SPF record", "verdict": "supported", "evidence_chunk_id": "kb-1"},
        {"claim": "Retry the queue", "verdict": "unsupported", "evidence_chunk_id": None},
    ],
    "justification": "one claim lacks support",
}
CHUNKS = [
    {"chunk_id": "kb-1", "reason": "the fix", "relevance": 0.9},
    {"chunk_id": "kb-2", "reason": "licences", "relevance": 0.1},
]
CTXREL = {"chunks": CHUNKS, "justification": "one useful chunk"}
ANSWER = {"justification": "answers the question", "score": 0.8}
TRIAD = {"context_relevance": CTXREL, "faithfulness": FAITH, "answer_relevance": ANSWER}

LEGAL = "The agreement may be terminated by either party with thirty days written notice."
CTX = [
    {"id": "kb-1", "content": "Bounce 550 5.7.1: update the SPF record, then retry the queue."},
    {"id": "kb-2", "content": "Orbit Mail Gateway licences renew every January."},
    {"id": "legal-7", "content": LEGAL, "policy": "quote_only"},
]
CITES = {"items": [{"index": 0, "reason": "stated", "verdict": "supported"}], "justification": "j"}
POLICY = {
    "chunks": [{"chunk_id": "legal-7", "reason": "paraphrased", "verdict": "used_unquoted"}],
    "justification": "j",
}


class ByPrompt(StubLLM):
    """Answers by prompt key (`rag_triad/v1`, `faithfulness/v1`, ...)."""

    def __init__(self, replies: dict[str, Any]) -> None:
        super().__init__({})
        self.replies = replies

    async def complete(
        self, system: str, user: str, output: type[BaseModel], prompt_version: str
    ) -> JudgeReply[Any]:
        self.reply = self.replies[prompt_version]
        return await super().complete(system, user, output, prompt_version)


def status(outcomes: list[MetricOutcome]) -> dict[str, tuple[str, float | None, str | None]]:
    return {o.metric: (o.status, o.score, o.reason) for o in outcomes}


def separate(names: list[str], ev: Event, judge: Any) -> list[MetricOutcome]:
    return [o for n in names for o in run(create_metric(n)(ev, judge))]


def test_rag_triad_scores_the_three_outputs_like_the_separate_metrics_in_one_call() -> None:
    judge = StubLLM(TRIAD)
    outs = run(create_metric("rag_triad")(event(), judge))
    assert [o.metric for o in outs] == ["faithfulness", "context_relevance", "answer_relevance"]
    (call,) = distinct_calls(outs)
    assert call.prompt_version == "rag_triad/v1" and len(judge.sent) == 1
    assert judge.sent[0].output is RagTriadVerdict
    user = judge.sent[0].plain
    assert 'id="kb-1"' in user and "<response>" in user and "<history>" in user
    one_by_one = ByPrompt(
        {"faithfulness/v1": FAITH, "context_relevance/v1": CTXREL, "answer_relevance/v1": ANSWER}
    )
    alone = separate(["faithfulness", "context_relevance", "answer_relevance"], event(), one_by_one)
    assert status(outs) == status(alone)
    assert status(outs)["faithfulness"] == ("scored", 0.5, None)
    assert [o.justification for o in outs] == [o.justification for o in alone]
    assert len(one_by_one.sent) == 3


def test_rag_triad_unrated_chunk_errors_only_context_relevance() -> None:
    reply = {**TRIAD, "context_relevance": {"chunks": CHUNKS[:1], "justification": "j"}}
    outs = run(create_metric("rag_triad")(event(), StubLLM(reply)))
    got = status(outs)
    assert got["context_relevance"] == ("judge_error", None, "schema_violation")
    assert got["faithfulness"][0] == got["answer_relevance"][0] == "scored"
    assert len(distinct_calls(outs)) == 1  # the failed output keeps the call's accounting


def test_a_failed_bundle_call_errors_every_output_with_its_reason() -> None:
    outs = run(create_metric("rag_triad")(event(), StubLLM(JudgeError("timeout", "slow"))))
    assert status(outs) == {n: ("judge_error", None, "timeout") for n in status(outs)}
    assert len(outs) == 3


S, C = "skipped", "scored"


@pytest.mark.parametrize(
    ("fields", "asked", "expect"),
    [
        ({"retrieved_context": []}, "answer_relevance/v1", (S, S, C)),
        ({"response": " "}, "context_relevance/v1", (S, C, S)),
        ({"query": ""}, None, (S, S, S)),
    ],
)
def test_rag_triad_missing_input_skips_what_needs_it_and_asks_at_most_once(
    fields: dict[str, Any], asked: str | None, expect: tuple[str, str, str]
) -> None:
    judge = ByPrompt({"context_relevance/v1": CTXREL, "answer_relevance/v1": ANSWER})
    outs = run(create_metric("rag_triad")(event(**fields), judge))
    names = ("faithfulness", "context_relevance", "answer_relevance")
    assert {o.metric: o.status for o in outs} == dict(zip(names, expect, strict=True))
    assert [s.prompt_version for s in judge.sent] == ([asked] if asked else [])
    assert all(o.reason and o.reason.startswith("missing: ") for o in outs if o.score is None)


def test_bundles_with_the_embedded_judge_equal_the_separate_metrics() -> None:
    ev = event(retrieved_context=CTX)
    for bundle, names in (
        ("rag_triad", ["faithfulness", "context_relevance", "answer_relevance"]),
        ("citation_policy", ["citation_accuracy", "source_policy_usage"]),
    ):
        outs = run(create_metric(bundle)(ev, StubEmbedded()))
        alone = separate(names, ev, StubEmbedded())
        assert status(outs) == status(alone)
        assert [o.call.prompt_version if o.call else None for o in outs] == [
            o.call.prompt_version if o.call else None for o in alone
        ]


def test_citation_policy_one_call_for_both_outputs() -> None:
    judge = StubLLM({"citations": CITES, "source_policy": POLICY})
    ev = event(retrieved_context=CTX)
    outs = run(create_metric("citation_policy")(ev, judge))
    assert status(outs) == {
        "citation_accuracy": ("scored", 1.0, None),
        "source_policy_usage": ("scored", 0.0, None),  # quote_only chunk used unquoted
    }
    (call,) = distinct_calls(outs)
    assert (
        call.prompt_version == "citation_policy/v1"
        and judge.sent[0].output is CitationPolicyVerdict
    )
    user = judge.sent[0].plain
    assert 'id="kb-1"' in user and 'id="legal-7" policy="quote_only"' in user  # cited + restricted
    assert 'id="kb-2"' not in user and "<item" in user and "<response>" in user


def test_citation_policy_missing_rating_errors_that_output_only() -> None:
    reply = {"citations": {"items": [], "justification": "j"}, "source_policy": POLICY}
    outs = run(create_metric("citation_policy")(event(retrieved_context=CTX), StubLLM(reply)))
    assert status(outs)["citation_accuracy"] == ("judge_error", None, "schema_violation")
    assert status(outs)["source_policy_usage"] == ("scored", 0.0, None)


NO_CIT = ("skipped", None, "missing: citations")
NO_MARK = ("skipped", None, "no citation markers in response")
NO_RESTRICTED = ("skipped", None, "no quote_only or no_use chunk")
ONE, ZERO = ("scored", 1.0, None), ("scored", 0.0, None)
POLICY_V1, CITES_V1 = "source_policy_usage/v1", "citation_accuracy/v1"


@pytest.mark.parametrize(
    ("fields", "asked", "accuracy", "policy"),
    [
        ({"citations": []}, POLICY_V1, NO_CIT, ZERO),
        ({"response": "Update the SPF record."}, POLICY_V1, NO_MARK, ZERO),
        ({"retrieved_context": CTX[:2]}, CITES_V1, ONE, NO_RESTRICTED),
        # cites no retrieved chunk: citation_accuracy 0 without a call
        ({"citations": [{"marker": "[1]", "source_id": "gone"}]}, POLICY_V1, ZERO, ZERO),
        ({"citations": [], "retrieved_context": CTX[:2]}, None, NO_CIT, NO_RESTRICTED),
    ],
)
def test_citation_policy_skips_are_skips_never_zero(
    fields: dict[str, Any], asked: str | None, accuracy: tuple[Any, ...], policy: tuple[Any, ...]
) -> None:
    judge = ByPrompt({"citation_accuracy/v1": CITES, "source_policy_usage/v1": POLICY})
    ev = event(**{"retrieved_context": CTX, **fields})
    outs = run(create_metric("citation_policy")(ev, judge))
    assert status(outs) == {"citation_accuracy": accuracy, "source_policy_usage": policy}
    assert [s.prompt_version for s in judge.sent] == ([asked] if asked else [])


def test_default_llm_set_is_at_most_three_calls_with_the_same_outputs() -> None:
    crit = {"justification": "fine", "score": 0.9}

    legal = {"chunk_id": "legal-7", "reason": "contract", "relevance": 0.2}
    triad = {**TRIAD, "context_relevance": {"chunks": [*CHUNKS, legal], "justification": "j"}}
    judge = ByPrompt(
        {
            "rag_triad/v1": triad,
            "case_aware/v1": dict.fromkeys(CRITERIA, crit),
            "citation_policy/v1": {"citations": CITES, "source_policy": POLICY},
        }
    )
    ev = event(retrieved_context=CTX)
    settings = JudgeSettings(backend="openai")
    assert settings.metric_names() == BUNDLED_METRICS
    outs = [o for n in settings.metric_names() for o in run(create_metric(n)(ev, judge))]
    assert len(judge.sent) == len(distinct_calls(outs)) == 3
    # the reference-based metrics skip a turn without labels.expected_answer: no LLM call
    assert all(o.status == "scored" for o in outs if not o.reference_based)
    assert {o.reason for o in outs if o.reference_based} == {"missing: reference"}
    separate_outputs = {o for n in [*DEFAULT_METRICS, "dece"] for o in create_metric(n).outputs}
    assert sorted(o.metric for o in outs) == sorted(separate_outputs)


def test_metrics_default_by_judge_type() -> None:
    assert JudgeSettings().metric_names() == DEFAULT_METRICS  # embedded: no LLM calls
    assert JudgeSettings(backend="embedded").metric_names() == DEFAULT_METRICS
    assert JudgeSettings(backend={"type": "openai"}).metric_names() == BUNDLED_METRICS
    only = JudgeSettings(backend="openai", metrics=["faithfulness"])
    assert only.metric_names() == ["faithfulness"]
    unset = JudgeSettings.model_validate({"backend": {"type": "openai"}, "metrics": None})
    assert unset.metric_names() == BUNDLED_METRICS
    with pytest.warns(FutureWarning, match=r"judge\.type / judge\.options is deprecated"):
        old = JudgeSettings(type="openai", options={"model": "m"})  # type: ignore[call-arg]
    assert (old.backend.type, old.backend.options) == ("openai", {"model": "m"})
    assert old.metric_names() == BUNDLED_METRICS


def test_bundle_options_reach_the_parts() -> None:
    bundle = create_metric("rag_triad", limits={"max_chunks": 1})
    assert bundle.needs == frozenset({"query", "response", "context"})
    judge = StubLLM({**TRIAD, "context_relevance": {"chunks": CHUNKS[:1], "justification": "j"}})
    outs = run(bundle(event(), judge))
    assert status(outs)["context_relevance"] == ("scored", 0.9, None)  # only kb-1 shown
    assert 'id="kb-2"' not in judge.sent[0].plain
    with pytest.raises(ValueError, match="no prompt rag_triad/v9"):
        create_metric("rag_triad", prompt_version="v9")


def test_options_for_a_part_of_an_enabled_bundle_name_the_bundle() -> None:
    from stream.runtime.judging_build import build_judging
    from stream.runtime.settings import ConfigError, Settings

    judge = {"backend": {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    with (
        pytest.warns(FutureWarning, match="judge.metric_options is deprecated"),
        pytest.raises(ValueError, match=r"list the metric itself in judge\.metrics"),
    ):
        Settings(judge={**judge, "metric_options": {"faithfulness": {}}})
    with pytest.warns(FutureWarning, match="judge.metric_options is deprecated"):
        folded = Settings(judge={**judge, "metric_options": {"rag_triad": {"limits": {}}}})
    assert folded.judge.metrics[0].options == {"limits": {}}  # the old key, folded in
    bad = Settings(judge={**judge, "metrics": [{"type": "rag_triad", "no_such_option": 1}]})
    with pytest.raises(ConfigError, match=r"judge\.metrics\.0 \(rag_triad\): .*no_such_option"):
        build_judging(bad)
