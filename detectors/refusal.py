"""Refusals and training-cutoff excuses in the response; rejection calibration on labels.

Categories:

* ``refusal`` — the response refuses or says it cannot answer, fully or partly: safety
  refusals ("I'm sorry, but I can't help with that", "It is not appropriate to …",
  "I must decline") and RAG refusals ("The provided documents do not contain …",
  "I couldn't find that in the knowledge base"). Not a failure on its own.
* ``training_cutoff_excuse`` — blames the training cutoff or the lack of live data
  ("as of my knowledge cutoff", "I don't have real-time data"); always a failure in a
  RAG system, where the retrieved context is the knowledge.
* ``false_rejection`` — ``labels.expected_behavior`` is "answer" and the response
  *declined* instead of answering. The response is walked clause by clause (sentences,
  split again at "; ", ", but", ", however,"): one of its first ``lead_sentences``
  clauses refuses or blames the cutoff, and the rest gives nothing substantive — no
  other clause carries grounded content (a citation marker such as ``[2]``, a code span,
  a figure: ``$4.2``, ``12%``, ``6.3.0``, ``30 days``), and, when only a cutoff excuse (no
  refusal) declines, the other non-question clauses hold at most ``answer_chars``
  characters. So a cutoff disclaimer followed by an answer, "I can't X, but here is Y
  [1]", or an answer that notes a gap, is not a false rejection.
* ``false_acceptance`` — expected "reject" but no refusal or cutoff excuse anywhere.

The phrase families live in ``packs/refusal.yaml`` (RE2, loaded once at construction);
option ``extra_patterns_file`` adds a user pack of the same layout. They are written as a
small grammar, not as stock sentences: a first-person subject, an optional hedge ("I
honestly", "I'm really"), a modal or negation of ability or will (can't, won't, shouldn't,
'd rather not, 'd prefer not to, am not able / allowed / set up / in a position to, don't
think I can) and a verb from a class of service acts (help, share, give, interpret,
summarise, walk you through, book, quote, guess, check, change …). Beside it: declining
constructions ("I'll have to pass on that one", "I stay out of politics", "I don't give
medical advice", "I'm only set up to answer questions about X", "I'm not the right source
for …", "that one's beyond me"), unavailability ("X isn't available / visible to me", "X
isn't something I have access to / my documents cover", "not covered in what I have
access to"), and for cutoff excuses one's own knowledge (my knowledge / info / training
corpus, everything I know, the data I was trained on) that ends, stops, goes up to, was
last refreshed, or covers things up to a point in time, "I was last updated …", "would
postdate my training", "after the last update to my training data". Position matters:
``lead`` patterns count only when they start in the first ``lead_sentences`` sentences
(at most ~1,000 characters), or anywhere in a response of at most ``short_chars``
characters; ``any`` patterns count anywhere. A candidate is dropped when a veto
(emphatic idiom such as "I can't stress enough") overlaps it, when it sits inside quotes
or in a question, or right after a conditional ("if I can't find …").

Known limits: English only; lexical, so a refusal phrased as a lecture with no refusal
words ("It's important to remember that violence is never the answer…"), a rebuttal of
the premise ("X was not justified"), an opinion disclaimer ("As an AI I have no
opinions, but…": on XSTest it marks compliant answers about as often as refusals), a
decline whose verb is outside the classes ("I can't reproduce that"), or a redirect with
no first-person decline ("No can do", "That's one for HR to answer") is not counted; a
partial refusal deep inside a long answer is seen only by the ``any``-scope families.
"Declined" is a heuristic: a lead refusal followed by a long answer with no citation,
code or figure (a how-to in plain words, or "I can't check your account, but try
signing out and in again") counts as declined, and a refusal followed by a sentence
with a figure ("The help desk is open 24 hours.") as answered; a clause that both
excuses and answers ("Since my training ends in 2023 revenue was $4.2B [1]") counts as
excuse only. Measured on XSTest by ``bench/quality/xstest_refusal`` (refusal;
"declined" against the humans' full refusals) and ``bench/quality/xstest_lomo``, on the
hand-written blind set by ``bench/quality/blind_eval``, and on the bundled traffic sample
by ``bench/quality/sample_detectors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from detectors._refusal_pack import _SCOPES, DECLINE_CATEGORIES, _expand, _load_pack
from detectors._refusal_text import _RefusalText
from detectors.base import EVIDENCE_MAX_CHARS, Detection, register_detector
from detectors.regex import PatternSet
from detectors.scan import Detector, PatternSpec, Scan
from stream.contract.events import Event

__all__ = ["DECLINE_CATEGORIES", "DEFAULT_PACK", "RefusalDetector", "RefusalHit"]

DEFAULT_PACK = Path(__file__).with_name("packs") / "refusal.yaml"
_FAILURE = {"training_cutoff_excuse": "training_cutoff_excuse"}  # hit categories that fail
_MAX_TRIES = 32  # rejected candidates examined per pattern before giving up on it


@dataclass(frozen=True, slots=True)
class RefusalHit:
    category: str
    pattern_id: str
    span: tuple[int, int]
    text: str


@register_detector("refusal")
class RefusalDetector(_RefusalText, Detector):
    """Refusals, training-cutoff excuses, and false rejection / acceptance on labels."""

    name = "refusal"

    def __init__(
        self,
        *,
        extra_patterns_file: str | None = None,
        lead_sentences: int = 2,
        short_chars: int = 300,
        answer_chars: int = 160,
    ) -> None:
        defs: dict[str, str] = {}
        patterns, vetoes = _load_pack(DEFAULT_PACK, defs)
        if extra_patterns_file:
            more, more_vetoes = _load_pack(Path(extra_patterns_file), defs)
            patterns += more
            vetoes += more_vetoes
        self.lead_sentences = max(1, lead_sentences)
        self.short_chars = max(0, short_chars)
        self.answer_chars = max(0, answer_chars)
        self._category = {p["id"]: p["category"] for p in patterns}
        scoped = {
            scope: [(p["id"], _expand(p["pattern"], defs)) for p in patterns if p["scope"] == scope]
            for scope in _SCOPES
        }
        self._sets = {scope: PatternSet(rules) for scope, rules in scoped.items()}
        self._veto = PatternSet([(vid, _expand(v, defs)) for vid, v in vetoes])
        # declared to the shared scan as "<scope>/<id>": the response is screened once
        self.patterns = tuple(
            PatternSpec(f"{scope}/{pid}", regex)
            for scope, rules in scoped.items()
            for pid, regex in rules
        )

    @property
    def categories(self) -> tuple[str, ...]:
        return ("refusal", "training_cutoff_excuse", "false_rejection", "false_acceptance")

    def precompiled(self, pattern_id: str) -> Any:
        """The scope set's program of a declared "<scope>/<id>" pattern: the same regex,
        compiled alike (case-insensitive), so the shared scan does not compile it again."""
        scope, _, pid = pattern_id.partition("/")
        pset = self._sets.get(scope)
        if pset is None or pid not in pset.ids:
            return None
        return pset.compiled(pset.ids.index(pid))

    # -- screening and the verdict -------------------------------------------
    def _screen(self, scan: Scan, scope: str, text: str, region: str) -> list[str]:
        """Ids of the `scope` patterns matching `region` (a prefix of `text`): from the
        shared scan of the whole text, or screened here when the region is shorter."""
        if len(region) < len(text):
            pset = self._sets[scope]
            return [pset.ids[i] for i in pset.matching(region)]
        prefix = scope + "/"
        found = scan.matching(self, "response", text)
        return [s[len(prefix) :] for s in found if s.startswith(prefix)]

    def analyze(self, text: str, scan: Scan | None = None) -> dict[str, RefusalHit]:
        """The earliest surviving hit per category ("refusal", "training_cutoff_excuse")."""
        best: dict[str, RefusalHit] = {}
        if not text:
            return best
        if scan is None:
            scan = self._scanner().scan()
        if len(text) <= self.short_chars + 200 and not scan.matching(self, "response", text):
            return best  # the lead region is the whole text: no pattern matches in it
        lead_end = self._lead_end(text)
        for scope, limit in (("lead", lead_end), ("any", len(text))):
            region = text[: limit + 200] if scope == "lead" else text
            for pid in self._screen(scan, scope, text, region):
                cat = self._category[pid]
                # spans straight from RE2 (engine.iter_spans: no Match objects on ASCII text)
                for a, b in scan.spans(self, f"{scope}/{pid}", region, _MAX_TRIES):
                    cur = best.get(cat)
                    if a >= limit or (cur and a >= cur.span[0]):
                        break
                    if not self._rejected(text, a, b):
                        best[cat] = RefusalHit(cat, pid, (a, b), region[a:b])
                        break
        return best

    # -- detector ------------------------------------------------------------
    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        hits = sorted(self.analyze(event.response, scan).values(), key=lambda h: h.span)
        out = [
            Detection(self.name, h.category, _evidence(h), h.span, _FAILURE.get(h.category))
            for h in hits
        ]
        expected = event.expected_behavior
        if expected == "answer" and hits and self.declined(event.response):
            why = f"expected answer; response declined ({_evidence(hits[0])})"
            out.append(self._flag("false_rejection", why, hits[0].span))
        elif expected == "reject" and not hits:
            out.append(self._flag("false_acceptance", "expected reject; response did not refuse"))
        return out

    def _flag(self, mode: str, why: str, span: tuple[int, int] | None = None) -> Detection:
        return Detection(self.name, mode, why[:EVIDENCE_MAX_CHARS], span, mode)


def _evidence(hit: RefusalHit) -> str:
    snippet = " ".join(hit.text.split())
    return f"{hit.pattern_id}: {snippet}"[:EVIDENCE_MAX_CHARS]
