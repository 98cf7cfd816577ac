"""The drift detector extension point: river-style `update(x)` / `drift_detected`, by name.

A drift detector watches one stream of numbers (judge scores in [0, 1], or 0/1 outcomes
such as "this turn was a refusal") and says when its distribution changed. Config and
Helm values name one by string with its parameters, ``{type: adwin, delta: 0.002}``;
:func:`create_drift_detector` builds it. Register more with
``@register_drift_detector("name")`` on a class whose constructor takes keyword
parameters stored as attributes of the same name (as river does), so that
:attr:`BaseDriftDetector.spec` can rebuild the spec it was created from.

Detectors are plain Python objects: ``pickle`` round-trips them mid-stream and the
restored copy makes the same decisions (the sidecar persists state that way).
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from stream.contract.registry import Registry

__all__ = [
    "BaseDriftDetector",
    "DriftDetector",
    "RollingMean",
    "available_drift_detectors",
    "check_choice",
    "check_number",
    "create_drift_detector",
    "register_drift_detector",
]


_isfinite = math.isfinite


@runtime_checkable
class DriftDetector(Protocol):
    """What the alarm manager calls, once per sample of one monitored stream."""

    def update(self, x: float) -> None: ...

    @property
    def drift_detected(self) -> bool:
        """True right after the `update` that detected a change, False on the next one."""
        ...

    @property
    def n(self) -> int:
        """Samples seen since construction or the last `reset()`."""
        ...

    def reset(self) -> None: ...


class BaseDriftDetector(ABC):
    """Shared bookkeeping: sample count, the detection flag, input checks, `spec`.

    Subclasses implement `_reset_state()` (called by `__init__` and `reset`) and
    `_step(x) -> bool` (True when this sample completes a detection), and expose
    `reference_mean` / `recent_mean` (float, or None while unknown).
    """

    name: ClassVar[str] = ""
    binary: ClassVar[bool] = False  # True: update() accepts only 0/1

    def __init__(self) -> None:
        self._n = 0
        self._drift = False
        self._reset_state()

    @abstractmethod
    def _reset_state(self) -> None: ...

    @abstractmethod
    def _step(self, x: float) -> bool: ...

    @property
    @abstractmethod
    def reference_mean(self) -> float | None: ...

    @property
    @abstractmethod
    def recent_mean(self) -> float | None: ...

    def update(self, x: float) -> None:
        value = float(x)
        if value != 0.0 and value != 1.0:  # 0 and 1 (most samples) pass both checks
            if not _isfinite(value):
                raise ValueError(f"{self.name}: sample must be a finite number, got {x!r}")
            if self.binary:
                raise ValueError(f"{self.name}: sample must be 0 or 1, got {x!r}")
        self._n += 1
        self._drift = self._step(value)

    @property
    def drift_detected(self) -> bool:
        return self._drift

    @property
    def n(self) -> int:
        return self._n

    def reset(self) -> None:
        """Forget everything: as freshly constructed with the same parameters."""
        self._n = 0
        self._drift = False
        self._reset_state()

    @property
    def spec(self) -> dict[str, Any]:
        """The config mapping that builds an equal detector: ``{"type": name, **params}``."""
        params = inspect.signature(type(self).__init__).parameters
        out: dict[str, Any] = {"type": self.name}
        for pname, param in params.items():
            if pname != "self" and param.kind is param.KEYWORD_ONLY:
                out[pname] = getattr(self, pname)
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.spec.items() if k != "type")
        return f"{type(self).__name__}({args})"


class RollingMean:
    """Exact mean of the last `size` samples (the sum is recomputed, so it cannot drift)."""

    def __init__(self, size: int) -> None:
        self._values: deque[float] = deque(maxlen=size)

    def add(self, x: float) -> None:
        self._values.append(x)

    def clear(self) -> None:
        self._values.clear()

    @property
    def mean(self) -> float | None:
        return math.fsum(self._values) / len(self._values) if self._values else None


def check_number(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    integer: bool = False,
) -> Any:
    """Validate one numeric parameter; ValueError naming `owner.name` when it is wrong."""
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type or not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be {kind}, got {value!r}")
    if low is not None and (value <= low if open_low else value < low):
        raise ValueError(f"{owner}: {name} must be {'>' if open_low else '>='} {low}, got {value}")
    if high is not None and (value >= high if open_high else value > high):
        raise ValueError(
            f"{owner}: {name} must be {'<' if open_high else '<='} {high}, got {value}"
        )
    return value


def check_choice(owner: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{owner}: {name} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)


_REGISTRY: Registry[DriftDetector] = Registry("drift detector")

#: class decorator: make a class buildable as ``{"type": name, ...}``
register_drift_detector = _REGISTRY.register
available_drift_detectors = _REGISTRY.available


def create_drift_detector(spec: Mapping[str, Any]) -> DriftDetector:
    """Build a detector from ``{"type": name, **params}``; ValueError on a bad spec."""
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise ValueError(
            "drift detector spec needs a 'type' "
            f"(one of: {', '.join(available_drift_detectors())}); got {spec!r}"
        )
    return _REGISTRY.create(spec["type"], **{k: v for k, v in spec.items() if k != "type"})
