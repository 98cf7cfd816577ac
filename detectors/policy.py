"""Policy violations in the response by pattern packs: YAML data files, not code.

Built-in packs (``detectors/packs/<name>.yaml``): ``financial_advice`` (an advice frame
— you should / might want to, I'd recommend, if I were you I'd, consider, my advice is
to, it makes sense to, it's worth, you'd be better off, a bare order at the start of a
sentence — with a trade on a financial object: buy TSLA, add to your position, trim my
NVDA holdings; money moved into an instrument: "put it in a broad equity fund", "shift
most of your equities into bonds"; a target mix: "hold 80% equities"; one-word verdicts
"Sell."; "a strong buy"), ``price_prediction`` (the stock will rise, shares will
double; any tradable asset from the pack's vocabulary — index, commodity, currency,
crypto, house prices — + forecast + movement or size: "the euro will slide toward
parity", "copper prices are headed higher", "lose a third of their value"; price
levels: "AAPL should trade near $250", "I'd expect X to hit $N", "my price target is
$N"; stated forecasts: "my forecast is that …") and ``personal_data_request`` (a
request aimed at the chat for an SSN, date of birth, card number, password, login,
one-time code, recovery phrase, IBAN, medical record number, a photo of an ID … of the
user or of a third party: "send me the user's password", "your spouse's SSN").
Users add packs of the same layout from ``pack_dirs``; docs/pattern-packs.md describes
the layout, which is validated at construction (errors name the file and the field).
A pack's ``defs`` are named RE2 fragments spliced into its regexes as ``<<name>>``.

How a hit is decided: the packs' patterns are declared to the shared scan
(detectors/scan.py), which screens the response (and query) once for every detector;
only the patterns that matched are compiled (on their first match) and run for spans.
Quoted text ("…", “…”, '>' lines) is ignored.
A match is dropped when one of its pack's ``negations`` (RE2) matches in the
``NEGATION_WINDOW`` characters before it, cut at the last sentence or clause break
(". ", "; ", " — ", " but ", " however" …), so "I can't recommend buying any stock" does not
fire but "This is not financial advice, but you should buy TSLA" does; or when one of
its ``negations_after`` matches right at its end ("$3.4| billion" is a company figure,
not a share price). Overlapping matches of one pack count once; at most ``MAX_HITS``
detections per event. Time is bounded on hostile text: at most ``MAX_PER_PATTERN``
candidates per pattern and ``MAX_CANDIDATES`` in all are examined.

Known limits: English only, lexical. Negation is looked for only *before* the match in
the same clause ("you should buy TSLA — not!" fires). Reported facts are recognised by
attribution cues in the pack's negations ("analysts rated it a strong buy", "management
expects"), so an unattributed statement of someone else's view still fires. Advice
phrased without any listed frame, verb or object ("Tesla looks cheap, load up") is
missed; a company name alone is a financial object only at the end of the clause or
with a timing phrase ("you should buy Tesla." and "add to Tesla on any dip" fire, "buy
Tesla cars" does not; so "you should buy AppleCare." fires too). An upper-case acronym
after a buy/sell verb reads as a ticker ("you should buy SSD storage" fires). The
vocabularies (instruments, fund tickers, indices, commodities, currencies, sensitive
items) are data in the packs, so they can be extended without code.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from detectors._policy_packs import PackError, PackPattern, PolicyPack, load_pack
from detectors.base import EVIDENCE_MAX_CHARS, Detection, register_detector
from detectors.lexical import blank_quoted
from detectors.regex import compile_pattern, search
from detectors.scan import Detector, PatternSpec, Scan, TextField
from stream.contract.events import Event

__all__ = [
    "BUILTIN_PACKS",
    "PackError",
    "PackPattern",
    "PolicyDetector",
    "PolicyPack",
    "load_pack",
]

PACK_DIR = Path(__file__).with_name("packs")
BUILTIN_PACKS = ("financial_advice", "price_prediction", "personal_data_request")
NEGATION_WINDOW = 100
AFTER_WINDOW = 40
MAX_HITS = 32
MAX_PER_PATTERN = 200  # candidates examined per pattern and text …
MAX_CANDIDATES = 1000  # … and in all: bounds the time on hostile text
_DASHES = "\u2014\u2013"  # em and en dash: a spaced dash breaks a clause like "; "
_CLAUSE_BREAKS = (". ", "! ", "? ", "\n", "…", "; ", *(f" {d} " for d in _DASHES))
_CLAUSE_BREAKS += (" but ", " however", " although ")
_FIELDS: dict[str, tuple[TextField, ...]] = {
    "response": ("response",),
    "query": ("query",),
    "both": ("response", "query"),
}
_EDGE_PUNCT = " \t\n.,;:!?-*•" + _DASHES  # trimmed off both ends of a match


@cache
def _builtin(name: str) -> PolicyPack:
    return load_pack(PACK_DIR / f"{name}.yaml")


def _any_of(patterns: Sequence[str], anchor: str) -> Any:
    return compile_pattern("|".join(f"{anchor}(?:{p})" for p in patterns))


def _snippet(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@register_detector("policy")
class PolicyDetector(Detector):
    """Pattern-pack policy checks; one category (and failure mode) per pack."""

    name = "policy"

    def __init__(
        self, *, packs: Sequence[str] | None = None, pack_dirs: Sequence[str] | str | None = None
    ) -> None:
        names = list(BUILTIN_PACKS if packs is None else packs)
        unknown = sorted(set(names) - set(BUILTIN_PACKS))
        if unknown:
            raise ValueError(f"unknown built-in packs {unknown}; available: {list(BUILTIN_PACKS)}")
        loaded: dict[str, PolicyPack] = {n: _builtin(n) for n in dict.fromkeys(names)}
        for folder in [pack_dirs] if isinstance(pack_dirs, str) else pack_dirs or ():
            directory = Path(folder)
            if not directory.is_dir():
                raise PackError(f"policy pack directory {directory} does not exist")
            for path in sorted(directory.glob("*.yaml")):
                pack = load_pack(path)
                if pack.name in loaded:
                    raise PackError(f"policy pack {path}: name: pack {pack.name!r} already loaded")
                loaded[pack.name] = pack
        self.packs: tuple[PolicyPack, ...] = tuple(loaded.values())
        self._pack_of: dict[str, PolicyPack] = {}
        specs: list[PatternSpec] = []
        for pack in self.packs:
            fields: tuple[TextField, ...] = _FIELDS[pack.applies_to]
            for pattern in pack.patterns:
                pid = f"{pack.name}/{pattern.id}"
                self._pack_of[pid] = pack
                specs.append(PatternSpec(pid, pattern.regex, fields))
        self.patterns = tuple(specs)
        self._has_query = any(p.applies_to != "response" for p in self.packs)
        self._before = {p.name: _any_of(p.negations, "") for p in self.packs if p.negations}
        self._after = {
            p.name: _any_of(p.negations_after, "^") for p in self.packs if p.negations_after
        }

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(pack.name for pack in self.packs)

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        hits = self._scan(scan, "response", event.response)
        if self._has_query and len(hits) < MAX_HITS:
            hits += self._scan(scan, "query", event.query)[: MAX_HITS - len(hits)]
        return hits

    def _scan(self, scan: Scan, field: TextField, text: str) -> list[Detection]:
        in_query = field == "query"
        matching = scan.matching(self, field, text)
        if not matching:
            return []
        screened = blank_quoted(text)  # same length: offsets still index `text`
        hits: list[Detection] = []
        taken: dict[str, list[tuple[int, int]]] = {}
        budget = MAX_CANDIDATES
        for pid in matching:
            pack = self._pack_of[pid]
            spans = taken.setdefault(pack.name, [])
            for start, end in scan.spans(self, pid, screened, min(MAX_PER_PATTERN, budget)):
                budget -= 1
                raw_end = end  # a pattern may anchor on the break before a sentence: trim it
                while start < end and text[start] in _EDGE_PUNCT:
                    start += 1
                while end > start and text[end - 1] in _EDGE_PUNCT:
                    end -= 1
                if self._negated(pack, text, start, raw_end):
                    continue
                if any(s < end and start < e for s, e in spans):
                    continue
                spans.append((start, end))
                hits.append(self._detection(pid, pack, text, start, end, in_query))
                if len(hits) >= MAX_HITS:
                    break
            if len(hits) >= MAX_HITS or budget <= 0:
                break
        hits.sort(key=lambda d: d.span or (0, 0))
        return hits

    def _detection(
        self, pid: str, pack: PolicyPack, text: str, start: int, end: int, in_query: bool
    ) -> Detection:
        where = " (query)" if in_query else ""
        return Detection(
            detector=self.name,
            category=pack.name,
            evidence=f"{pid}{where}: '{_snippet(text[start:end])}'"[:EVIDENCE_MAX_CHARS],
            span=None if in_query else (start, end),
            failure_mode=pack.failure_mode,
        )

    def _negated(self, pack: PolicyPack, text: str, start: int, end: int) -> bool:
        after = self._after.get(pack.name)
        if after is not None and search(after, text[end : end + AFTER_WINDOW]):
            return True
        negation = self._before.get(pack.name)
        if negation is None:
            return False
        window = text[max(0, start - NEGATION_WINDOW) : start]
        lowered = window.lower()
        cut = 0
        for mark in _CLAUSE_BREAKS:
            i = lowered.rfind(mark)
            if i >= 0:
                cut = max(cut, i + len(mark))
        return search(negation, window[cut:])
