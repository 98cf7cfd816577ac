"""Personal data for the demo world: leaked-PII sentences and the look-alikes that are not.

:func:`pii_sentence` writes a ``pii_leak`` sentence (a name with an email, phone number,
payment card, IBAN or SSN) whose values appear nowhere in the sources; cards pass the Luhn
check and IBANs their mod-97 check, so a validating detector sees real-looking values.
:func:`decoy_order_number` is the opposite: a card-shaped order number that fails Luhn
(a tricky negative on clean turns).
"""

from __future__ import annotations

from stream.demo.draft import Draft, Rng, pick
from stream.demo.phrases import load

__all__ = ["decoy_order_number", "luhn_ok", "pii_sentence"]


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def decoy_order_number(rng: Rng) -> str:
    """A 16-digit order reference that fails the Luhn check (not a card number)."""
    while True:
        digits = "".join(str(rng.randrange(10)) for _ in range(16))
        if digits[0] != "0" and not luhn_ok(digits):
            return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


def _luhn_complete(prefix: str, length: int, rng: Rng) -> str:
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    for last in "0123456789":
        if luhn_ok(body + last):
            return body + last
    raise AssertionError("unreachable")


def _card(rng: Rng) -> str:
    digits = _luhn_complete(pick(rng, ("4", "51", "53", "55", "4")), 16, rng)
    sep = pick(rng, (" ", "-", ""))
    return sep.join(digits[i : i + 4] for i in range(0, 16, 4))


def _iban(rng: Rng) -> str:
    cc, bban = pick(rng, (("DE", None), ("GB", None), ("FR", None), ("NL", None)))
    if cc == "DE":
        bban = "".join(str(rng.randrange(10)) for _ in range(18))
    elif cc == "GB":
        bban = pick(rng, ("NWBK", "BARC", "HBUK")) + "".join(
            str(rng.randrange(10)) for _ in range(14)
        )
    elif cc == "FR":
        bban = "".join(str(rng.randrange(10)) for _ in range(23))
    else:
        bban = pick(rng, ("ABNA", "RABO", "INGB")) + "".join(
            str(rng.randrange(10)) for _ in range(10)
        )
    num = "".join(str(int(ch, 36)) for ch in bban + cc + "00")
    check = 98 - int(num) % 97
    iban = f"{cc}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if rng.random() < 0.6 else iban


def _ssn(rng: Rng) -> str:
    area = rng.randint(1, 899)
    if area == 666:
        area = 667
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def _phone(rng: Rng) -> str:
    a, b, c = rng.randint(201, 989), rng.randint(201, 989), rng.randint(1000, 9999)
    return pick(
        rng,
        (
            f"({a}) {b}-{c}",
            f"+1 {a} {b} {c}",
            f"{a}-{b}-{c}",
            f"{a}.{b}.{c}",
            f"+44 20 7946 {rng.randint(1000, 9999)}",
        ),
    )


def _email(rng: Rng, first: str, last: str) -> str:
    dom = pick(
        rng,
        (
            "gmail.com",
            "outlook.com",
            "proton.me",
            "yahoo.com",
            pick(rng, load("it_support")["orgs"]).lower().replace(" ", "") + ".com",
        ),
    )
    return pick(
        rng,
        (
            f"{first}.{last}@{dom}",
            f"{first[0]}{last}@{dom}",
            f"{last}.{first}{rng.randint(1, 99)}@{dom}",
        ),
    ).lower()


def pii_sentence(rng: Rng, d: Draft, sources: str, it_only_contact: bool = False) -> str:
    """A sentence leaking personal data none of `sources` holds (an admin's contact only,
    with `it_only_contact`)."""
    people, bank = load("it_support"), load("failures")
    for _ in range(20):
        first, last = pick(rng, people["first_names"]), pick(rng, people["last_names"])
        vals = {
            "name": f"{first} {last}",
            "email": _email(rng, first, last),
            "phone": _phone(rng),
            "card": _card(rng),
            "iban": _iban(rng),
            "ssn": _ssn(rng),
            **d.vars,
        }
        if it_only_contact:
            tmpl = pick(rng, bank["pii_admin_contact"])
        else:
            tmpl = pick(rng, bank["pii_earnings"] if d.domain == "earnings" else bank["pii_it"])
        text = tmpl.format(**vals)
        used = [vals[k] for k in ("email", "phone", "card", "iban", "ssn") if "{" + k + "}" in tmpl]
        if all(u not in sources for u in used):
            return text
    return text
