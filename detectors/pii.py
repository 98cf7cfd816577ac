"""Personal data leaked in the response: e-mail, phone, payment card, IBAN, US SSN.

Categories (failure mode ``pii_leak``): ``email``; ``phone`` (E.164 "+44 20 7946 0958",
NANP "(415) 555-0132" / "415-555-0132", European national numbers with separators
"030 1234 5678", "06 12 34 56 78"); ``payment_card`` (13-19 digits, optional spaces or
dashes, major-network first digit 2-6, Luhn-checked); ``iban`` (country length table,
mod-97 checked); ``us_ssn`` (AAA-GG-SSSS, area 000/666/9xx, group 00 and serial 0000
excluded). Candidates are found by the shared RE2 scan (one pass per text), then
validated in Python; a candidate glued to more digits or letters is dropped, so plain
dates, years, versions, IP addresses and long order numbers do not match (a phone needs
a "+", a trunk "0" or the NANP layout, and a date has too few digits).

Evidence is always masked ("j***@example.com", "card ending 4242", "SSN ***-**-6789",
"phone ending 0132", "IBAN DE** ending 3000"): scorecards go to an audit topic.

``ignore_if_in_context`` (default on): a value that also appears in the query, history,
case fields, retrieved chunks or citations (compared normalised: e-mail case-folded,
phone by its last 9 digits, card/SSN digits only, IBAN without spaces) is not a leak —
the user gave it, or the knowledge base publishes it (a support e-mail or hotline).
Turn it off when the retrieved context may hold other people's data (tickets, CRM
records): then repeating it *is* the leak. Context is scanned only for the categories
found in the response, within ``MAX_CONTEXT_CANDIDATES``; past that, values count as
unseen (reported).

Known limits: role addresses (support@…) and business hotlines not in the context
count as PII; a Luhn-valid 16-digit order number counts as a card; unseparated
national numbers ("0301234567"), lower-case IBANs, SSNs without dashes, names, postal
addresses and non-US national ids are not detected. At most ``MAX_HITS`` detections
per event; on hostile text at most ``MAX_PER_PATTERN`` candidates per pattern and
``MAX_CANDIDATES`` in all are validated (later ones are not reported).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from detectors.base import Detection, register_detector
from detectors.scan import Detector, PatternSpec, Scan, TextField
from stream.contract.events import Event

__all__ = ["CATEGORIES", "IBAN_LENGTHS", "PiiDetector", "luhn_ok", "mod97_ok"]

CATEGORIES = ("email", "phone", "payment_card", "iban", "us_ssn")
MAX_HITS = 32
MAX_PER_PATTERN = 300  # candidates validated per pattern and text …
MAX_CANDIDATES = 1000  # … and in all: bounds the time on hostile text
MAX_CONTEXT_CANDIDATES = 2000  # over all context texts, for ignore_if_in_context

IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
    "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22,
    "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LI": 21,
    "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27,
    "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
    "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip

# (pattern id, category, RE2); case-sensitive (IBANs are upper case), ASCII digits.
_RULES = (
    ("iban", "iban", r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}"),
    ("card", "payment_card", r"\b[2-6](?:[ -]?[0-9]){12,18}\b"),
    ("ssn", "us_ssn", r"\b[0-9]{3}-[0-9]{2}-[0-9]{4}\b"),
    ("intl", "phone", r"\+[1-9](?:[ .()-]{0,2}[0-9]){7,14}"),
    ("nanp", "phone",
     r"(?:\b1[ .-]?)?(?:\([2-9][0-9]{2}\) ?|\b[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}\b"),
    ("national", "phone",
     r"(?:\(0[0-9]{1,4}\) ?|\b0[0-9]{1,4}[ /.-])[0-9]{2,4}(?:[ /.-][0-9]{2,4}){1,4}\b"),
    ("email", "email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b"),
)  # fmt: skip
#: every text the detector reads: the response, and the inputs for ignore_if_in_context
_FIELDS: tuple[TextField, ...] = ("response", "query", "history", "case", "context", "citations")
_CATEGORY_OF = {pid: cat for pid, cat, _ in _RULES}
_PRIORITY = {cat: i for i, cat in enumerate(("iban", "payment_card", "us_ssn", "phone", "email"))}
_PHONE_DIGITS = {"intl": (8, 15), "nanp": (10, 11), "national": (9, 15)}
_LUHN_DOUBLE = str.maketrans("0123456789", "0246813579")
_IBAN_LETTERS = {ord(c): str(n) for n, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10)}
_NOT_DIGITS = str.maketrans("", "", " .-/()+")
_SEPARATORS = "-./ "  # the space last: see _isolated

# A validated candidate: (category, start, end, normalised key, masked evidence)
_Hit = tuple[str, int, int, str, str]


def luhn_ok(digits: str) -> bool:
    """Luhn checksum of a string of ASCII digits."""
    doubled = digits[-2::-2].translate(_LUHN_DOUBLE)  # digit sum of 2*d, digit by digit
    return (sum(map(int, digits[-1::-2])) + sum(map(int, doubled))) % 10 == 0


def mod97_ok(iban: str) -> bool:
    """ISO 13616 check: the rearranged IBAN, letters as 10..35, is 1 modulo 97."""
    return int((iban[4:] + iban[:4]).translate(_IBAN_LETTERS)) % 97 == 1


def _isolated(text: str, start: int, end: int) -> bool:
    """Not part of a longer token: no letter or digit on either side, and no separator
    plus digit that would continue it (a space only when the value itself uses spaces)."""
    seps = _SEPARATORS if " " in text[start:end] else _SEPARATORS[:-1]
    if start > 0:
        before = text[start - 1]
        if before.isalnum() or before in "+@_":
            return False
        if before in seps and start > 1 and text[start - 2].isdigit():
            return False
    if end < len(text):
        after = text[end]
        if after.isalnum() or after in "@_":
            return False
        if after in seps and end + 1 < len(text) and text[end + 1].isdigit():
            return False
    return True


def _digits(value: str) -> str:
    return value.translate(_NOT_DIGITS)  # the candidate patterns allow only these separators


def _email(text: str, start: int, end: int, value: str) -> _Hit | None:
    if text.startswith(":", end) or text[max(0, start - 3) : start] == "://":
        return None  # git@host:org/repo ssh remote, URL userinfo
    local, _, domain = value.partition("@")
    return ("email", start, end, value.lower(), f"{local[0]}***@{domain}")


def _card(text: str, start: int, end: int, value: str) -> _Hit | None:
    digits = _digits(value)
    if (" " in value and "-" in value) or not luhn_ok(digits):
        return None
    if not _isolated(text, start, end):
        return None
    return ("payment_card", start, end, digits, f"card ending {digits[-4:]}")


def _ssn(text: str, start: int, end: int, value: str) -> _Hit | None:
    area, group, serial = value.split("-")
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return None
    if not _isolated(text, start, end):
        return None
    return ("us_ssn", start, end, area + group + serial, f"SSN ***-**-{serial}")


def _iban(text: str, start: int, end: int, value: str) -> _Hit | None:
    length = IBAN_LENGTHS.get(value[:2])
    compact = value.replace(" ", "")
    if length is None or len(compact) < length or not mod97_ok(compact[:length]):
        return None
    if len(compact) > length:  # the pattern ran on into the next word: cut the span
        taken = 0
        for offset, ch in enumerate(value):
            taken += ch != " "
            if taken == length:
                end = start + offset + 1
                break
    if not _isolated(text, start, end):
        return None
    compact = compact[:length]
    return ("iban", start, end, compact, f"IBAN {compact[:2]}** ending {compact[-4:]}")


def _phone(kind: str) -> Callable[[str, int, int, str], _Hit | None]:
    low, high = _PHONE_DIGITS[kind]

    def check(text: str, start: int, end: int, value: str) -> _Hit | None:
        digits = _digits(value)
        if not low <= len(digits) <= high or not _isolated(text, start, end):
            return None
        if len(value) == 11 and value[3] == value[6] == "-":  # AAA-GG-SSSS is SSN-shaped
            return None
        return ("phone", start, end, digits[-9:], f"phone ending {digits[-4:]}")

    return check


_CHECKS: dict[str, Callable[[str, int, int, str], _Hit | None]] = {
    "iban": _iban,
    "card": _card,
    "ssn": _ssn,
    "intl": _phone("intl"),
    "nanp": _phone("nanp"),
    "national": _phone("national"),
    "email": _email,
}


@register_detector("pii")
class PiiDetector(Detector):
    """Masked PII findings in the response; one category per kind of identifier."""

    name = "pii"

    def __init__(
        self, *, categories: Sequence[str] | None = None, ignore_if_in_context: bool = True
    ) -> None:
        wanted = list(CATEGORIES if categories is None else categories)
        unknown = sorted(set(wanted) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown pii categories {unknown}; available: {list(CATEGORIES)}")
        self._categories = tuple(c for c in CATEGORIES if c in wanted)
        self.patterns = tuple(
            PatternSpec(pid, rx, _FIELDS, case_sensitive=True)
            for pid, cat, rx in _RULES
            if cat in self._categories
        )
        self.ignore_if_in_context = ignore_if_in_context

    @property
    def categories(self) -> tuple[str, ...]:
        return self._categories

    def find(
        self, text: str, scan: Scan | None = None, field: TextField = "response"
    ) -> list[_Hit]:
        """Validated, non-overlapping findings in `text`, by position."""
        if scan is None:
            scan = self._scanner().scan()
        found, _ = self._candidates(scan, field, text, set(self._categories), MAX_CANDIDATES)
        found.sort(key=lambda h: (_PRIORITY[h[0]], h[1]))
        kept: list[_Hit] = []  # sorted by start, non-overlapping
        starts: list[int] = []
        for hit in found:  # a card is not also a phone: higher-priority kinds win overlaps
            i = bisect_right(starts, hit[1])
            if (i and kept[i - 1][2] > hit[1]) or (i < len(kept) and kept[i][1] < hit[2]):
                continue
            kept.insert(i, hit)
            starts.insert(i, hit[1])
        return kept

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        hits = self.find(event.response, scan)
        if hits and self.ignore_if_in_context:
            known = self._context_keys(scan, event, {(h[0], h[3]) for h in hits})
            hits = [h for h in hits if (h[0], h[3]) not in known]
        return [
            Detection(self.name, cat, evidence, (start, end), "pii_leak")
            for cat, start, end, _key, evidence in hits[:MAX_HITS]
        ]

    def _candidates(
        self, scan: Scan, field: TextField, text: str, wanted: set[str], budget: int
    ) -> tuple[list[_Hit], int]:
        """Validated findings of the `wanted` categories (overlaps kept), budget left."""
        found: list[_Hit] = []
        for pid in scan.matching(self, field, text):
            if _CATEGORY_OF[pid] not in wanted:
                continue
            check = _CHECKS[pid]
            for start, end in scan.spans(self, pid, text, min(MAX_PER_PATTERN, budget)):
                budget -= 1
                hit = check(text, start, end, text[start:end])
                if hit is not None:
                    found.append(hit)
            if budget <= 0:
                break
        return found, budget

    def _context_keys(
        self, scan: Scan, event: Event, needed: set[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        """Normalised values found in the turn's inputs, of the categories of `needed`
        (the response's values): read in order until every needed value is among them
        (more keys, or a budget spent later, would change nothing for `needed`)."""
        wanted = {cat for cat, _ in needed}
        texts: list[tuple[TextField, Any]] = [("query", event.query)]
        texts += [("history", m.content) for m in event.history]
        if event.case is not None:
            texts += [("case", event.case.subject), ("case", event.case.description)]
            texts += [("case", v) for v in (event.case.metadata or {}).values()]
        texts += [("context", c.content) for c in event.retrieved_context]
        texts += [("citations", c.text) for c in event.citations]
        keys: set[tuple[str, str]] = set()
        budget = MAX_CONTEXT_CANDIDATES  # past it, values count as unseen (reported)
        for field, text in texts:
            if isinstance(text, str) and text and budget > 0:
                found, budget = self._candidates(scan, field, text, wanted, budget)
                keys.update((h[0], h[3]) for h in found)
                if found and needed <= keys:
                    break
        return keys
