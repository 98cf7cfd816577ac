"""Golden/canary turns: a fixed set of questions each service replays through itself.

Each service of the demo world replays a small fixed set of canary questions
(``phrases/golden.yaml``: six per service, about one company-quarter or support issue
each) as single-turn conversations. A replay carries its reference in ``labels``
(DESIGN.md "The event"): ``expected_answer`` (the curated golden answer) and, where
natural, ``required_information``, plus ``label_source: golden-set-replay`` and the
canary's ``golden_id``. The reference-based judge metrics (``answer_correctness``,
``answer_correctness_analytic``) score these turns and the sampler judges them with
reason ``reference``.

Most replays answer correctly: the world's clean answer to the canary's topic, a
paraphrase of the expected answer. Some answer wrongly (:data:`WRONG_RATE`, higher in
the degraded phase): they contradict the reference with a value taken from the sources
(the affected version, the prior-year figure, operating for gross margin; only numbers
that are in the turn's sources) or give a wrong remedy or cause. Wrong answers carry no
detector truth: they invent no identifier and do not refuse; only the reference shows
them wrong.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from stream.demo.conversation import CITE_STYLE, Conv, draft, envelope, new_conv
from stream.demo.draft import Rng, Seg, pick
from stream.demo.financials import companies, financials
from stream.demo.it_support import issues, new_case
from stream.demo.phrases import load
from stream.demo.render import render

__all__ = ["WRONG_RATE", "canaries", "golden_turn"]

#: share of replays that answer wrongly, per phase
WRONG_RATE = {"baseline": 0.12, "degraded": 0.35}


@cache
def canaries(domain: str) -> tuple[dict[str, Any], ...]:
    """The canary set of `domain` (``earnings`` or ``it``), in file order."""
    return tuple(load("golden")[domain]["canaries"])


def _numbers(text: str) -> list[str]:
    """The digit-bearing tokens of `text` (without trailing punctuation)."""
    return [t.strip(".,;:()") for t in text.split() if any(ch.isdigit() for ch in t)]


def _it_vars(conv: Conv) -> dict[str, str]:
    it = conv.issue
    assert it is not None
    return {
        "code": it.code,
        "product": it.product,
        "affected": it.versions[0],
        "fixed": it.versions[1],
        "cause_short": it.cause_short,
        "steps": " ".join(kb for kb, _ in it.steps),
    }


def _earnings_vars(conv: Conv) -> dict[str, str]:
    assert conv.company is not None
    v = dict(financials(conv.company.ticker, conv.fy, conv.q))
    return v


def _conv(rng: Rng, domain: str, canary: dict[str, Any]) -> Conv:
    """The replay's conversation: the model and extras of an ordinary one, the canary's
    company-quarter or support issue (with a fresh case)."""
    conv = new_conv(rng)
    conv.domain, conv.company, conv.issue, conv.case = domain, None, None, None
    if domain == "earnings":
        conv.company = next(c for c in companies() if c.ticker == canary["ticker"])
        conv.fy, conv.q = canary["fy"], canary["q"]
    else:
        conv.issue = next(i for i in issues() if i.code == canary["code"])
        conv.case = new_case(rng, conv.issue)
    return conv


def golden_turn(rng: Rng, domain: str, phase: str) -> tuple[dict[str, Any], Conv, bool]:
    """One canary replay of `domain`: the event fields (without ids, timestamp and
    conversation), its conversation and whether the answer is wrong."""
    bank = load("golden")[domain]
    canary = pick(rng, canaries(domain))
    spec = bank["topics"][canary["topic"]]
    conv = _conv(rng, domain, canary)
    v = _it_vars(conv) if domain == "it" else _earnings_vars(conv)
    wrong = rng.random() < WRONG_RATE[phase]
    # a replay answers the one question asked (the world's short answer to the topic)
    d = draft(rng, conv, canary["topic"], 0, None, False, frozenset(), True)
    d.query = spec["query"].format(**v)
    style, marker_pos = CITE_STYLE[conv.model]
    if wrong:
        cite = next((s.cite for s in d.body if s.cite), None)
        sources = d.sources_text()
        said = [w.format(**v) for w in spec["wrong"]]
        sourced = [w for w in said if all(n in sources for n in _numbers(w))]
        pieces = [Seg(pick(rng, sourced or said[-1:]), cite)]
        if d.outro:
            pieces.append(Seg(d.outro))
        response, citations = render(rng, pieces, d, style, marker_pos, steps=False)
    else:
        pieces = ([Seg(d.intro)] if d.intro else []) + d.body
        if d.outro:
            pieces.append(Seg(d.outro))
        response, citations = render(
            rng, pieces, d, style, marker_pos, steps=d.steps, body_ids={id(s) for s in d.body}
        )
    event = envelope(rng, conv, d, phase, response, citations, [])
    labels: dict[str, Any] = {
        "expected_behavior": "answer",
        "category": "should_answer",
        "label_source": "golden-set-replay",
        "golden_id": canary["id"],
        "expected_answer": spec["expected"].format(**v),
    }
    required = spec.get("required")
    if required == "steps":
        assert conv.issue is not None
        labels["required_information"] = [kb for kb, _ in conv.issue.steps[:2]]
    elif required:
        labels["required_information"] = [r.format(**v) for r in required]
    event["labels"] = labels
    return event, conv, wrong
