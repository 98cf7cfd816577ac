"""Detector state as checked plain data: the error type, the encodings, a strict reader.

A detector's state is JSON-compatible data (dicts, lists, str, int, float, bool, None;
never NaN or infinity) that its own code writes and checks field by field on the way
back; nothing in it is ever executed or evaluated. Two compact encodings keep it small:

- arrays of floats: base64 of the little-endian float64 bytes (exact, 10.7 characters
  a sample; a JSON list of full-precision floats takes about 20);
- arrays of 0/1 samples: a string of "0" and "1" characters.

:class:`Fields` reads one mapping strictly: the exact key set, the type of every value,
bounds, finiteness, and the length of every array checked against the detector's own
parameters *before* the array is decoded, so an oversized input costs no more than a
length comparison. Every failure is a :class:`StateError` whose `reason` is one of the
few :data:`STATE_ERROR_REASONS` (a Prometheus label value).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from stream.contract.errors import RagpulseError

__all__ = [
    "STATE_ERROR_REASONS",
    "STATE_VERSION",
    "Fields",
    "StateError",
    "check_consistent",
    "decode_float",
    "encode_float",
    "envelope",
    "pack_bits",
    "pack_floats",
]

STATE_VERSION = 1

#: the fixed label set of `ragpulse_state_records_rejected_total{reason}`
STATE_ERROR_REASONS = (
    "version",  # the envelope's "v" is not this build's STATE_VERSION
    "spec_mismatch",  # the state is of another detector type or other parameters
    "bad_type",  # a value of the wrong type, bad encoding, or an unknown field
    "bad_length",  # an array longer or shorter than the parameters allow
    "not_finite",  # NaN or infinity where a finite number is required
    "out_of_range",  # a number out of bounds, a non-0/1 sample, inconsistent fields
    "missing_field",  # a required field is absent
)

_MAX_COUNT = 2**63 - 1


class StateError(RagpulseError, ValueError):
    """A state that does not fit the detector; nothing was changed. `reason`: see above."""

    def __init__(self, reason: str, message: str) -> None:
        if reason not in STATE_ERROR_REASONS:  # keep the label set fixed (plugins)
            message, reason = f"[{reason}] {message}", "bad_type"
        super().__init__(message[:300])  # it may quote hostile input
        self.reason = reason


def pack_floats(values: Iterable[float] | np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode("ascii")


def pack_bits(values: Iterable[float] | np.ndarray) -> str:
    """0/1 samples as a "0"/"1" string (any nonzero sample is a 1)."""
    arr = np.asarray(values, dtype=np.float64)
    return (np.where(arr != 0, 49, 48).astype(np.uint8)).tobytes().decode("ascii")


def encode_float(x: float) -> float | str:
    """A float that may be NaN or infinite, JSON-safe: "nan", "inf", "-inf" as strings."""
    return x if math.isfinite(x) else str(x)


def decode_float(value: Any, where: str) -> float:
    """Inverse of :func:`encode_float`."""
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StateError("bad_type", f"{where}: expected a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise StateError("not_finite", f"{where}: {value!r}")
    return float(value)


def _b64_chars(count: int) -> int:
    return 4 * ((8 * count + 2) // 3)


class Fields:
    """Strict typed access to one mapping of a state; `where` names it in errors."""

    def __init__(self, data: Any, where: str, keys: tuple[str, ...]) -> None:
        if not isinstance(data, Mapping):
            raise StateError("bad_type", f"{where}: expected an object, got {type(data).__name__}")
        for key in keys:
            if key not in data:
                raise StateError("missing_field", f"{where}: no {key!r}")
        if len(data) != len(keys):  # every expected key is there: the rest are unknown
            extra = [k for k in itertools.islice(data, len(keys) + 3) if k not in keys]
            raise StateError("bad_type", f"{where}: unknown field(s) {extra!r}")
        self.data, self.where = data, where

    def raw(self, key: str) -> Any:
        return self.data[key]

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}"

    def boolean(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            raise StateError("bad_type", f"{self._name(key)}: expected true or false")
        return value

    def integer(self, key: str, low: int = 0, high: int = _MAX_COUNT) -> int:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise StateError("bad_type", f"{self._name(key)}: expected an integer")
        if not low <= value <= high:
            raise StateError("out_of_range", f"{self._name(key)}: {value} not in [{low}, {high}]")
        return value

    def number(
        self, key: str, low: float = -math.inf, high: float = math.inf, *, optional: bool = False
    ) -> Any:
        """A finite int or float (the type is kept), or None when `optional`."""
        value = self.data[key]
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise StateError("bad_type", f"{self._name(key)}: expected a number")
        if not math.isfinite(value):
            raise StateError("not_finite", f"{self._name(key)}: {value!r}")
        if not low <= value <= high:
            raise StateError("out_of_range", f"{self._name(key)}: {value} not in [{low}, {high}]")
        return value

    def _length(self, key: str, count: int, low: int, high: int) -> None:
        if not low <= count <= high:
            want = str(low) if low == high else f"{low} to {high}"
            raise StateError("bad_length", f"{self._name(key)}: {count} samples, expected {want}")

    def floats(self, key: str, low: int, high: int, *, optional: bool = False) -> Any:
        """A packed float array of `low` to `high` finite samples (np.ndarray; or None)."""
        value = self.data[key]
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise StateError("bad_type", f"{self._name(key)}: expected a base64 string")
        if len(value) > _b64_chars(high):  # before decoding anything
            raise StateError("bad_length", f"{self._name(key)}: over {high} samples")
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise StateError("bad_type", f"{self._name(key)}: not base64") from None
        if len(raw) % 8:
            raise StateError("bad_length", f"{self._name(key)}: not whole float64 values")
        self._length(key, len(raw) // 8, low, high)
        arr = np.frombuffer(raw, dtype="<f8").astype(np.float64)
        if not np.isfinite(arr).all():
            raise StateError("not_finite", f"{self._name(key)}: NaN or infinity")
        return arr

    def bits(self, key: str, low: int, high: int, *, optional: bool = False) -> Any:
        """A "0"/"1" string of `low` to `high` samples, as a float64 array (or None)."""
        value = self.data[key]
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise StateError("bad_type", f"{self._name(key)}: expected a string of 0 and 1")
        self._length(key, len(value), low, high)  # before looking at the characters
        if value.count("0") + value.count("1") != len(value):
            raise StateError("out_of_range", f"{self._name(key)}: samples must be 0 or 1")
        return (np.frombuffer(value.encode("ascii"), dtype=np.uint8) - 48).astype(np.float64)

    def fields(self, key: str, keys: tuple[str, ...], *, optional: bool = False) -> Fields | None:
        value = self.data[key]
        if value is None and optional:
            return None
        return Fields(value, self._name(key), keys)


def envelope(state: Any, where: str, keys: tuple[str, ...]) -> Fields:
    """The top level of a versioned state: an object whose "v" is checked first."""
    if not isinstance(state, Mapping):
        raise StateError("bad_type", f"{where}: expected an object, got {type(state).__name__}")
    if "v" not in state:
        raise StateError("missing_field", f"{where}: no version 'v'")
    version = state["v"]
    if type(version) is not int or version != STATE_VERSION:
        shown = version if type(version) is int else type(version).__name__
        raise StateError("version", f"{where}: version {shown}, this build reads 1")
    return Fields(state, where, keys)


def check_consistent(ok: bool, where: str, message: str) -> None:
    """Fields that are each valid but cannot occur together."""
    if not ok:
        raise StateError("out_of_range", f"{where}: {message}")
