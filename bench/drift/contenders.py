"""What the benchmark compares: ragpulse detectors, river binary detectors, static rules."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from river.drift import binary

from monitors.drift import create_drift_detector

__all__ = ["CONTENDERS", "Contender", "StaticThreshold", "build"]


class Updatable(Protocol):
    def update(self, x: float) -> None: ...

    @property
    def drift_detected(self) -> bool: ...


class StaticThreshold:
    """The rule an SRE writes by hand: rolling mean over the last `window` samples
    below (`below=True`) or above a fixed threshold. One alarm per rising edge."""

    def __init__(self, *, threshold: float, window: int = 100, below: bool = True) -> None:
        self.threshold = threshold
        self.below = below
        self._values: deque[float] = deque(maxlen=window)
        self._total = 0.0
        self._active = False
        self.drift_detected = False

    def update(self, x: float) -> None:
        if len(self._values) == self._values.maxlen:
            self._total -= self._values[0]
        self._values.append(x)
        self._total += x
        full = len(self._values) == self._values.maxlen
        mean = self._total / len(self._values)
        breached = full and (mean < self.threshold if self.below else mean > self.threshold)
        self.drift_detected = breached and not self._active
        self._active = breached


@dataclass(frozen=True)
class Contender:
    label: str
    kind: str  # "score" | "rate"
    spec: dict[str, Any] = field(default_factory=dict)
    note: str = ""


def build(contender: Contender) -> Updatable:
    spec = dict(contender.spec)
    kind = spec.pop("type")
    if kind == "static_threshold":
        return StaticThreshold(**spec)
    if kind.startswith("river."):
        detector: Updatable = getattr(binary, kind.removeprefix("river."))(**spec)
        return detector
    return create_drift_detector({"type": kind, **spec})


CONTENDERS: tuple[Contender, ...] = (
    Contender("static: mean(100) < 0.75", "score", {"type": "static_threshold", "threshold": 0.75}),
    Contender("adwin", "score", {"type": "adwin"}),
    Contender("adwin delta=0.01", "score", {"type": "adwin", "delta": 0.01}),
    Contender("page_hinkley", "score", {"type": "page_hinkley"}),
    Contender(
        "page_hinkley alpha=0.9999",
        "score",
        {"type": "page_hinkley", "alpha": 0.9999},
        "river's forgetting factor, otherwise ragpulse defaults",
    ),
    Contender(
        "page_hinkley, river parameters",
        "score",
        {
            "type": "page_hinkley",
            "threshold": 50.0,
            "delta": 0.005,
            "alpha": 0.9999,
            "min_instances": 30,
            "standardize": False,
        },
        "river's defaults (raw units, forgetting 0.9999), mode down",
    ),
    Contender("ks_window", "score", {"type": "ks_window"}),
    Contender("mannwhitney_window", "score", {"type": "mannwhitney_window"}),
    Contender(
        "static: rate(100) > 4%",
        "rate",
        {"type": "static_threshold", "threshold": 0.04, "below": False},
    ),
    Contender("proportion", "rate", {"type": "proportion"}),
    Contender("adwin", "rate", {"type": "adwin"}),
    Contender("river HDDM_A", "rate", {"type": "river.HDDMA"}),
    Contender("river HDDM_W", "rate", {"type": "river.HDDMW"}),
    Contender("river DDM", "rate", {"type": "river.DDM"}),
    Contender("river EDDM", "rate", {"type": "river.EDDM"}),
)
