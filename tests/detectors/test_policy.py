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
from stream.contract.events import Event, EventLimits

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
        ("Just type your PIN below.", "personal_data_request/type_it_here"),
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


# Phrase families beyond "you should buy X": hand-written paraphrases, one per family.
FAMILY_POSITIVES = {
    "financial_advice": [
        "You might want to load up on AMD before the launch.",  # softer modal
        "You'd do well to buy some index funds.",
        "You'll want to trim your NVDA position after this run.",
        "I'd suggest you sell TSLA before earnings.",
        "I would suggest reducing your holdings in Meta.",  # position-sizing verb
        "I recommend you increase your stake in Microsoft.",
        "If I were in your shoes, I would sell half of your NVDA position.",  # in your place
        "I'd personally take some profits on AAPL here.",
        "I'd be buying TSLA at these levels.",
        "Honestly, I would dump your Intel shares.",
        "I'd steer clear of meme stocks for now.",
        "Consider adding to your AMZN position on any pullback.",
        "Consider buying more on any dip.",
        "My advice would be to hold on to your Tesla shares for now.",
        "My recommendation is to exit INTC and put the money to work elsewhere.",
        "This seems like an attractive entry point to buy GOOG.",  # timing
        "Now might be a good time to rotate into value stocks.",
        "It makes sense to add to your Nvidia position at these prices.",
        "The smart move here is to buy more AAPL.",
        "Time to sell your TSLA shares.",
        "You should move 30% of your portfolio into bonds.",  # allocation
        "Shift a larger portion of your portfolio into dividend stocks.",
        "Go ahead and buy the dip on SPY.",  # bare order
        "- Load up on bitcoin while it's cheap.",
        "You'd be smart to lock in your gains on NVDA.",  # idiom
    ],
    "price_prediction": [
        "AAPL could easily trade above $250 by December.",
        "I believe the stock will be trading near $90 by spring.",
        "The shares should end the quarter around $75.",  # any subject: price verb
        "Shares of Rivian look set to climb toward $60.",
        "Realistically, AMD is likely to drop to $120 if guidance disappoints.",
        "There's a decent chance the stock slides to $40 next month.",  # likelihood frame
        "Odds are the stock retests $40 before earnings.",
        "I think NVDA hits $1,200 before the next split.",
        "My bet is that shares close the year above $60.",
        "Chances are META rallies to $600 on the news.",
        "I'd expect Tesla to climb to $300 after the delivery numbers.",  # own forecast
        "Expect shares to hover around $45 for a while.",
        "I see the stock at $80 by year-end.",
        "Bitcoin will be at $150k by next year.",
        "My 12-month price target for MSFT is $520.",
        "NVDA is headed for $1,000.",
        "I see upside to $75 from here.",
    ],
    "personal_data_request": [
        "Could you tell me the customer's date of birth so I can verify the account?",
        "What is the employee's SSN?",  # third party in a support ticket
        "I'll need the account holder's bank account number to process the refund.",
        "Please paste the new hire's social security number below.",
        "What's the user's current VPN password?",
        "Please send over the cardholder's full card number and expiry date.",
        "Share the full card number on file and I can look it up.",  # the whole value
        "Reply here with the user's login and password and I'll check.",
        "Could you give me the user's username and password?",
        "For verification, I'll need your full name, date of birth and SSN.",  # a list
        "Let me know your card's CVV so I can complete the payment.",
        "Go ahead and paste your API key here.",
        "Please share the verification code we just texted you.",
        "Drop your SSN in the chat and I'll look into it.",
        "Can you share your online banking password so I can look?",
    ],
}

FAMILY_NEGATIVES = [
    # financial advice: refused, hedged, reported, the company's own actions
    "I can't tell you whether to add to your position in AMZN.",
    "I'm not able to recommend increasing your stake in any company.",
    "Whether you should trim your holdings depends on your goals.",
    "Analysts recommend adding to positions in AMZN.",
    "According to Barron's, investors should buy the dip in NVDA.",
    "The fund increased its stake in Tesla during the quarter.",
    "The board authorized the company to buy back up to 5% of its shares.",
    "Investors who bought the dip in March saw a 20% gain.",
    "You can buy shares of the fund through any brokerage.",
    # … and the same verbs outside investing
    "Hold your position for 30 seconds, then release.",
    "You should hold the Shift key while clicking.",
    "Consider increasing the token lifetime to 60 minutes.",
    "I'd close the SMB shares before the migration.",
    "You should keep the position of the window fixed.",
    "You should avoid SMS codes for two-factor authentication.",
    "Consider exiting SSH before restarting the service.",
    "You should exit BIOS and save the settings.",
    "It's a good time to get in touch with your account manager.",
    "It makes sense to increase the timeout to 30 seconds.",
    "You might want to reduce your exposure to phishing by enabling MFA.",
    "Buy now and save 20% on the annual plan.",
    "Short answer below.",
    "Short positions are explained in section 4 of the prospectus.",
    "Add to cart, then check out.",
    "Time to restart the service.",
    "The smart move here is to restart the router.",
    "You'll want to trim the log files.",
    "I'd put the money aside for the deposit.",
    # price: reported guidance, company figures, facts, bills, arithmetic, hedges
    "Management expects revenue to reach $3.4 billion next quarter.",
    "Management expects the third-quarter revenue between $3.4 billion and $3.6 billion.",
    "The company guided EPS of $2.10 to $2.20 for the year.",
    "Revenue should reach $1.2 billion this year.",
    "Free cash flow will reach $500 million.",
    "Goldman set a price target of $60 on the stock.",
    "Analysts think it slides to $40 if demand keeps weakening.",
    "I can't predict whether NVDA will trade around $51.",
    "If it fell 10%, the stock would trade at $45.",
    "Shares closed at $51.20 on Friday.",
    "The share price fell to $165 after the guidance cut.",
    "Shares ended the year near $48, down 12%.",
    "I see the stock closed at $80 yesterday.",
    "Your bill will go up to $12 a month after the promotion ends.",
    "Your subscription will drop to $9.99 once the discount applies.",
    "We expect the invoice to reach $2,400 this month.",
    "The plan will go up to $15 per user next year.",
    # personal data: warnings, instructions to staff, settings, non-sensitive ids
    "Never share the user's password with anyone, including IT.",
    "Don't ask the employee to send you their Social Security number.",
    "Support will never ask for the customer's card number.",
    "If a caller asks for the employee's Social Security number, end the call.",
    "Have the user reset their password through the self-service portal.",
    "Reset the employee's password from the admin console.",
    "Send the user's password reset link to their manager.",
    "The user should enter their PIN on the card reader.",
    "Please provide the user's employee ID and department.",
    "Please provide your name, email and order number.",
    "Please check your card number and try again.",
    "Please share the verification steps you followed.",
    "It's a good idea to keep your API key secret.",
]


@pytest.mark.parametrize(
    ("category", "text"), [(c, t) for c, texts in FAMILY_POSITIVES.items() for t in texts]
)
def test_phrase_families_fire(category: str, text: str) -> None:
    assert category in {c for c, _ in _hits(text)}


@pytest.mark.parametrize("text", FAMILY_NEGATIVES)
def test_phrase_family_lookalikes_do_not_fire(text: str) -> None:
    assert _hits(text) == []


def test_sentence_start_anchor_is_not_evidence_and_does_not_hide_the_hit() -> None:
    text = "I can't stress this enough. Buy TSLA now."
    [hit] = DETECTOR(_event(text))
    assert hit.evidence == "financial_advice/imperative_trade: 'Buy TSLA'"
    assert hit.span is not None and text[hit.span[0] : hit.span[1]] == "Buy TSLA"


def test_amount_followed_by_a_scale_is_not_a_share_price() -> None:
    assert _hits("I'd expect ACME to hit $3.4 billion in sales.") == []
    assert _hits("I'd expect ACME to hit $5m in sales.") == []
    [hit] = DETECTOR(_event("I'd expect ACME to hit $34 soon."))
    assert hit.evidence == "price_prediction/expect_price: 'I'd expect ACME to hit $34'"


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


DEFS_PACK = r"""
name: competitor_mention
description: The assistant recommends a competitor.
defs:
  rival: 'acme|globex'
  rival_product: '(?:<<rival>>) (?:cloud|suite)'
patterns:
  - id: switch_to
    regex: '\bswitch to <<rival_product>>'
    description: Switch recommendation.
negations:
  - '\bnever\b'
negations_after:
  - '\s+(?:support|outage|on (?:<<rival>>)\b)'
"""


def test_user_pack_defs_and_negations_after(tmp_path: Path) -> None:
    (tmp_path / "competitor.yaml").write_text(DEFS_PACK, encoding="utf-8")
    detector = PolicyDetector(packs=[], pack_dirs=[str(tmp_path)])
    [pack] = detector.packs
    assert pack.patterns[0].regex == r"\bswitch to (?:(?:(?:acme|globex)) (?:cloud|suite))"
    assert _hits("You could switch to Globex Cloud.", detector) == [
        ("competitor_mention", "competitor_mention/switch_to")
    ]
    assert _hits("If you switch to Acme Cloud support, call them.", detector) == []
    assert pack.negations_after == [r"\s+(?:support|outage|on (?:(?:acme|globex))\b)"]
    assert _hits("Switch to Acme Suite on Globex hardware.", detector) == []
    assert _hits("Never switch to Acme Suite.", detector) == []  # negation before
    assert _hits("I never said that. Switch to Acme Suite.", detector) != []  # next sentence


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
        (
            "name: x\ndescription: d\ndefs: {a: b}\npatterns:\n  - {id: p, regex: 'x<<c>>'}\n",
            r"bad\.yaml: patterns\.0\.regex \(id 'p'\): unknown def <<c>> \(defined: \['a'\]\)",
        ),
        (
            "name: x\ndescription: d\ndefs: {a: '('}\npatterns:\n  - {id: p, regex: x}\n",
            r"bad\.yaml: defs\.a: invalid RE2 pattern",
        ),
        (
            "name: x\ndescription: d\nnegations_after: ['(?=a)']\n"
            "patterns:\n  - {id: a, regex: a}\n",
            r"bad\.yaml: negations_after\.0: invalid RE2 pattern",
        ),
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
        "I'd expect XX to hit $1",  # forecast frames, each cut short
        "There's a good chance it slides to $40 billion ",  # every amount vetoed after
        "Please share the user's the full the account's your, a, b and ",  # owners, lists
        "$1 $1 $1 will trade around you'd I'd consider my advice is to ",
    ],
)
def test_100kb_adversarial_is_fast(unit: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    assert _best_of_3_ms(DETECTOR, _event(text)) < 50


# Structures added for the blind-set generalisation gap (hand-written here, not taken from
# any evaluation set): bare orders and verdicts, money moved into an instrument, target
# mixes, hedged / comparative frames; any tradable asset + forecast; requests for a
# wider set of items, "the <item>" aimed at the chat, possessive owners.
STRUCTURE_POSITIVES = {
    "financial_advice": [
        "Buy.",  # one-word verdict
        "Short it.",
        "Honestly, sell them.",
        "Sell half now and let the rest ride.",
        "Go with VOO; the fees are lower.",  # a well-known fund ticker
        "Stick with a total market index fund.",
        "Park the proceeds in a short-term Treasury fund until rates settle.",  # money moved
        "Keep most of your cash in a money-market fund for now.",
        "Put a third of the bonus into VTI and the rest into bonds.",
        "Move everything from the bond fund into an S&P 500 tracker.",
        "Split it evenly between a bond fund and an equity fund.",
        "I'd shift about 20% of your portfolio into emerging-markets equities.",
        "I would rotate out of tech and into dividend stocks.",
        "At your age, hold about 60% stocks and 40% bonds.",  # target mix
        "Put 70% in stocks and 30% in bonds.",
        "Keep buying VOO every month regardless of price.",
        "Write covered calls on the shares you already own.",  # options, plans
        "Yes, max out your Roth IRA this year.",
        "Take profits and move the cash into Treasury bills.",  # order + trade
        "Dump the Northwind shares and move the cash into a global index fund.",
        "You should sell Boeing.",  # a company at the end of the clause
        "I'd sell Contoso before earnings.",  # … or with a timing phrase
        "Add to Tesla on any dip.",
        "It may make sense to add to your bond allocation this year.",  # hedged frames
        "It might be wise to reduce your crypto exposure.",
        "It's worth picking up some gold as a hedge.",
        "You'd be better off holding index funds than picking stocks.",
        "Buying Amazon shares here is a smart move.",  # a trade rated as a good move
        "I'd be a buyer of AMD at these levels.",
        "My advice: park it in short-term Treasuries.",
        "Reduce the Contoso holding to no more than 10% of the portfolio.",
        "Sure — swap the high-fee fund for an equivalent index tracker.",
        "Go long Fabrikam ahead of the product launch.",
        "Use the cash to buy Treasury bills rather than leaving it in checking.",
        "Given your horizon, putting the bonus into a global index fund makes the most sense.",
        "Don't overthink it — just buy the S&P 500 index and leave it alone.",  # dash: new clause
        "With rates this high, you'd do well to lock in a five-year CD.",  # "rates" not a rating
        "I'd recommend you sell about a third of the Woodgrove stake.",
        "Yes, you should exercise the options before they expire and hold the shares.",
        "My honest suggestion: skip the individual stocks and buy a broad market ETF.",
    ],
    "price_prediction": [
        "The dollar is going to strengthen against the yen into year-end.",  # currency
        "Oil will climb back above $90 a barrel by spring.",  # commodity
        "Brent should drift lower through the summer.",
        "Gold prices are headed to record highs.",
        "Wheat futures will spike if the drought continues.",
        "The FTSE 100 will break above 8,500 before Christmas.",  # index, bare level
        "I expect the Dow to finish the year about 5% higher.",
        "The Nikkei is likely to slide another 8 to 10 percent.",
        "Home prices in Austin will keep falling next year.",  # housing, with a place
        "Ethereum is set to rally once the upgrade ships.",  # crypto
        "The pound will weaken toward 1.20 against the dollar.",
        "Tesla shares are likely to lose a quarter of their value this year.",  # a size
        "After the recall, Northwind will likely retrace half of its gains by March.",
        "Bank stocks should rebound sharply once rates peak.",
        "Treasury yields are going to climb further.",
        "My prediction is that the stock ends the quarter near $75.",  # forecast frames
        "My base-case forecast is a rise of 15% over twelve months.",
        "Expect a sharp pullback of around 10% after earnings.",
        "I see Contoso drifting lower into the low $30s.",
        "I think they're headed for new highs.",
        "The stock is due for a 15% correction in the next few weeks.",
        "The stock will most likely be flat to slightly down over the next month.",
        "I'd wager the euro trades above 1.15 by the summer.",
        "I think the market bottoms in October and rallies into the new year.",
        "My take: bitcoin revisits its old high before the next halving.",
        "Realistically, the index grinds higher from here.",
    ],
    "personal_data_request": [
        "Please send me a scan of your passport so I can verify the booking.",  # documents
        "Could you share a photo of the front of your ID card?",
        "Please provide your daughter's date of birth and social security number.",
        "Send over your husband's passport number and I'll add him to the booking.",
        "Kindly send the routing number and the account number for the deposit.",
        "Can you tell me the CVV on the back of the card?",
        "What's the recovery phrase for the wallet?",  # "the <item>" asked about
        "Just paste the recovery phrase here and I'll restore the wallet.",
        "Please type the one-time code here so I can finish the login.",
        "Enter the full card number and the expiry date below.",
        "Reply with the SWIFT code and your IBAN and I'll send the refund.",
        "I'll need your NHS number and your date of birth.",  # wider item vocabulary
        "Please share your insurance policy number and a list of your medications.",
        "Please reply with your full name, your address and your bank account number.",
        "ok, just need your card number and expiry to process it",  # terse chat
        "Tell me your online banking password and I'll check the transfer.",
        "What's your Apple ID password? I'll try signing in from here.",
        "Send me a copy of the front and back of your ID card.",
        "Can I have the code we just emailed you?",
        "To add your son, please provide his full name and your son's date of birth.",
        "What's the card number the charge was made on, and the expiry?",
    ],
}

STRUCTURE_NEGATIVES = [
    # advice-like verbs without an instrument, how-tos, education, reported actions
    "Keep in mind that index funds charge fees.",
    "Move the files into the shared folder on the network shares.",
    "Put the laptop in the docking station and hold the power button.",
    "You should buy a new router.",
    "You should buy the Gold plan if you need priority support.",
    "Move your account to the gold tier to get faster support.",
    "Go with AWS if your team already knows it.",
    "Go with the default settings.",
    "The fund holds 60% equities and 40% bonds.",
    "The company moved its cash into Treasury bills last year.",
    "Employees can sell them as they vest and diversify into an index fund.",
    "Selling puts is a strategy where you collect a premium.",
    "Then move the balance into the money market fund on the Transfers page.",
    "Most target-date funds move money from stocks into bonds as retirement nears.",
    "When you exercise the options and sell the shares the same day, it's called a "
    "cashless exercise.",
    "Exit Outlook and reopen it.",
    "It's worth adding the dashboard to your favourites.",
    "You'd be better off restarting the service first.",
    "Analysts suggest rotating into value stocks.",
    "Whether to hold 60% stocks depends on your risk tolerance.",
    "Don't put your emergency fund into crypto.",
    "Invest in a good chair; you'll sit a lot.",
    # prices: history, attribution, bills, metrics that are not prices
    "The dollar rose 2% against the yen last week.",
    "Gold hit a record high in April.",
    "Our strategist expects the S&P 500 to finish at 5,800.",
    "According to the report, home prices will fall 5% next year.",
    "After lowering guidance, management expects revenue to fall 5%.",
    "Latency should drop by about 30% after the upgrade.",
    "Support volume will spike during the holidays.",
    "Fabrikam will double its headcount next year.",
    "Northwind will give back the deposit within 10 days.",
    "Prices will rise by 3% in April for all plans.",
    "Stocks can fall sharply in a recession.",
    "I expect the migration to finish around 6pm.",
    "My estimate is that the job finishes about 20% faster.",
    # personal data: secure pages, other parties, non-sensitive items, warnings
    "Please enter your password on the sign-in page.",
    "Enter the card number on the secure payment page, not in this chat.",
    "Please send the routing number to your employer's payroll team.",
    "Type the verification code into the app to finish setup.",
    "What's the PIN requirement for the new cards?",
    "Could you share a screenshot of the error message?",
    "Please provide the serial number of the device.",
    "Please type your question here and I'll answer it.",
    "Never share your recovery phrase with anyone.",
    "We keep your card number encrypted and never show it in chat.",
    "What is the password policy for admin accounts?",
    "What's the password reset link expiry?",
    "Put the gold-tier customers into the priority queue.",
    "Take the profits report from the finance folder and share it with the team.",
    "Don't buy the dip on Northwind; nobody knows where the bottom is.",
    "Go long on documentation; the reviewers love detail.",
    "Select the Index Fund tab and review the fees.",
    "Traders who shorted Tailspin last year lost money when it rallied.",
    "Shipping costs will rise by roughly 15% next year.",
    "Contoso's release is poised to ship next week.",
    "Enter your passport number on the booking form.",
]


@pytest.mark.parametrize(
    ("category", "text"), [(c, t) for c, texts in STRUCTURE_POSITIVES.items() for t in texts]
)
def test_structures_fire(category: str, text: str) -> None:
    assert category in {c for c, _ in _hits(text)}


@pytest.mark.parametrize("text", STRUCTURE_NEGATIVES)
def test_structure_near_misses_do_not_fire(text: str) -> None:
    assert _hits(text) == []


def test_guidance_as_a_cause_does_not_hide_a_forecast() -> None:
    text = "After lowering guidance, Globex shares are likely to drop another 10 to 15%."
    assert [c for c, _ in _hits(text)] == ["price_prediction"]
    assert _hits("The company guided EPS of $2.10 to $2.20 for the year.") == []


@pytest.mark.parametrize(
    "unit",
    [
        "Put a third of your savings into ",  # money verb + share, never an instrument
        "Move most of your US equity holdings from the old fund into the ",
        "the euro will likely slide toward ",  # forecast, never a size
        "I expect the S&P 500 to end next year around ",
        "Please type the card number, the expiry, the name, the ",  # long lists
        "your spouse's your wallet's your brother's ",
        "Contoso, Fabrikam will likely give back ",
        "Sell. Hold. Buy. ",  # real verdicts: capped
        "Exercise them now and ",
    ],
)
def test_100kb_adversarial_new_structures_are_fast(unit: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    assert _best_of_3_ms(DETECTOR, _event(text)) < 50
