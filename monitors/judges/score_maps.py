"""Score maps: a judge metric's raw score -> the calibrated probability that the turn is fine.

A map is data: increasing breakpoints ``x`` (raw scores) and non-decreasing ``y``
(probabilities), applied by linear interpolation (``numpy.interp``; flat beyond the
ends). They are fitted offline (Platt scaling, a logistic regression of the label on the
raw score, on the developer split; isotonic regression was measured and not kept:
``python -m bench.quality.embedded_score_maps``) and shipped as JSON next to the judge
(``embedded_score_maps.json``), so applying them needs numpy only — no scikit-learn in
the sidecar.

A map file is pinned to the raw scale it was fitted on: ``raw_scale.calibration_sha256``
is the sha256 of the judge calibration file (``embedded_calibration.json``) whose scores
it maps. Loading it against another calibration is an error, never a silent misfit.

File layout (``format`` ``ragpulse.score-maps/1``)::

    {"format": "ragpulse.score-maps/1", "version": 1, "judge": "embedded-minilm-v1",
     "raw_scale": {"calibration_sha256": "..."},
     "maps": {"faithfulness": {"x": [...], "y": [...], "fitted_on": "..."},
              "hallucination": {"same_as": "faithfulness"}},
     "uncalibrated": {"citation_accuracy": "why not"}}
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SCORE_MAPS_FORMAT", "ScoreMap", "ScoreMaps", "load_score_maps", "sha256_of"]

SCORE_MAPS_FORMAT = "ragpulse.score-maps/1"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ScoreMap:
    """A monotone piecewise-linear map from [0, 1] to [0, 1]."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y) or len(self.x) < 2:
            raise ValueError("a score map needs x and y of the same length, at least 2 points")
        pts = (*self.x, *self.y)
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in pts):
            raise ValueError("score map breakpoints must be numbers in [0, 1]")
        if any(b <= a for a, b in zip(self.x, self.x[1:], strict=False)):
            raise ValueError("score map x must be strictly increasing")
        if any(b < a for a, b in zip(self.y, self.y[1:], strict=False)):
            raise ValueError("score map y must be non-decreasing (a map keeps the ranking)")

    def __call__(self, raw: float) -> float:
        return float(np.interp(float(raw), self.x, self.y))

    def apply(self, raw: Sequence[float] | np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(raw, dtype=np.float64), self.x, self.y)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreMap:
        return cls(tuple(map(float, data["x"])), tuple(map(float, data["y"])))


@dataclass(frozen=True)
class ScoreMaps:
    """The maps of one judge, by metric output name; metrics without one stay raw."""

    maps: Mapping[str, ScoreMap]
    version: int = 0
    uncalibrated: Mapping[str, str] | None = None

    def calibrate(self, metric: str, raw: float) -> float | None:
        """The calibrated score of `metric`, or None when the metric has no map."""
        fn = self.maps.get(metric)
        return None if fn is None else round(min(1.0, max(0.0, fn(raw))), 4)


def load_score_maps(
    path: str | Path | None = None, calibration_sha256: str | None = None
) -> ScoreMaps:
    """The maps in `path` (default: the packaged ``embedded_score_maps.json``).

    `calibration_sha256`: the sha256 of the judge calibration in use; ValueError when the
    file was fitted on another one (its raw scores mean something else)."""
    src = Path(path) if path else files("monitors.judges") / "embedded_score_maps.json"
    data: dict[str, Any] = json.loads(src.read_text(encoding="utf-8"))
    if data.get("format") != SCORE_MAPS_FORMAT:
        raise ValueError(f"format {data.get('format')!r} is not {SCORE_MAPS_FORMAT!r}")
    pinned = (data.get("raw_scale") or {}).get("calibration_sha256")
    if calibration_sha256 is not None and pinned != calibration_sha256:
        raise ValueError(
            f"fitted on the judge calibration with sha256 {str(pinned)[:12]}, the judge "
            f"uses {calibration_sha256[:12]}: refit with "
            "python -m bench.quality.embedded_score_maps, or turn score maps off"
        )
    raw_maps: dict[str, Any] = data.get("maps") or {}
    maps: dict[str, ScoreMap] = {}
    for name, spec in raw_maps.items():
        if "same_as" not in spec:
            maps[name] = ScoreMap.from_dict(spec)
    for name, spec in raw_maps.items():
        if "same_as" in spec:
            if spec["same_as"] not in maps:
                raise ValueError(f"map {name!r}: same_as {spec['same_as']!r} has no map")
            maps[name] = maps[spec["same_as"]]
    return ScoreMaps(maps, int(data.get("version", 0)), dict(data.get("uncalibrated") or {}))
