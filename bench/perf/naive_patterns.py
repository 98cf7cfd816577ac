"""The detectors' screened pattern set, and the seed plan's naive way of matching it.

`pattern_table()` reads every response pattern the rule detectors declare to the shared
RE2 scan (`PatternDetector.patterns`: policy packs, refusal pack, PII, identifiers)
straight from the constructed detectors, so the benchmark can never drift from what
ships; `detector_sets()` puts each detector's patterns in one RE2 `PatternSet`.
`NaiveMatcher` is the seed plan's implementation style: the same regexes compiled with
Python's backtracking `re` (`re.IGNORECASE` where RE2 is case-insensitive) and a Python
loop of `re.search` per pattern per response. `EngineMatcher` is ragpulse's engine on the
same sets: one `re2.Set` pass per set, then spans only for the patterns that matched.

Run alone for the adversarial case in a child process (the parent kills it at a cap):
``python -m bench.perf.naive_patterns --case long_token --runs 3`` prints JSON timings.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from typing import Any

from detectors.identifiers import IdentifierDetector
from detectors.pii import PiiDetector
from detectors.policy import PolicyDetector
from detectors.refusal import RefusalDetector
from detectors.regex import PatternSet, iter_spans

__all__ = [
    "ADVERSARIAL",
    "SPAN_LIMIT",
    "EngineMatcher",
    "NaiveMatcher",
    "PatternRow",
    "adversarial_text",
    "detector_sets",
    "pattern_table",
]

SPAN_LIMIT = 200  # spans taken per matching pattern (the detectors' MAX_PER_PATTERN)
ADVERSARIAL_BYTES = 100 * 1024
#: 100 KB inputs built against backtracking: a long token with no "@" (the e-mail
#: pattern's `[...]+@` retries from every start: quadratic), a long path-like run
#: (identifiers' path pattern, same shape), and dense digits (card / phone patterns).
ADVERSARIAL: dict[str, str] = {
    "long_token": "a",
    "slash_run": "/a",
    "spaced_digits": "1 ",
}


@dataclass(frozen=True)
class PatternRow:
    key: str  # "<set>/<pattern id>"
    pattern: str
    case_sensitive: bool


def detector_sets() -> dict[str, PatternSet]:
    """One PatternSet per built-in detector (default options) over the response patterns
    it declares to the shared scan (`PatternDetector.patterns`, detectors/scan.py): what
    every response is screened with. A detector whose declarations mix case-sensitive
    and insensitive patterns gets one set per kind (``name`` and ``name.cs``). The
    refusal pack's vetoes are not declared: they only run on a candidate's sentence."""
    out: dict[str, PatternSet] = {}
    for det in (PolicyDetector(), RefusalDetector(), PiiDetector(), IdentifierDetector()):
        specs = [s for s in det.patterns if "response" in s.fields]
        kinds = {s.case_sensitive for s in specs}
        for cs in sorted(kinds):
            name = det.name if len(kinds) == 1 or not cs else f"{det.name}.cs"
            rows = [(s.id, s.regex) for s in specs if s.case_sensitive == cs]
            out[name] = PatternSet(rows, case_sensitive=cs)
    return out


def pattern_table(sets: dict[str, PatternSet] | None = None) -> list[PatternRow]:
    rows: list[PatternRow] = []
    for name, pset in (sets or detector_sets()).items():
        for idx, pid in enumerate(pset.ids):
            compiled = pset.compiled(idx)
            rows.append(
                PatternRow(f"{name}/{pid}", compiled.pattern, compiled.options.case_sensitive)
            )
    return rows


class NaiveMatcher:
    """The seed plan's style: `for pattern in patterns: re.search(pattern, response)`."""

    def __init__(self, rows: list[PatternRow], ascii_only: bool = False) -> None:
        extra = re.ASCII if ascii_only else 0
        self.rows = [
            (r.key, re.compile(r.pattern, extra | (0 if r.case_sensitive else re.IGNORECASE)))
            for r in rows
        ]

    def scan(self, text: str) -> list[tuple[str, int, int]]:
        hits = []
        for key, rx in self.rows:
            m = rx.search(text)
            if m is not None:
                hits.append((key, m.start(), m.end()))
        return hits


class EngineMatcher:
    """ragpulse's engine on the same sets: one Set pass each, spans of the matching only."""

    def __init__(self, sets: dict[str, PatternSet] | None = None) -> None:
        self.sets = list((sets or detector_sets()).items())

    def scan(self, text: str) -> list[tuple[str, int, int]]:
        hits = []
        for name, pset in self.sets:
            for idx in pset.matching(text):
                spans = list(iter_spans(pset.compiled(idx), text, SPAN_LIMIT))
                if spans:  # the Set and the single pattern agree; kept as a check
                    hits.append((f"{name}/{pset.ids[idx]}", *spans[0]))
        return hits


def adversarial_text(case: str, size: int = ADVERSARIAL_BYTES) -> str:
    unit = ADVERSARIAL[case]
    return (unit * (size // len(unit) + 1))[:size]


def _child(case: str, runs: int, size: int) -> dict[str, Any]:
    text = adversarial_text(case, size)
    naive = NaiveMatcher(pattern_table())
    print("ready", flush=True)
    times, hits = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        hits = len(naive.scan(text))
        times.append(time.perf_counter() - start)
        print(json.dumps({"case": case, "seconds": times, "hits": hits}), flush=True)
    return {"case": case, "seconds": times, "hits": hits}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(ADVERSARIAL), required=True)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--bytes", type=int, default=ADVERSARIAL_BYTES)
    args = ap.parse_args(argv)
    _child(args.case, args.runs, args.bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
