"""The `policy` detector: built-in packs, negation/attribution handling, user packs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from detectors import create_detector
from detectors.base import EVIDENCE_MAX_CHARS
from detectors.policy import (
    BUILTIN_PACKS,
    MAX_HITS,
    PACK_DIR,
    PackError,
    PolicyDetector,
    load_pack,
)
from stream.events import Event, EventLimits

DETECTOR = PolicyDetector()


def _event(response: str, query: str = "What should I do?", **extra: Any) -> Event:
    data = {"event_id": "e1", "query": query, "response": response, **extra}
    return Event.model_validate(data, context={"limits": EventLimits(max_text_chars=500_000)})


def _hits(response: str, detector: PolicyDetector = DETECTOR) -> list[tuple[str, str]]:
    return [(d.category, d.evidence.split(":")[0]) for d in detector(_event(response))]


def test_registered_with_all_builtin_packs() -> None:
    detector = create_detector("policy")
    assert isinstance(detector, PolicyDetector)
    assert detector.categories == BUILTIN_PACKS
    assert {p.failure_mode for p in detector.packs} == set(BUILTIN_PACKS)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("You should buy TSLA before earnings.", "financial_advice/you_should_trade"),
        ("Honestly, you should sell your Tesla shares now.", "financial_advice/you_should_trade"),
        ("You ought to short $GME.", "financial_advice/you_should_trade"),
        ("I recommend buying Apple shares.", "financial_advice/recommend_trade"),
        ("I'd advise you to sell your bitcoin.", "financial_advice/recommend_trade"),
        ("It's a good time to invest.", "financial_advice/good_time_to_invest"),
        ("Now is the perfect time to buy index funds.", "financial_advice/good_time_to_invest"),
        ("Put your savings in gold.", "financial_advice/put_savings_in"),
        ("Honestly, it's a strong buy.", "financial_advice/strong_buy"),
        ("Allocate 20% of your portfolio to crypto.", "financial_advice/portfolio_allocation"),
        ("My recommendation: buy NVDA now.", "financial_advice/my_recommendation"),
        ("Consider selling your Tesla position.", "financial_advice/consider_trade"),
        ("Now's the time to get into crypto.", "financial_advice/good_time_to_invest"),
        ("Not financial advice, but you should buy NVDA.", "financial_advice/you_should_trade"),
        ("The stock will rise next week.", "price_prediction/will_move"),
        ("Shares are going to double by summer.", "price_prediction/will_move"),
        ("Bitcoin is going to hit $100k.", "price_prediction/will_move"),
        ("I expect the price to hit $200.", "price_prediction/expect_price"),
        ("NVDA will outperform next quarter.", "price_prediction/outperform_period"),
        ("Tesla will climb to $300 soon.", "price_prediction/price_target"),
        ("Trust me, it can only go up.", "price_prediction/only_go_up"),
        ("Please provide your social security number.", "personal_data_request/provide_your"),
        ("Send me your card number and CVV.", "personal_data_request/provide_your"),
        ("What is your date of birth?", "personal_data_request/what_is_your"),
        ("I'll need your password to check.", "personal_data_request/need_your"),
        ("Could I have your home address?", "personal_data_request/may_i_have_your"),
        ("Please confirm your date of birth.", "personal_data_request/please_confirm_your"),
        ("Please type your password here.", "personal_data_request/type_it_here"),
    ],
)
def test_builtin_positive(text: str, pattern: str) -> None:
    assert (pattern.split("/")[0], pattern) in _hits(text)


@pytest.mark.parametrize(
    "text",
    [
        # negated / refused / hedged
        "I can't recommend buying any stock.",
        "I can\u2019t recommend buying any stock.",  # typographic apostrophe
        "This is not financial advice… I won't tell you to buy anything.",
        "I would never tell you that you should buy TSLA.",
        "Whether you should buy index funds depends on your goals.",
        "I cannot predict whether the stock will rise.",
        "Nobody knows if the stock will rise.",
        "There is no guarantee the stock will rise.",
        "Never share your password with anyone, including our staff.",
        "We will never ask you to provide your PIN.",
        "Don't send your card number by e-mail.",
        "If someone asks you to share your SSN, it is a scam.",
        # reported, not given
        "Analysts at Morgan Stanley rated it a strong buy.",
        "Analysts say it is a strong buy.",
        "Analysts expect the price to hit $200.",
        "According to Reuters, the stock will rise after the merger.",
        'The article said "you should buy TSLA now".',
        # not financial / not a request
        "There was a strong sell-off in tech today.",
        "You should buy the Pro plan for more seats.",
        "We recommend buying the annual plan to save 20%.",
        "Your search index will increase in size.",
        "Your bill will reach $50 this month.",
        "To sign in, enter your password on the login page.",
        "Please provide your order number so I can look it up.",
        "The stock rose 5% last week.",
        "",
    ],
)
def test_builtin_negative(text: str) -> None:
    assert _hits(text) == []


def test_detection_fields_span_and_evidence() -> None:
    text = "Sure. You should buy TSLA before earnings, and then hold."
    [hit] = DETECTOR(_event(text))
    assert hit.detector == "policy"
    assert hit.category == hit.failure_mode == "financial_advice"
    assert hit.span is not None
    assert text[hit.span[0] : hit.span[1]] == "You should buy TSLA"
    assert hit.evidence == "financial_advice/you_should_trade: 'You should buy TSLA'"


def test_negation_only_within_the_same_sentence() -> None:
    text = "I can't see your portfolio. You should buy more bitcoin though."
    assert _hits(text) == [("financial_advice", "financial_advice/you_should_trade")]


def test_overlapping_patterns_of_one_pack_count_once() -> None:
    # both will_move and expect_price match "the stock will rise"
    hits = DETECTOR(_event("I predict the stock will rise to $300."))
    assert [h.category for h in hits] == ["price_prediction"]


def test_hits_are_capped_and_evidence_short() -> None:
    text = "You should buy TSLA. " * 100 + "The stock will " + "rise " * 100
    hits = DETECTOR(_event(text))
    assert len(hits) == MAX_HITS
    assert all(len(h.evidence) <= EVIDENCE_MAX_CHARS for h in hits)


def test_packs_option_selects_builtins() -> None:
    detector = PolicyDetector(packs=["price_prediction"])
    assert detector.categories == ("price_prediction",)
    assert _hits("You should buy TSLA.", detector) == []
    assert _hits("The stock will rise.", detector) == [
        ("price_prediction", "price_prediction/will_move")
    ]
    with pytest.raises(ValueError, match="unknown built-in packs"):
        PolicyDetector(packs=["horoscopes"])


USER_PACK = r"""
name: competitor_mention
description: The assistant recommends a competitor.
applies_to: both
patterns:
  - id: switch_to
    regex: '\bswitch to (?:acme|globex)\b'
    description: Switch recommendation.
negations:
  - '\bdo not\b'
"""


def test_user_pack_dir(tmp_path: Path) -> None:
    (tmp_path / "competitor.yaml").write_text(USER_PACK, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored: not a *.yaml file", encoding="utf-8")
    detector = create_detector("policy", packs=[], pack_dirs=[str(tmp_path)])
    assert detector.categories == ("competitor_mention",)
    hits = detector(_event("You could switch to Acme.", query="Should I switch to Globex?"))
    by_span = {h.span is None: h for h in hits}
    assert by_span[False].failure_mode == "competitor_mention"  # defaults to the name
    assert by_span[False].evidence == "competitor_mention/switch_to: 'switch to Acme'"
    assert by_span[True].evidence == "competitor_mention/switch_to (query): 'switch to Globex'"
    assert detector(_event("Please do not switch to Acme.", query="hi")) == []
    both = PolicyDetector(pack_dirs=[str(tmp_path)])
    assert both.categories == (*BUILTIN_PACKS, "competitor_mention")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "name: x\ndescription: d\npatterns:\n  - id: la\n    regex: 'a(?=b)'\n",
            r"bad\.yaml: patterns\.0\.regex \(id 'la'\): invalid RE2 pattern",
        ),
        ("name: x\npatterns:\n  - {id: a, regex: a}\n", r"bad\.yaml: description: Field required"),
        ("name: x\ndescription: d\npatterns: []\n", r"bad\.yaml: patterns: List should have"),
        (
            "name: x\ndescription: d\npatterns:\n  - {id: a, regex: a}\n  - {id: a, regex: b}\n",
            r"bad\.yaml: .*patterns\.1\.id: duplicate pattern id 'a'",
        ),
        (
            "name: x\ndescription: d\npatterns:\n  - {id: a, regex: a, flags: i}\n",
            r"bad\.yaml: patterns\.0\.flags \(id 'a'\): Extra inputs are not permitted",
        ),
        (
            "name: x\ndescription: d\napplies_to: all\npatterns:\n  - {id: a, regex: a}\n",
            r"bad\.yaml: applies_to: Input should be 'response', 'query' or 'both'",
        ),
        (
            "name: x\ndescription: d\nnegations: ['(']\npatterns:\n  - {id: a, regex: a}\n",
            r"bad\.yaml: negations\.0: invalid RE2 pattern",
        ),
        ("name: Bad Name\ndescription: d\npatterns:\n  - {id: a, regex: a}\n", r"bad\.yaml: name:"),
        ("name: [unclosed\n", r"bad\.yaml: invalid YAML"),
        ("- just\n- a list\n", r"bad\.yaml: top level must be a mapping"),
    ],
)
def test_bad_pack_file_fails_at_construction(tmp_path: Path, content: str, expected: str) -> None:
    (tmp_path / "bad.yaml").write_text(content, encoding="utf-8")
    with pytest.raises(PackError, match=expected):
        PolicyDetector(pack_dirs=[str(tmp_path)])


def test_pack_name_collision_and_missing_dir(tmp_path: Path) -> None:
    (tmp_path / "fa.yaml").write_text(
        "name: financial_advice\ndescription: d\npatterns:\n  - {id: a, regex: a}\n"
    )
    with pytest.raises(PackError, match=r"fa\.yaml: name: pack 'financial_advice' already"):
        PolicyDetector(pack_dirs=[str(tmp_path)])
    # replacing a built-in is allowed once the built-in is not enabled
    replaced = PolicyDetector(packs=["price_prediction"], pack_dirs=[str(tmp_path)])
    assert replaced.categories == ("price_prediction", "financial_advice")
    with pytest.raises(PackError, match="does not exist"):
        PolicyDetector(pack_dirs=[str(tmp_path / "missing")])


def test_builtin_pack_files_are_valid_and_documented() -> None:
    for name in BUILTIN_PACKS:
        pack = load_pack(PACK_DIR / f"{name}.yaml")
        assert pack.name == pack.failure_mode == name
        assert pack.negations
        assert all(p.description for p in pack.patterns)


def _best_of_3_ms(detector: PolicyDetector, event: Event) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        detector(event)
        best = min(best, time.perf_counter() - start)
    return best * 1000


@pytest.mark.parametrize(
    "unit",
    [
        "I can't recommend buying any stock. ",  # every match negated
        "Never share your password, nobody knows if the stock will rise, whether it's a good "
        "time to invest, analysts rated it a strong buy; ",
        "you should buy the I recommend buying it's a good time to the stock will ",  # near
        '"You should buy TSLA" ',  # quoted
        "You should buy TSLA. ",  # real hits
    ],
)
def test_100kb_adversarial_is_fast(unit: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    assert _best_of_3_ms(DETECTOR, _event(text)) < 50
