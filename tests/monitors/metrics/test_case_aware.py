"""Case-aware suite: one call, eight criteria, weighted s_final."""

from __future__ import annotations

import pytest

from monitors.judges.base import JudgeCall, JudgeError
from monitors.metrics import CRITERIA, CaseAwareWeights, create_metric, distinct_calls
from monitors.metrics.case_aware import CaseAwareVerdict
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run

SCORES = dict(zip(CRITERIA, (0.9, 0.8, 0.5, 0.7, 1.0, 0.2, 0.6, 0.4), strict=True))
REPLY = {name: {"justification": f"{name} ok", "score": s} for name, s in SCORES.items()}
DEFAULT = (0.20, 0.15, 0.10, 0.15, 0.10, 0.10, 0.10, 0.10)


def test_one_call_nine_outcomes_and_default_weighted_s_final() -> None:
    judge = StubLLM(REPLY)
    outs = run(create_metric("case_aware")(event(), judge))
    assert len(judge.sent) == 1 and judge.sent[0].output is CaseAwareVerdict
    assert judge.sent[0].prompt_version == "case_aware/v1"
    by = {o.metric: o for o in outs}
    assert list(by) == [*CRITERIA, "s_final"]
    assert all(o.status == "scored" for o in outs)
    assert by["identifier_integrity"].severity == "severe"
    assert by["identifier_integrity"].justification == "identifier_integrity ok"
    expected = sum(w * SCORES[n] for w, n in zip(DEFAULT, CRITERIA, strict=True))
    assert by["s_final"].score == pytest.approx(expected) == pytest.approx(0.675)
    assert "weakest identifier_integrity" in by["s_final"].justification
    assert len(distinct_calls(outs)) == 1  # nine scores, one accounted call


def test_prompt_carries_rubric_case_history_and_context() -> None:
    judge = StubLLM(REPLY)
    run(create_metric("case_aware")(event(), judge))
    user = judge.sent[0].plain
    for text in (
        "severe   0.00-0.30",
        "moderate 0.31-0.60",
        "minor    0.61-0.85",
        "none     0.86-1.00",
    ):
        assert text in user
    assert "INC0692743" in user and "Outbound mail bounces" in user and 'id="kb-1"' in user
    assert all(name in user for name in CRITERIA)


def test_custom_weights_change_s_final() -> None:
    weights = {name: 0.0 for name in CRITERIA} | {"hallucination": 0.5, "resolution_alignment": 0.5}
    outs = run(create_metric("case_aware", weights=weights)(event(), StubLLM(REPLY)))
    assert outs[-1].score == pytest.approx(0.5 * 0.9 + 0.5 * 0.4)


@pytest.mark.parametrize("weights", [{"hallucination": 0.3}, {"answer_type_fit": 0.0}])
def test_weights_must_sum_to_one(weights: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        CaseAwareWeights.model_validate(weights)
    with pytest.raises(ValueError, match="sum to 1"):
        create_metric("case_aware", weights=weights)


def test_default_weights_are_the_design_defaults() -> None:
    assert tuple(CaseAwareWeights().as_dict().values()) == DEFAULT


def test_missing_history_and_case_skips_all_nine() -> None:
    judge = StubLLM(REPLY)
    outs = run(create_metric("case_aware")(event(history=[], case=None), judge))
    assert len(outs) == 9 and {(o.status, o.reason) for o in outs} == {
        ("skipped", "missing: history_or_case")
    }
    assert judge.sent == []


def test_history_alone_is_enough() -> None:
    outs = run(create_metric("case_aware")(event(case=None), StubLLM(REPLY)))
    assert outs[0].status == "scored"


def test_judge_error_gives_nine_judge_errors_with_the_call() -> None:
    call = JudgeCall("stub-llm", "m", "case_aware/v1", 900, 0, 2.0, 0.0, 3)
    outs = run(create_metric("case_aware")(event(), StubLLM(JudgeError("timeout", "30 s", call))))
    assert len(outs) == 9
    assert all(
        o.status == "judge_error" and o.reason == "timeout" and o.score is None for o in outs
    )
    assert distinct_calls(outs) == [call]


def test_embedded_scores_hallucination_only_and_says_why_not_the_rest() -> None:
    judge = StubEmbedded()
    outs = run(create_metric("case_aware")(event(), judge))
    by = {o.metric: o for o in outs}
    assert by["hallucination"].status == "scored"
    assert by["hallucination"].score is not None and by["hallucination"].score > 0.8
    rest = [o for o in outs if o.metric != "hallucination"]
    assert len(rest) == 8 and {(o.status, o.reason) for o in rest} == {
        ("skipped", "requires an LLM judge")
    }
    contexts = judge.support_calls[0][1]
    assert "Outbound mail bounces with 550 5.7.1" in contexts  # history counts as grounding
    assert "550 5.7.1 Orbit Mail Gateway" in contexts  # and so does the case subject
    [known] = judge.known_calls  # the query and the case's metadata: anchors only
    assert known[0] == "How do I fix bounce 550 5.7.1 on Orbit Mail Gateway?"
    assert "INC0692743" in known and "INC0692743" not in contexts
