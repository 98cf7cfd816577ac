"""Statement-level alignment of a response with an expected answer (the embedded judge).

What a MiniLM encoder and lexical checks can honestly say about answer correctness,
with no LLM: each sentence of the response is matched to its closest sentence of the
expected answer (and back), and the pair *agrees* when it is close (cosine at least
``statement_threshold``) and has the same polarity: both negated or neither. Polarity
(``no``, ``not``, ``never``, ``nothing`` ... and the hedges a careful answer uses, from
``embedded_reference.json``) and a leading "Yes" against a leading "No" are where
embeddings fail: "X does not cause Y" and "X causes Y" sit at cosine 0.9.

Similarity between two answers to one question is inflated by the topic they share:
"You grow watermelons in your stomach" and "The seeds pass through your digestive
system" are both about eating watermelon seeds. ``cosine_beyond_question`` is the
cosine of response and expected answer minus the cosine of response and question: how
much closer the response is to what the reference *says* than to what was *asked*. A
response that restates the question's premise scores low on it; one that follows the
reference scores high.

The correctness score is a logistic model over the features of :func:`features`
(weights in ``embedded_reference.json``, fitted by ``bench/quality/reference_fit.py`` on
the TruthfulQA developer split only; measured on the test split). It reads as the
probability that the response says what the expected answer says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any, Protocol, runtime_checkable

import numpy as np

from detectors.lexical import words
from monitors.judges.claims import split_sentences, stems, strip_citations

__all__ = [
    "FEATURES",
    "Alignment",
    "ReferenceJudge",
    "StatementMatch",
    "align",
    "features",
    "load_reference_model",
]

#: feature order of the logistic model
FEATURES = (
    "cosine_beyond_question",
    "precision_similarity",
    "recall_similarity",
    "polarity_agrees",
    "hedge_agrees",
    "recall_overlap",
    "precision_overlap",
    "new_numbers",
    "yes_no_conflict",
)


@dataclass(frozen=True)
class StatementMatch:
    """One sentence, its closest sentence on the other side, and whether they agree."""

    text: str
    closest: str
    similarity: float
    agrees: bool


@dataclass
class Alignment:
    score: float  # P(the response says what the expected answer says)
    response: list[StatementMatch] = field(default_factory=list)
    expected: list[StatementMatch] = field(default_factory=list)
    features: dict[str, float] = field(default_factory=dict)

    def counts(self) -> tuple[int, int, int]:
        """(TP, FP, FN): response statements that agree / do not; expected statements
        that no response statement agrees with."""
        tp = sum(m.agrees for m in self.response)
        return tp, len(self.response) - tp, sum(not m.agrees for m in self.expected)


@runtime_checkable
class ReferenceJudge(Protocol):
    """A judge that aligns a response with an expected answer locally (optional)."""

    def align(self, response: str, expected: str, query: str = "") -> Alignment: ...


def load_reference_model(path: str | None = None) -> dict[str, Any]:
    src = files("monitors.judges") / "embedded_reference.json" if path is None else path
    with open(str(src), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    missing = [f for f in FEATURES if f not in data["weights"]]
    if missing:
        raise ValueError(f"reference model has no weight for {missing}")
    return data


class _Lexicon:
    def __init__(self, model: dict[str, Any]) -> None:
        self.negations = frozenset(model["negations"])
        self.hedges = tuple(f" {' '.join(words(h))} " for h in model["hedges"])

    def negated(self, text: str) -> bool:
        tokens = words(text.replace("n't", " not").replace("n\u2019t", " not"))
        return any(t in self.negations for t in tokens)

    def hedged(self, text: str) -> bool:
        low = f" {' '.join(words(text))} "
        return any(h in low for h in self.hedges)


def _sentences(text: str, limit: int) -> list[str]:
    parts = split_sentences(strip_citations(text), limit)
    return parts or ([text.strip()] if text.strip() else [])


def _leading_yes_no(text: str) -> str:
    """ "yes" / "no" when the text opens with that answer word, else ""."""
    first = words(text)[:1]
    return first[0] if first and first[0] in ("yes", "no") else ""


def _numbers(text: str) -> set[str]:
    return {w for w in words(text) if any(ch.isdigit() for ch in w)}


def features(
    response: str,
    expected: str,
    vecs: np.ndarray,
    resp_sents: Sequence[str],
    exp_sents: Sequence[str],
    lexicon: _Lexicon,
) -> tuple[dict[str, float], np.ndarray]:
    """The model's features and the sentence similarity matrix (response x expected).
    `vecs`: unit vectors of [response, expected, query, *resp_sents, *exp_sents]; the
    query's row is zeros when there is no question."""
    n = len(resp_sents)
    sims = vecs[3 : 3 + n] @ vecs[3 + n :].T
    r_stems, e_stems = stems(response), stems(expected)
    cosine = float(vecs[0] @ vecs[1])
    out = {
        "cosine": cosine,
        "cosine_beyond_question": cosine - float(vecs[0] @ vecs[2]),
        "precision_similarity": float(sims.max(axis=1).mean()),
        "recall_similarity": float(sims.max(axis=0).mean()),
        "polarity_agrees": float(lexicon.negated(response) == lexicon.negated(expected)),
        "hedge_agrees": float(lexicon.hedged(response) == lexicon.hedged(expected)),
        "recall_overlap": len(r_stems & e_stems) / len(e_stems) if e_stems else 1.0,
        "precision_overlap": len(r_stems & e_stems) / len(r_stems) if r_stems else 1.0,
        "new_numbers": float(min(len(_numbers(response) - _numbers(expected)), 3)),
        # one says "Yes, ..." and the other "No, ...": a direct contradiction
        "yes_no_conflict": float(
            "" != _leading_yes_no(response) != _leading_yes_no(expected) != ""
        ),
    }
    return out, sims


def align(
    encode: Any,
    model: dict[str, Any],
    response: str,
    expected: str,
    query: str = "",
    max_sentences: int = 40,
) -> Alignment:
    """Align `response` with `expected` (answers to `query`); `encode(texts)` returns
    unit vectors."""
    resp_sents = _sentences(response, max_sentences)
    exp_sents = _sentences(expected, max_sentences)
    if not resp_sents or not exp_sents:
        return Alignment(0.0)
    lexicon = _Lexicon(model)
    if query.strip():
        vecs = encode([response, expected, query, *resp_sents, *exp_sents])
    else:  # no question: nothing to discount, the plain cosine
        vecs = encode([response, expected, *resp_sents, *exp_sents])
        vecs = np.insert(vecs, 2, 0.0, axis=0)
    feats, sims = features(response, expected, vecs, resp_sents, exp_sents, lexicon)
    w = model["weights"]
    z = float(model["intercept"]) + sum(float(w[f]) * feats[f] for f in FEATURES)
    score = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
    cut = float(model["statement_threshold"])

    def matches(texts: Sequence[str], others: Sequence[str], block: np.ndarray) -> list[Any]:
        out = []
        for i, text in enumerate(texts):
            j = int(block[i].argmax())
            sim = float(block[i, j])
            same = lexicon.negated(text) == lexicon.negated(others[j])
            out.append(StatementMatch(text, others[j], round(sim, 4), sim >= cut and same))
        return out

    return Alignment(
        score,
        matches(resp_sents, exp_sents, sims),
        matches(exp_sents, resp_sents, sims.T),
        {k: round(v, 4) for k, v in feats.items()},
    )
