"""citation_accuracy and citation_coverage; sentence and marker reading."""

from __future__ import annotations

from typing import Any

import pytest

from monitors.judges.base import JudgeError
from monitors.metrics import create_metric
from monitors.metrics.sentences import find_markers, is_factual, sentences
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run

CTX = [
    {"id": "kb-1", "content": "Update the SPF record to include the gateway address."},
    {"id": "kb-2", "content": "Run orbitmail queue retry --all to resend queued mail."},
    {"id": "kb-3", "content": "Licences renew every January."},
]
CITS = [
    {"marker": "[1]", "source_id": "kb-1"},
    {"marker": "[2]", "source_id": "kb-2"},
    {"marker": "[3]", "source_id": "kb-9"},  # not retrieved
]


def _split(text: str) -> list[str]:
    return [text[s:e] for s, e in sentences(text, find_markers(text))]


def test_sentences_attach_trailing_markers_and_skip_code_blocks() -> None:
    text = "Update SPF. [1] Then retry [2].\nDone!\n```\nnot. a sentence\n```\nBye."
    assert _split(text) == ["Update SPF. [1]", "Then retry [2].", "Done!", "Bye."]


def test_markers_ignore_links_code_and_indexing() -> None:
    text = "See [docs](http://x) and `arr[1]` and [2, 3] and [^n] and [4-6]."
    keys = [m.keys for m in find_markers(text)]
    assert keys == [("2", "3"), ("n",), ("4", "5", "6")]


@pytest.mark.parametrize(
    ("sentence", "factual"),
    [
        ("Revenue grew 12% in Q3 this year.", True),
        ("Run `orbitmail queue retry` after the change.", True),
        ("Edit the file /etc/orbit/main.cf first.", True),
        ("Then ask Contoso support for help.", True),
        ("Happy to help with that today.", False),
        ("Does that work for you now?", False),
        ("Thanks a lot.", False),
    ],
)
def test_factual_sentences(sentence: str, factual: bool) -> None:
    assert is_factual(sentence) is factual


def _ev(response: str, **kw: Any) -> Any:
    return event(
        response=response,
        retrieved_context=kw.pop("ctx", CTX),
        citations=kw.pop("cits", CITS),
        **kw,
    )


def test_coverage_share_of_factual_sentences_cited() -> None:
    text = (
        "Update the SPF record for orbit.example.com [1]. Then run the retry command "
        "for 2 queues. Happy to help with that today."
    )
    [out] = run(create_metric("citation_coverage")(_ev(text), None))
    assert out.status == "scored" and out.score == pytest.approx(0.5)
    assert out.judge == "lexical-v1" and out.call is None
    assert "Then run the retry command" in out.justification


def test_coverage_skipped_without_factual_sentences() -> None:
    [out] = run(create_metric("citation_coverage")(_ev("Happy to help with that today."), None))
    assert (out.status, out.reason) == ("skipped", "no factual sentences")


def _items(*verdicts: str, start: int = 0) -> dict[str, Any]:
    items = [{"index": start + i, "reason": "r", "verdict": v} for i, v in enumerate(verdicts)]
    return {"items": items, "justification": "checked"}


RESPONSE = "Update the SPF record [1]. Then run the queue retry [2]. Licences renew in May [3]."


def test_accuracy_llm_one_call_and_unresolved_citation_scores_zero() -> None:
    judge = StubLLM(_items("supported", "partial"))
    [out] = run(create_metric("citation_accuracy")(_ev(RESPONSE), judge))
    assert len(judge.sent) == 1 and judge.sent[0].prompt_version == "citation_accuracy/v1"
    user = judge.sent[0].plain
    assert 'index="0" cites="kb-1"' in user and 'index="1" cites="kb-2"' in user
    assert 'index="2"' not in user  # kb-9 was not retrieved: scored 0 without asking
    assert 'id="kb-3"' not in user  # only cited chunks are shown
    assert out.score == pytest.approx((1 + 0.5 + 0) / 3)
    assert "cites no retrieved chunk" in out.justification


def test_accuracy_llm_unrated_item_fails_closed() -> None:
    [out] = run(create_metric("citation_accuracy")(_ev(RESPONSE), StubLLM(_items("supported"))))
    assert (out.status, out.reason) == ("judge_error", "schema_violation")


def test_accuracy_llm_judge_error() -> None:
    [out] = run(
        create_metric("citation_accuracy")(_ev(RESPONSE), StubLLM(JudgeError("server_error")))
    )
    assert (out.status, out.reason, out.score) == ("judge_error", "server_error", None)


def test_accuracy_embedded_support_per_cited_sentence() -> None:
    judge = StubEmbedded()
    text = "Update the SPF record [1]. Resend queued mail with orbitmail [1]."
    [out] = run(create_metric("citation_accuracy")(_ev(text), judge))
    assert [c for _, c in judge.support_calls] == [[CTX[0]["content"]], [CTX[0]["content"]]]
    assert judge.support_calls[0][0] == "Update the SPF record ."  # marker stripped
    assert out.status == "scored" and out.score is not None and 0.3 < out.score < 0.8


def test_accuracy_skipped_when_no_marker_in_response_or_no_citations() -> None:
    [out] = run(create_metric("citation_accuracy")(_ev("Update the SPF record."), StubEmbedded()))
    assert (out.status, out.reason) == ("skipped", "no citation markers in response")
    [out] = run(create_metric("citation_accuracy")(_ev(RESPONSE, cits=[]), StubEmbedded()))
    assert (out.status, out.reason) == ("skipped", "missing: citations")
