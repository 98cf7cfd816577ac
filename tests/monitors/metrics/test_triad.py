"""RAG triad: faithfulness, context_relevance, answer_relevance on both judge paths."""

from __future__ import annotations

import pytest

from monitors.judges.base import JudgeError
from monitors.metrics import create_metric
from monitors.metrics.triad import FaithfulnessVerdict, chunk_labels, user_inputs
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run


def _claims(*verdicts: str) -> dict[str, object]:
    return {
        "claims": [
            {
                "claim": f"claim {i}",
                "verdict": v,
                "evidence_chunk_id": "kb-1" if v != "unsupported" else None,
            }
            for i, v in enumerate(verdicts)
        ],
        "justification": "checked",
    }


def test_faithfulness_llm_one_batched_call_scores_supported_share() -> None:
    judge = StubLLM(_claims("supported", "supported", "contradicted", "unsupported"))
    [out] = run(create_metric("faithfulness")(event(), judge))
    assert len(judge.sent) == 1  # extraction and verification of all claims in one call
    sent = judge.sent[0]
    assert sent.output is FaithfulnessVerdict and sent.prompt_version == "faithfulness/v1"
    assert 'id="kb-1"' in sent.plain and 'id="kb-2"' in sent.plain  # ids shown for evidence
    assert out.status == "scored" and out.score == pytest.approx(0.5)
    assert out.severity == "moderate"
    assert out.judge == "stub-llm" and out.call is not None and out.call.prompt_tokens > 0
    assert "2/4 claims supported" in out.justification and "contradicted" in out.justification


@pytest.mark.parametrize(
    "response",
    ["Sure, happy to help.", "Thanks for contacting Orbit Support!", "Anything else I can do?"],
)
def test_faithfulness_no_claims_in_a_response_without_facts_scores_one(response: str) -> None:
    [out] = run(create_metric("faithfulness")(event(response=response), StubLLM(_claims())))
    assert (out.status, out.score, out.justification) == ("scored", 1.0, "no factual claims")


@pytest.mark.parametrize("metric", ["faithfulness", "rag_triad"])
def test_faithfulness_no_claims_in_a_response_that_states_facts_is_a_judge_error(
    metric: str,
) -> None:
    """The reviewer's finding: `{"claims": []}` made any response a 1.0."""
    fabricated = "Run `orbitmail purge --force` and set retry_limit to 9000 on port 4021."
    reply: dict[str, object] = _claims()
    if metric == "rag_triad":
        reply = {
            "faithfulness": reply,
            "context_relevance": {
                "chunks": [
                    {"chunk_id": i, "reason": "r", "relevance": 0.5} for i in ("kb-1", "kb-2")
                ],
                "justification": "j",
            },
            "answer_relevance": {"justification": "j", "score": 0.9},
        }
    outs = run(create_metric(metric)(event(response=fabricated), StubLLM(reply)))
    [out] = [o for o in outs if o.metric == "faithfulness"]
    assert (out.status, out.score, out.reason) == ("judge_error", None, "schema_violation")
    assert "no claims extracted from a response that states facts" in out.justification
    assert out.call is not None  # the call happened and is accounted for


@pytest.mark.parametrize("evidence", [None, "kb-404", "", "KB-1"])
def test_faithfulness_supported_without_a_shown_chunk_counts_unsupported(
    evidence: str | None,
) -> None:
    reply = _claims("supported", "supported")
    reply["claims"][1]["evidence_chunk_id"] = evidence  # type: ignore[index]
    [out] = run(create_metric("faithfulness")(event(), StubLLM(reply)))
    assert out.score == pytest.approx(0.5)
    assert "1/2 claims supported" in out.justification
    assert (
        "1 claims marked supported without a shown chunk: counted unsupported" in out.justification
    )


def test_faithfulness_an_id_beyond_the_shown_chunks_is_not_evidence() -> None:
    chunks = [{"id": f"c{i}", "content": f"fact {i}"} for i in range(5)]
    reply = _claims("supported", "supported")
    reply["claims"][0]["evidence_chunk_id"] = "c1"  # type: ignore[index]
    reply["claims"][1]["evidence_chunk_id"] = "c4"  # type: ignore[index]  # not shown
    metric = create_metric("faithfulness", limits={"max_chunks": 3})
    [out] = run(metric(event(retrieved_context=chunks), StubLLM(reply)))
    assert out.score == pytest.approx(0.5)


def test_faithfulness_a_repeated_claim_counts_once_at_its_worst() -> None:
    reply = _claims("supported", "unsupported", "supported")
    for c in reply["claims"]:  # type: ignore[attr-defined]
        c["claim"] = "Update the SPF record"
    reply["claims"].append(  # type: ignore[attr-defined]
        {"claim": "Retry the queue", "verdict": "supported", "evidence_chunk_id": "kb-1"}
    )
    [out] = run(create_metric("faithfulness")(event(), StubLLM(reply)))
    assert out.score == pytest.approx(0.5) and "2 repeated claims counted once" in out.justification


def test_faithfulness_flags_evidence_ids_that_were_not_shown() -> None:
    reply = _claims("contradicted")
    reply["claims"][0]["evidence_chunk_id"] = "kb-404"  # type: ignore[index]
    [out] = run(create_metric("faithfulness")(event(), StubLLM(reply)))
    assert "1 evidence ids are not shown chunk ids" in out.justification


def test_faithfulness_judge_error_is_not_a_score() -> None:
    err = JudgeError("rate_limited", "429 after 4 attempts")
    [out] = run(create_metric("faithfulness")(event(), StubLLM(err)))
    assert out.status == "judge_error" and out.score is None and out.reason == "rate_limited"
    assert out.to_dict() == {"status": "judge_error", "judge": "stub-llm", "reason": "rate_limited"}


def test_faithfulness_missing_context_is_skipped_without_a_call() -> None:
    judge = StubLLM(_claims("supported"))
    [out] = run(create_metric("faithfulness")(event(retrieved_context=[]), judge))
    assert (out.status, out.reason, out.score) == ("skipped", "missing: context", None)
    assert judge.sent == []


def test_faithfulness_embedded_uses_support_of_response_against_chunks() -> None:
    judge = StubEmbedded()
    good = run(create_metric("faithfulness")(event(), judge))[0]
    assert judge.support_calls[0][1][0].startswith("Bounce 550 5.7.1")
    bad = run(
        create_metric("faithfulness")(event(response="Reinstall Windows Vista quickly."), judge)
    )[0]
    assert good.status == bad.status == "scored"
    assert good.score is not None and good.score > 0.8 and bad.score == pytest.approx(0.0)
    assert good.call is not None and good.call.prompt_version == "faithfulness/embedded"


def test_faithfulness_embedded_knows_the_users_inputs_but_not_the_assistants() -> None:
    judge = StubEmbedded()
    history = [
        {"role": "user", "content": "Outbound mail bounces with 550 5.7.1"},
        {"role": "assistant", "content": "Hannah Svensson at Northwind had the same issue."},
    ]
    case = {
        "subject": "550 5.7.1 Orbit Mail Gateway",
        "description": "Related purchase order: 3118-9190-2604-2391.",
        "metadata": {"ticket": "INC0692743", "devices": 33, "tags": ["mail"]},
    }
    run(create_metric("faithfulness")(event(history=history, case=case), judge))
    [contexts] = [c for _, c in judge.support_calls]
    [known] = judge.known_calls
    assert known == [
        "How do I fix bounce 550 5.7.1 on Orbit Mail Gateway?",
        "550 5.7.1 Orbit Mail Gateway",
        "Related purchase order: 3118-9190-2604-2391.",
        "INC0692743",
        "33",
        "Outbound mail bounces with 550 5.7.1",
        *chunk_labels(event(history=history, case=case), 10),  # the shown chunks' ids
    ]  # query, case subject/description/scalar metadata, user messages; no assistant text
    assert chunk_labels(event(), 10) and all("kb" in t for t in chunk_labels(event(), 10))
    assert not any("Svensson" in c or "purchase order" in c for c in contexts)  # not evidence
    assert user_inputs(event(history=history), 0)[-1] == "INC0692743"  # no history at 0


def _ratings(**scores: float) -> dict[str, object]:
    chunks = [
        {"chunk_id": k.replace("_", "-"), "reason": "r", "relevance": v} for k, v in scores.items()
    ]
    return {"chunks": chunks, "justification": "ok"}


def test_context_relevance_llm_mean_of_every_chunk() -> None:
    judge = StubLLM(_ratings(kb_1=0.9, kb_2=0.1))
    [out] = run(create_metric("context_relevance")(event(), judge))
    assert out.score == pytest.approx(0.5)
    assert "least relevant 'kb-2'" in out.justification
    assert judge.sent[0].prompt_version == "context_relevance/v1"


def test_context_relevance_llm_unrated_chunk_fails_closed() -> None:
    [out] = run(create_metric("context_relevance")(event(), StubLLM(_ratings(kb_1=0.9))))
    assert out.status == "judge_error" and out.reason == "schema_violation"
    assert out.call is not None  # the call happened and is accounted for


def test_context_relevance_embedded_and_bounded_to_shown_chunks() -> None:
    chunks = [{"id": f"c{i}", "content": "orbit mail bounce"} for i in range(20)]
    metric = create_metric("context_relevance", limits={"max_chunks": 3})
    [out] = run(metric(event(retrieved_context=chunks), StubEmbedded()))
    assert out.status == "scored" and 0 < out.score < 1  # type: ignore[operator]
    assert out.justification.count("=") == 3


def test_context_relevance_skipped_without_context() -> None:
    [out] = run(create_metric("context_relevance")(event(retrieved_context=[]), StubEmbedded()))
    assert (out.status, out.reason) == ("skipped", "missing: context")


def test_answer_relevance_llm_and_embedded() -> None:
    judge = StubLLM({"justification": "answers the question", "score": 0.8})
    [llm] = run(create_metric("answer_relevance")(event(), judge))
    assert (llm.score, llm.severity, llm.justification) == (0.8, "minor", "answers the question")
    off = event(response="Licences renew every January.")
    fix = event(response="To fix bounce 550 5.7.1 on Orbit Mail Gateway, update the SPF record.")
    on = run(create_metric("answer_relevance")(fix, StubEmbedded()))[0]
    off_topic = run(create_metric("answer_relevance")(off, StubEmbedded()))[0]
    assert on.score is not None and off_topic.score is not None and on.score > off_topic.score


def test_answer_relevance_needs_no_context_but_a_response() -> None:
    judge = StubLLM({"justification": "x", "score": 0.5})
    assert (
        run(create_metric("answer_relevance")(event(retrieved_context=[]), judge))[0].status
        == "scored"
    )
    [out] = run(create_metric("answer_relevance")(event(response="  "), judge))
    assert (out.status, out.reason) == ("skipped", "missing: response")


def test_out_of_range_llm_score_is_rejected_by_the_output_model() -> None:
    with pytest.raises(ValueError):
        run(
            create_metric("answer_relevance")(
                event(), StubLLM({"justification": "x", "score": 1.5})
            )
        )
