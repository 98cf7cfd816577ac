"""The `pii` detector: validated, masked findings; context-aware suppression; speed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from detectors import create_detector
from detectors.pii import CATEGORIES, MAX_HITS, PiiDetector, luhn_ok, mod97_ok
from stream.contract.events import Event, EventLimits

DETECTOR = PiiDetector()


def _event(response: str, query: str = "Where is my order?", **extra: Any) -> Event:
    data = {"event_id": "e1", "query": query, "response": response, **extra}
    return Event.model_validate(data, context={"limits": EventLimits(max_text_chars=500_000)})


def _found(response: str, detector: PiiDetector = DETECTOR) -> list[tuple[str, str, str]]:
    """(category, masked evidence, matched text) per hit."""
    out = []
    for d in detector(_event(response)):
        assert d.detector == "pii" and d.failure_mode == "pii_leak" and d.span is not None
        out.append((d.category, d.evidence, response[d.span[0] : d.span[1]]))
    return out


def test_registered_and_categories() -> None:
    detector = create_detector("pii")
    assert isinstance(detector, PiiDetector)
    assert detector.categories == CATEGORIES == ("email", "phone", "payment_card", "iban", "us_ssn")
    subset = PiiDetector(categories=["us_ssn", "email"])
    assert subset.categories == ("email", "us_ssn")
    assert _found("Call +1 415 555 0132 or mail a@b.io", subset) == [
        ("email", "a***@b.io", "a@b.io")
    ]
    with pytest.raises(ValueError, match="unknown pii categories"):
        PiiDetector(categories=["email", "dna"])


@pytest.mark.parametrize(
    ("text", "category", "evidence", "value"),
    [
        ("Mail john.doe@example.com today.", "email", "j***@example.com", "john.doe@example.com"),
        ("Reach her at +44 20 7946 0958.", "phone", "phone ending 0958", "+44 20 7946 0958"),
        ("E.164 form: +14155550132.", "phone", "phone ending 0132", "+14155550132"),
        ("Call (415) 555-0132 now.", "phone", "phone ending 0132", "(415) 555-0132"),
        ("Call 415-555-0132.", "phone", "phone ending 0132", "415-555-0132"),
        ("Call 1-800-555-0199.", "phone", "phone ending 0199", "1-800-555-0199"),
        ("Berlin office: 030 1234 5678.", "phone", "phone ending 5678", "030 1234 5678"),
        ("Portable : 06 12 34 56 78", "phone", "phone ending 5678", "06 12 34 56 78"),
        ("Card 4242 4242 4242 4242 was charged.", "payment_card", "card ending 4242",
         "4242 4242 4242 4242"),
        ("Card 4111-1111-1111-1111.", "payment_card", "card ending 1111", "4111-1111-1111-1111"),
        ("Amex 378282246310005.", "payment_card", "card ending 0005", "378282246310005"),
        ("IBAN DE89 3704 0044 0532 0130 00 please.", "iban", "IBAN DE** ending 3000",
         "DE89 3704 0044 0532 0130 00"),
        ("Pay to GB82WEST12345698765432.", "iban", "IBAN GB** ending 5432",
         "GB82WEST12345698765432"),
        ("IBAN: DE89370400440532013000 IBAN", "iban", "IBAN DE** ending 3000",
         "DE89370400440532013000"),
        ("Her SSN is 123-45-6789.", "us_ssn", "SSN ***-**-6789", "123-45-6789"),
    ],
)  # fmt: skip
def test_positive_with_masked_evidence(text: str, category: str, evidence: str, value: str) -> None:
    assert _found(text) == [(category, evidence, value)]
    digits = "".join(ch for ch in value if ch.isalnum())
    assert value not in evidence and (len(digits) < 9 or digits not in evidence)


@pytest.mark.parametrize(
    "text",
    [
        "Luhn fails: 4242 4242 4242 4241.",
        "Order 4000123412341235 shipped.",  # 16 digits, Luhn fails
        "Order number 123456789012 and 12345678901234567890.",  # too short / too long
        "Released 2023-01-15, 15/01/2023, 05.01.2023 at 10:30; in 2024.",
        "Upgrade to version 10.0.19041.1234 or v1.2.3; build 2.345.6789.",
        "Servers 192.168.100.200 and 10.0.0.1 are down.",
        "Invalid SSNs: 000-12-3456 666-12-3456 900-12-3456 123-00-4567 123-45-0000.",
        "Ticket 123-45-6789-01 is open.",  # SSN-shaped prefix of a longer id
        "Bad checksum DE89 3704 0044 0532 0130 01, unknown country ZZ89370400440532013000.",
        "Clone git@github.com:org/repo.git first.",
        "Ref 5551234567 and 0612345678 are plain numbers.",  # no separators, no '+'
        "Part ABC-415-555-0132X is back in stock.",
        "",
    ],
)
def test_negative(text: str) -> None:
    assert _found(text) == []


def test_card_is_not_also_a_phone_and_hits_are_ordered() -> None:
    text = "Ssn 219-09-9999, card 5555-5555-5555-4444, mail x@y.org, tel +33 6 12 34 56 78."
    assert [c for c, _, _ in _found(text)] == ["us_ssn", "payment_card", "email", "phone"]


def test_value_from_context_is_not_a_leak() -> None:
    chunk = {"id": "kb1", "content": "Write to support@acme.example or call +1 (415) 555-0132."}
    text = "Contact support@ACME.example or 415.555.0132; your agent is jane@acme.example."
    event = _event(text, retrieved_context=[chunk])
    assert [d.evidence for d in DETECTOR(event)] == ["j***@acme.example"]
    keep = PiiDetector(ignore_if_in_context=False)
    assert [d.category for d in keep(event)] == ["email", "phone", "email"]
    # the user's own number, given in the query or history, is echoed back: not a leak
    own = _event(
        "I updated your phone to +44 20 7946 0958.",
        query="hi",
        history=[{"role": "user", "content": "my new number is 020 7946 0958"}],
    )
    assert DETECTOR(own) == []


def test_hits_capped() -> None:
    text = " ".join(f"user{i}@example.com" for i in range(100))
    assert len(DETECTOR(_event(text))) == MAX_HITS


def test_checksums() -> None:
    assert luhn_ok("4242424242424242") and not luhn_ok("4242424242424241")
    assert luhn_ok("79927398713")
    assert mod97_ok("GB82WEST12345698765432") and not mod97_ok("GB82WEST12345698765433")


def _luhn_complete(prefix: str) -> str:
    return next(prefix + d for d in "0123456789" if luhn_ok(prefix + d))


@given(st.from_regex(r"4[0-9]{14}", fullmatch=True), st.sampled_from([" ", "-", ""]))
def test_any_valid_card_is_found_and_masked(prefix: str, sep: str) -> None:
    number = _luhn_complete(prefix)
    shown = sep.join(number[i : i + 4] for i in range(0, 16, 4))
    [hit] = DETECTOR(_event(f"Your card {shown} is on file."))
    assert hit.category == "payment_card"
    assert hit.evidence == f"card ending {number[-4:]}" and number[:12] not in hit.evidence


@given(
    st.integers(1900, 2099), st.integers(1, 12), st.integers(1, 28), st.integers(0, 99),
    st.integers(0, 99999),
)  # fmt: skip
def test_dates_and_versions_are_not_pii(y: int, m: int, d: int, minor: int, patch: int) -> None:
    text = (
        f"On {y}-{m:02d}-{d:02d} ({d:02d}/{m:02d}/{y}, {d:02d}.{m:02d}.{y}) we shipped "
        f"v{m}.{minor}.{patch} and {y}.{minor}.{patch}."
    )
    assert _found(text) == []


def _best_of_3_ms(event: Event) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        DETECTOR(event)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _fill(unit: str, size: int = 100_000) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize(
    "unit",
    [
        "4242 4242 4242 4241 x ",  # Luhn-failing cards
        "415-555-01 ",  # near-miss phones
        "415-555-0132 ",  # real phones
        "x@y.co ",  # real e-mails
        "a.b.c@d",  # near-miss e-mails
        "DE89 3704 0044 0532 0130 01 ",  # bad IBAN checksums
        "000-12-3456 ",  # invalid SSNs
        "2023-01-15 05.01.2023 +1 ",  # dates
        "1234567890",  # one long digit run
    ],
)
def test_100kb_adversarial_is_fast(unit: str) -> None:
    assert _best_of_3_ms(_event(_fill(unit))) < 50


def test_adversarial_context_is_bounded() -> None:
    chunks = [{"id": f"c{i}", "content": _fill("415-555-0133 ", 19_000)} for i in range(20)]
    event = _event(_fill("415-555-0132 "), retrieved_context=chunks)
    assert _best_of_3_ms(event) < 50
