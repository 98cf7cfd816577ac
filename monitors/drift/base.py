"""The drift detector extension point: river-style `update(x)` / `drift_detected`, by name.

A drift detector watches one stream of numbers (judge scores in [0, 1], or 0/1 outcomes
such as "this turn was a refusal") and says when its distribution changed. Config and
Helm values name one by string with its parameters, ``{type: adwin, delta: 0.002}``;
:func:`create_drift_detector` builds it. Register more with
``@register_drift_detector("name")`` on a class whose constructor takes keyword
parameters stored as attributes of the same name (as river does), so that
:attr:`BaseDriftDetector.spec` can rebuild the spec it was created from.

A detector's state is data: :meth:`BaseDriftDetector.to_state` writes it as plain
JSON-compatible values, ``{"v": 1, "spec": ..., "n": ..., "drift": ..., "internal": ...}``,
and :meth:`~BaseDriftDetector.load_state` checks all of it (version, spec, every field's
type, bounds and length) before it changes anything; a detector restored that way makes
the same decisions as the original. Subclasses write and check their own part
(`_internal_state` / `_parse_internal`); :func:`detector_from_state` builds one from data.
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from monitors.drift._params import MAX_SIZE, check_choice, check_number
from monitors.drift._state import (
    STATE_ERROR_REASONS,
    STATE_VERSION,
    StateError,
    envelope,
)
from stream.contract.registry import Registry

__all__ = [
    "MAX_SIZE",
    "STATE_ERROR_REASONS",
    "STATE_VERSION",
    "BaseDriftDetector",
    "DriftDetector",
    "RollingMean",
    "StateError",
    "available_drift_detectors",
    "check_choice",
    "check_number",
    "create_drift_detector",
    "detector_from_state",
    "register_drift_detector",
]

_STATE_KEYS = ("v", "spec", "n", "drift", "internal")


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

    def to_state(self) -> dict[str, Any]:
        """The detector's state as JSON-compatible data (no NaN or infinity)."""
        ...

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take over `to_state` data; StateError, and nothing changed, when it does not fit."""
        ...


class BaseDriftDetector(ABC):
    """Shared bookkeeping: sample count, the detection flag, input checks, `spec`.

    Subclasses implement `_reset_state()` (called by `__init__` and `reset`) and
    `_step(x) -> bool` (True when this sample completes a detection), and expose
    `reference_mean` / `recent_mean` (float, or None while unknown). For state as data
    they implement `_internal_state()` (their own fields, JSON-compatible) and
    `_parse_internal(internal, n, drift)`, which checks that data against the
    detector's parameters and returns the attributes to set, changing nothing itself.
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

    # ------------------------------------------------------------------ state as data
    def to_state(self) -> dict[str, Any]:
        """``{"v", "spec", "n", "drift", "internal"}``: plain data, no NaN or infinity."""
        return {
            "v": STATE_VERSION,
            "spec": self.spec,
            "n": self._n,
            "drift": self._drift,
            "internal": self._internal_state(),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take over `state` (from `to_state` of a detector with the same spec).

        Everything is checked before anything is set: on a StateError this detector is
        exactly as it was.
        """
        top = envelope(state, f"{self.name} state", _STATE_KEYS)
        spec, given = self.spec, top.raw("spec")
        if not isinstance(given, Mapping):
            raise StateError("bad_type", f"{self.name} state: spec is not an object")
        if len(given) != len(spec) or dict(given) != spec:
            kind = str(given.get("type"))[:40]
            raise StateError("spec_mismatch", f"state of a {kind} detector given to {spec!r}")
        n, drift = top.integer("n"), top.boolean("drift")
        attributes = self._parse_internal(top.raw("internal"), n, drift)
        for name, value in attributes.items():
            setattr(self, name, value)
        self._n, self._drift = n, drift

    def _internal_state(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement _internal_state")

    def _parse_internal(self, internal: Any, n: int, drift: bool) -> dict[str, Any]:
        """Check `internal` (from `_internal_state`); the attributes to set from it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _parse_internal")

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

    def __init__(self, size: int, values: Iterable[float] = ()) -> None:
        self._values: deque[float] = deque(values, maxlen=size)

    def add(self, x: float) -> None:
        self._values.append(x)

    @property
    def values(self) -> list[float]:
        return list(self._values)

    def clear(self) -> None:
        self._values.clear()

    @property
    def mean(self) -> float | None:
        return math.fsum(self._values) / len(self._values) if self._values else None


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


def detector_from_state(state: Mapping[str, Any]) -> DriftDetector:
    """A detector built from the spec inside `state` and loaded with it (StateError if not).

    The spec is data too: it is built only through the registry's checked parameters
    (sizes at most `MAX_SIZE`). Where the configuration is known, build the configured
    spec and call `load_state` instead (as `MonitoredStream.from_state` does).
    """
    spec = envelope(state, "state", _STATE_KEYS).raw("spec")
    if not isinstance(spec, Mapping):
        raise StateError("bad_type", "state: spec is not an object")
    try:
        detector = create_drift_detector(spec)
    except ValueError as exc:
        raise StateError("spec_mismatch", f"state of no buildable detector: {exc}") from None
    detector.load_state(state)
    return detector
