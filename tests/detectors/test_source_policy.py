"""Source policy: copying `no_use` chunks, paraphrasing `quote_only` ones."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from detectors.base import create_detector
from detectors.source_policy import SourcePolicyDetector
from stream.contract.events import Event, EventLimits

QUOTE = (
    "Refunds are issued within fourteen business days after the returned item has been "
    "received and inspected by our warehouse team."
)
SECRET = (
    "Internal note: the enterprise discount may go up to forty percent when the account "
    "manager approves it in writing before the end of the quarter."
)


def _event(response: str, *chunks: tuple[str, str, str]) -> Event:
    ctx = [{"id": cid, "content": text, "policy": policy} for cid, text, policy in chunks]
    data: dict[str, Any] = {
        "event_id": "e1",
        "query": "q",
        "response": response,
        "retrieved_context": ctx,
    }
    limits = EventLimits(max_text_chars=200_000, max_chunk_chars=200_000)
    return Event.model_validate(data, context={"limits": limits})


def _hits(response: str, *chunks: tuple[str, str, str], **opts: Any) -> list[tuple[str, str]]:
    hits = SourcePolicyDetector(**opts)(_event(response, *chunks))
    for h in hits:
        assert h.failure_mode == h.category
        assert len(h.evidence) <= 160
    return [(h.category, h.evidence) for h in hits]


def test_registered_and_categories() -> None:
    det = create_detector("source_policy")
    assert isinstance(det, SourcePolicyDetector)
    assert det.categories == ("no_use_copy", "quote_only_paraphrase")
    with pytest.raises(ValueError):
        SourcePolicyDetector(quote_min_overlap=0)


def test_no_use_copy_with_span() -> None:
    response = (
        "Good news! The enterprise discount may go up to forty percent when the account "
        "manager approves it. Anything else?"
    )
    det = SourcePolicyDetector()
    hits = det(_event(response, ("kb-9", SECRET, "no_use")))
    assert [h.category for h in hits] == ["no_use_copy"]
    assert hits[0].evidence.startswith("chunk kb-9: ")
    assert "shared 8-grams" in hits[0].evidence
    assert hits[0].span is not None
    start, end = hits[0].span
    assert response[start:end].lower().startswith("the enterprise discount")
    assert response[start:end].endswith("approves it")


def test_no_use_copy_even_when_quoted_or_lightly_reworded() -> None:
    quoted = f'Our notes say: "{SECRET}"'
    assert [c for c, _ in _hits(quoted, ("s", SECRET, "no_use"))] == ["no_use_copy"]
    # no 8-gram survives, but most 5-grams do: the lower threshold fires
    reworded = (
        "The enterprise discount may go up to 40 percent when the account manager "
        "approves it in writing, before the end of the quarter."
    )
    assert [c for c, _ in _hits(reworded, ("s", SECRET, "no_use"))] == ["no_use_copy"]


def test_quote_only_paraphrase_fires_outside_quotes() -> None:
    response = (
        "Refunds are issued within fourteen business days after the returned item has been "
        "received, so please wait."
    )
    found = _hits(response, ("policy-1", QUOTE, "quote_only"))
    assert [c for c, _ in found] == ["quote_only_paraphrase"]


@pytest.mark.parametrize(
    "response",
    [
        f'Our policy says: "{QUOTE}" Let me know if you need more.',
        f"Our policy says: \u201c{QUOTE}\u201d Let me know if you need more.",
        f"Our policy says:\n\n> {QUOTE}\n\nLet me know if you need more.",
        f"Policy: \u00ab{QUOTE}\u00bb",
    ],
)
def test_quote_only_verbatim_quotation_is_fine(response: str) -> None:
    assert _hits(response, ("policy-1", QUOTE, "quote_only")) == []


def test_summarize_chunks_and_unrelated_text_are_silent() -> None:
    response = "Refunds are issued within fourteen business days after the item is received."
    assert _hits(response, ("p", QUOTE, "summarize")) == []
    other = "Please restart the router and wait two minutes before trying again."
    assert _hits(other, ("p", QUOTE, "quote_only"), ("s", SECRET, "no_use")) == []


def test_short_stock_phrase_needs_min_shared() -> None:
    # one shared 5-gram in a six-word answer is 50 % overlap, but only one n-gram
    chunk = "If you have any questions about billing, reach out to our team."
    assert _hits("If you have any questions, thanks.", ("p", chunk, "quote_only")) == []


def test_options_tighten_and_loosen() -> None:
    response = "Refunds are issued within fourteen business days, said the agent."
    assert _hits(response, ("p", QUOTE, "quote_only")) != []
    assert _hits(response, ("p", QUOTE, "quote_only"), quote_min_overlap=0.9) == []
    copy = "The enterprise discount may go up to forty percent, I think."
    assert _hits(copy, ("s", SECRET, "no_use"), no_use_min_overlap=1.0, no_use_ngram=12) == []
    assert _hits(copy, ("s", SECRET, "no_use")) != []


def test_adversarial_100kb_is_fast() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)]
    chunk_words = [rng.choice(vocab) for _ in range(2500)]
    parts: list[str] = []
    i = 0
    while sum(map(len, parts)) < 100_000:  # near-matches: 7 chunk words, then a change
        seg = " ".join(chunk_words[i % 2400 : i % 2400 + 7])
        parts.append(f'{seg} zz "{seg}" \u201c{seg}\u201d\n> {seg}\n' if i % 3 else seg + " x ")
        i += 7
    response = "".join(parts)[:100_000]
    chunk = " ".join(chunk_words)
    event = _event(response, ("n", chunk, "no_use"), ("q", chunk, "quote_only"))
    det = SourcePolicyDetector()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        det(event)
        best = min(best, time.perf_counter() - t0)
    assert best < 0.05, f"{best * 1000:.1f} ms"


MARGIN = (
    "We expect gross margin to recover to the mid-forties by the end of next year as new "
    "capacity comes online."
)
FILLER = "Revenue rose in the quarter and the company opened two new offices. " * 12


@pytest.mark.parametrize(
    "response",
    [
        # reworded reported speech: no 5-word run in common with the chunk
        "The CFO said margins should get back to the mid-forties by late next year, once "
        "the new capacity comes online.",
        # a restatement inside a long answer: a small fraction of the whole response
        FILLER + "On the call, the CFO told analysts that margins would recover to the "
        "mid-forties next year as capacity comes online.",
        "According to the CFO, gross margin recovers to the mid-forties by the end of next "
        "year as new capacity comes online.",
        "In her words, gross margin will get back to the mid-forties by the end of next "
        "year when capacity comes online.",
        # a typographic apostrophe in the cue
        "In the CFO\u2019s words, margins get back to the mid-forties by late next year once "
        "new capacity comes online.",
    ],
)
def test_reported_speech_restating_a_quote_only_chunk_fires(response: str) -> None:
    [(category, evidence)] = _hits(response, ("cfo", MARGIN, "quote_only"))
    assert category == "quote_only_paraphrase"
    assert "reported speech" in evidence or "shared" in evidence


@pytest.mark.parametrize(
    "response",
    [
        "The CFO said margins matter. She also discussed hiring plans and the office move.",
        # the speaker is quoted in the sentence: the unquoted rest is left to the n-grams
        "The CFO said margins would \u201crecover to the mid-forties by the end of next "
        "year\u201d as capacity comes online.",
        "He noted that the stock price had little to do with the margin outlook.",
        # "reported" is not a speech cue: facts from a summarize chunk use it
        "The company reported that gross margin recovered in the quarter as capacity grew.",
    ],
)
def test_reported_speech_near_misses_do_not_fire(response: str) -> None:
    assert _hits(response, ("cfo", MARGIN, "quote_only")) == []


def test_reported_speech_is_not_checked_against_summarize_chunks() -> None:
    response = "The CFO said margins should get back to the mid-forties by late next year."
    assert _hits(response, ("cfo", MARGIN, "summarize")) == []


@pytest.mark.parametrize(
    "response",
    [
        f"The CFO wrote that they '{QUOTE[:-1].lower()}' [1].",
        f"The policy reads \u2018{QUOTE[:-1]}\u2019 and that is all.",
    ],
)
def test_verbatim_quote_in_single_quotation_marks_counts_as_quoted(response: str) -> None:
    assert _hits(response, ("policy-1", QUOTE, "quote_only")) == []


def test_single_quoted_paraphrase_or_apostrophes_are_not_quotes() -> None:
    # not verbatim: the marks do not excuse it
    reworded = QUOTE.replace("fourteen", "14").replace("inspected", "checked")
    assert _hits(f"They say '{reworded}' [1].", ("p", QUOTE, "quote_only")) != []
    # apostrophes around copied text are not quotation marks
    copied = f"The team's answer: {QUOTE} That's the policy's wording."
    assert _hits(copied, ("p", QUOTE, "quote_only")) != []


def test_reported_options_validated_and_tunable() -> None:
    with pytest.raises(ValueError):
        SourcePolicyDetector(reported_min_overlap=0)
    response = "The CFO said margins should get back to the mid-forties by late next year."
    assert _hits(response, ("cfo", MARGIN, "quote_only")) != []
    assert _hits(response, ("cfo", MARGIN, "quote_only"), reported_min_overlap=1.0) == []


def test_adversarial_100kb_attribution_and_single_quotes_are_fast() -> None:
    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(300)]
    chunk = " ".join(rng.choice(vocab) for _ in range(3000))
    for unit in (
        "The CFO said that w1 w2 w3 w4 w5 w6 w7. ",
        "according to the CEO, w1 w2 w3 w4 w5 w6 w7 w8 ",
        "'w1 w2 w3' ",
        "x' 'y ",
    ):
        response = (unit * (100_000 // len(unit) + 1))[:100_000]
        event = _event(response, ("q", chunk, "quote_only"))
        det = SourcePolicyDetector()
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            det(event)
            best = min(best, time.perf_counter() - t0)
        assert best < 0.05, f"{unit!r}: {best * 1000:.1f} ms"
