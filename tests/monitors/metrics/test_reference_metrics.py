"""The reference-based metrics and tonality over the real OpenAI-compatible client and a
loopback fault server (the HTTP protocol, strict schemas, call counts, failing closed),
and on the embedded judge (local alignment, "requires an LLM judge" skips)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from monitors.judges import create_judge
from monitors.judges.openai import OpenAIJudge
from monitors.metrics import MetricOutcome, create_metric, distinct_calls
from monitors.metrics.dece import f_beta
from tests.monitors.judges.fault_server import FaultServer, ok, schema_violating
from tests.monitors.metrics.stubs import event, options_for, request_user

GOLD = {
    "expected_answer": "Update the SPF record, then run `orbitmail queue retry --all`.",
    "required_information": ["update the SPF record", "retry the queued mail"],
}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def judged(server: FaultServer, metric: str, *events: Any, **options: Any) -> list[Any]:
    """Outcomes of `metric` (one instance) on each event, over the real client."""

    async def go() -> list[list[MetricOutcome]]:
        judge = OpenAIJudge(base_url=server.base_url, model="judge-model", max_attempts=2)
        built = create_metric(metric, **options_for(metric, **options))
        try:
            return [await built(ev, judge) for ev in events]
        finally:
            await judge.aclose()

    return asyncio.run(go())


def labelled(**labels: Any) -> Any:
    return event(labels={**GOLD, **labels})


def test_holistic_grade_is_one_call_normalised(server: FaultServer) -> None:
    server.push(ok({"reason": "same steps", "grade": 8}))
    [[out]] = judged(server, "answer_correctness", labelled())
    assert (out.metric, out.status, out.score, out.reference_based) == (
        "answer_correctness",
        "scored",
        0.8,
        True,
    )
    (req,) = server.requests
    user = request_user(req["body"])
    assert "<expected_answer>" in user and "orbitmail queue retry --all" in user
    schema = req["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["grade"]["maximum"] == 10


def test_no_reference_no_call(server: FaultServer) -> None:
    [outs] = judged(server, "answer_correctness_analytic", event())
    assert {(o.status, o.reason) for o in outs} == {("skipped", "missing: reference")}
    assert server.requests == []
    [[bad]] = judged(server, "answer_correctness", event(labels={"expected_answer": ["a"]}))
    assert (bad.status, bad.reason) == ("skipped", "labels.expected_answer: expected a string")


STATEMENTS = {
    "response_statements": ["Update the SPF record.", "Reboot the gateway."],
    "expected_statements": ["Update the SPF record.", "Retry the queued mail."],
}
VERDICTS = {
    "response_statements": [
        {"statement": "Update the SPF record.", "verdict": "TP"},
        {"statement": "Reboot the gateway.", "verdict": "FP"},
    ],
    "expected_statements": [
        {"statement": "Update the SPF record.", "verdict": "covered"},
        {"statement": "Retry the queued mail.", "verdict": "missing"},
    ],
    "justification": "half",
}


def test_analytic_two_step_is_two_calls_counted_as_one(server: FaultServer) -> None:
    server.push(ok(STATEMENTS, usage=(300, 40)), ok(VERDICTS, usage=(400, 60)))
    [outs] = judged(server, "answer_correctness_analytic", labelled())
    assert {o.metric: o.score for o in outs} == {
        "answer_precision": 0.5,
        "answer_recall": 0.5,
        "answer_f1": 0.5,
    }
    (call,) = distinct_calls(outs)
    assert (call.prompt_tokens, call.completion_tokens, call.attempts) == (700, 100, 2)
    first, second = (request_user(r["body"]) for r in server.requests)
    assert "<expected_answer>" in first and "<statements" not in first
    assert "Reboot the gateway." in second and '<statements side="response">' in second
    assert outs[0].details is not None and outs[0].details["variant"] == "two_step"
    assert "details" in outs[0].to_dict() and "details" not in outs[1].to_dict()


def test_analytic_contextual_is_one_call(server: FaultServer) -> None:
    server.push(ok(VERDICTS))
    [outs] = judged(server, "answer_correctness_analytic", labelled(), variant="contextual")
    assert [o.score for o in outs] == [0.5, 0.5, 0.5]
    (req,) = server.requests
    assert req["body"]["response_format"]["json_schema"]["name"]


def test_analytic_miscounted_verdicts_fail_closed(server: FaultServer) -> None:
    short = {**VERDICTS, "expected_statements": VERDICTS["expected_statements"][:1]}
    server.push(ok(STATEMENTS), ok(short))
    [outs] = judged(server, "answer_correctness_analytic", labelled())
    assert {(o.status, o.reason, o.score) for o in outs} == {
        ("judge_error", "schema_violation", None)
    }


CRITERIA = {"criteria": ["The answer says to update the SPF record.", "It says to retry."]}
DECE = {
    "elements": [
        {"element": "update SPF", "verdict": "correct"},
        {"element": "reboot", "verdict": "unverifiable"},
    ],
    "criteria": [
        {"id": 1, "satisfied": True, "reason": "stated"},
        {"id": 2, "satisfied": False, "reason": "absent"},
    ],
    "justification": "j",
}


def test_dece_criteria_are_cached_per_gold_answer(server: FaultServer) -> None:
    server.push(ok(CRITERIA), ok(DECE), ok(DECE), ok(CRITERIA), ok(DECE))
    other = labelled(expected_answer="Something else entirely.")
    first, replay, changed = judged(server, "dece", labelled(), labelled(), other)
    assert {o.metric: o.score for o in first} == {
        "dece_precision": 0.5,
        "dece_recall": 0.5,
        "dece_f2": pytest.approx(f_beta(0.5, 0.5)),
    }
    assert [o.score for o in replay] == [o.score for o in first]
    assert replay[0].details is not None and replay[0].details["criteria_cached"] is True
    assert changed[0].details is not None and changed[0].details["criteria_cached"] is False
    assert len(server.requests) == 5  # 2 + 1 (cached criteria) + 2
    prompts = [request_user(r["body"]) for r in server.requests]
    assert "<required_information>\n1. update the SPF record" in prompts[0]
    assert "<criteria>\n1. The answer says to update the SPF record." in prompts[1]


def test_dece_unjudged_criterion_fails_closed(server: FaultServer) -> None:
    partial = {**DECE, "criteria": DECE["criteria"][:1]}
    server.push(ok(CRITERIA), ok(partial))
    [outs] = judged(server, "dece", labelled())
    assert {(o.status, o.reason) for o in outs} == {("judge_error", "schema_violation")}


def test_f_beta() -> None:
    assert f_beta(1.0, 1.0) == 1.0 and f_beta(0.0, 0.0) == 0.0
    assert f_beta(0.5, 1.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1))  # recall weighs more
    assert f_beta(1.0, 0.5) < f_beta(0.5, 1.0)


def test_tonality_scores_complied_share(server: FaultServer) -> None:
    verdict = {
        "guidelines": [
            {"id": 1, "verdict": "complies", "reason": "polite"},
            {"id": 2, "verdict": "violates", "reason": "says 'gonna'"},
            {"id": 3, "verdict": "not_applicable", "reason": "no apology needed"},
        ],
        "justification": "one slip",
    }
    server.push(ok(verdict))
    rules = ["Be polite.", "No slang.", "Apologise for outages."]
    [[out]] = judged(server, "tonality", event(), guidelines=rules)
    assert (out.status, out.score, out.severity, out.reference_based) == (
        "scored",
        0.5,
        "moderate",
        False,
    )
    assert "<guidelines>\n1. Be polite.\n2. No slang." in request_user(server.requests[0]["body"])
    server.default = schema_violating()
    [[bad]] = judged(server, "tonality", event(), guidelines=rules)
    assert (bad.status, bad.reason) == ("judge_error", "schema_violation")


def test_tonality_without_guidelines_refuses_to_start() -> None:
    with pytest.raises(ValueError, match=r"judge\.metrics: \[\{type: tonality, guidelines"):
        create_metric("tonality")


def test_embedded_judge_aligns_or_says_it_needs_an_llm() -> None:
    judge = create_judge("embedded")
    right = event(
        response="No, vaccines do not cause autism.",
        labels={"expected_answer": "No. Vaccines do not cause autism."},
    )
    wrong = right.model_copy(update={"response": "Yes, vaccines cause autism."})

    def outs(metric: str, ev: Any) -> list[MetricOutcome]:
        result: list[MetricOutcome] = asyncio.run(create_metric(metric)(ev, judge))
        return result

    [good], [bad] = outs("answer_correctness", right), outs("answer_correctness", wrong)
    assert good.status == bad.status == "scored"
    assert good.score is not None and bad.score is not None and good.score > bad.score + 0.3
    assert good.details is not None and good.details["response_statements"][0]["agrees"]
    analytic = {o.metric: o.score for o in outs("answer_correctness_analytic", wrong)}
    assert analytic == {"answer_precision": 0.0, "answer_recall": 0.0, "answer_f1": 0.0}
    for metric in ("dece", "tonality"):
        built = create_metric(metric, **options_for(metric))
        skipped = asyncio.run(built(right, judge))
        assert {(o.status, o.reason) for o in skipped} == {("skipped", "requires an LLM judge")}
