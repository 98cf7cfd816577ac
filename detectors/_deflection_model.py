"""The frozen model of the ``deflection`` detector (:mod:`detectors.deflection`).

A linear model over the WordPiece tokens of a response's head, learned on static token
vectors distilled from the bundled all-MiniLM-L6-v2 (each vocabulary token run through the
encoder alone, the model2vec recipe) and folded into one weight per token: the score of a
text is ``sigmoid(bias + mean of its tokens' weights)``. Weights are int8 with one scale.
Fitted and written by ``python -m bench.quality.deflection_fit``; the file carries the
tokenizer's sha256 (the ids mean nothing with another vocabulary) and a fingerprint of
its numbers, both checked when it is loaded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "MAX_FILE_BYTES", "DeflectionModel", "fingerprint", "load_model"]

FORMAT = "ragpulse-deflection-wordpiece/v1"
MAX_FILE_BYTES = 1 << 20  # a model file is data from a config: read at most 1 MiB
_VOCAB_MAX = 200_000


def fingerprint(head_chars: int, bias: float, threshold: float, scale: float, w: bytes) -> str:
    """sha256 (first 16 hex digits) of the model's numbers, in a canonical form."""
    canon = json.dumps([FORMAT, head_chars, round(bias, 8), round(threshold, 8), round(scale, 10)])
    return hashlib.sha256(canon.encode() + b"\0" + w).hexdigest()[:16]


@dataclass(frozen=True)
class DeflectionModel:
    head_chars: int
    bias: float
    threshold: float  # a probability in (0, 1): scores at or above it are detections
    weights: list[float]  # per token id, scale applied
    tokenizer_sha256: str
    fingerprint: str

    def sum_ids(self, ids: list[int]) -> tuple[float, int]:
        """(the sum of the weights of `ids`, how many there are)."""
        w, n = self.weights, len(self.weights)
        return sum(w[i] for i in ids if i < n), len(ids)

    def probability(self, total: float, count: int) -> float | None:
        """sigmoid(bias + total / count): the probability of a refusal or deflection."""
        if count <= 0:
            return None
        z = self.bias + total / count
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def score_ids(self, ids: list[int]) -> float | None:
        """The probability that the text of `ids` refuses or deflects; None without ids."""
        return self.probability(*self.sum_ids(ids))


def load_model(path: str | Path | None = None) -> DeflectionModel:
    """The bundled model, or the one at `path`; ValueError naming what is wrong."""
    if path is None:
        raw = (files("detectors") / "models" / "deflection.json").read_bytes()
        where = "bundled deflection model"
    else:
        with Path(path).open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        where = str(path)
        if len(raw) > MAX_FILE_BYTES:
            raise ValueError(f"{where}: larger than {MAX_FILE_BYTES} bytes")
    try:
        doc: Any = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{where}: not a {FORMAT} model")
    head: Any = doc.get("head_chars")
    bias: Any = doc.get("bias")
    thr: Any = doc.get("threshold")
    scale: Any = doc.get("scale")
    tok: Any = doc.get("tokenizer_sha256")
    blob: Any = doc.get("weights_int8")
    ok = (
        isinstance(head, int)
        and 16 <= head <= 4096
        and all(isinstance(v, int | float) and math.isfinite(v) for v in (bias, thr, scale))
        and 0.0 < thr < 1.0
        and isinstance(tok, str)
        and len(tok) == 64
        and isinstance(blob, str)
    )
    if not ok:
        raise ValueError(
            f"{where}: head_chars 16..4096, finite bias/scale, threshold in (0, 1),"
            " tokenizer_sha256 and weights_int8 (base64) are required"
        )
    try:
        w = base64.b64decode(blob, validate=True)
    except ValueError:
        raise ValueError(f"{where}: weights_int8 is not base64") from None
    if not 0 < len(w) <= _VOCAB_MAX:
        raise ValueError(f"{where}: {len(w)} weights (1..{_VOCAB_MAX})")
    fp = fingerprint(head, float(bias), float(thr), float(scale), w)
    if doc.get("fingerprint") != fp:
        raise ValueError(f"{where}: fingerprint {doc.get('fingerprint')!r} != {fp}")
    weights = [(b - 256 if b > 127 else b) * float(scale) for b in w]
    return DeflectionModel(head, float(bias), float(thr), weights, tok, fp)
