"""Two-sample tests between a frozen reference window and a sliding recent window.

The first `reference_size` samples become the reference; after it, the last
`window_size` samples are compared with it every `check_every` samples by a scipy
two-sample test, and a p-value below `alpha` is a detection. The recent window only
ever holds samples taken after the reference, so under no change every test is a valid
level-`alpha` test and, by the union bound, the expected number of false alarms per
100,000 samples is at most ``alpha * 100_000 / check_every`` (0.04 with the defaults).
That bound assumes independent samples; conversation-clustered scores break it (the
benchmark measured 0.6 (KS) and 1.2 (Mann-Whitney) false alarms per 100,000 there,
BENCHMARKS.md "Drift detection"), which is why the default `alpha` is this small.

After a detection the detector waits `cooldown` samples, then takes the next
`reference_size` samples as the new reference (automatic re-baselining);
`rebaseline()` does the same at once, on operator command. Until a new reference is
complete the previous one stays in force for `reference_mean`, and nothing is tested.

State as data (`to_state`): the recent ring in memory order with its position, the
reference, the reference being built, the cooldown and test counters and the last
p-value; every array's length is fixed by the parameters, and `load_state` checks
that the counters agree with each other and with `n`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from monitors.drift._state import Fields, check_consistent, pack_bits, pack_floats
from monitors.drift.base import (
    MAX_SIZE,
    BaseDriftDetector,
    check_choice,
    check_number,
    register_drift_detector,
)

__all__ = ["KSWindowDetector", "MannWhitneyWindowDetector", "WindowTestDetector"]

DIRECTIONS = ("both", "down", "up")
_KEYS = (
    "ring", "pos", "filled", "reference", "reference_mean", "building", "cooling",
    "since_reference", "last_pvalue",
)  # fmt: skip


class WindowTestDetector(BaseDriftDetector):
    """Reference-vs-recent scheduling shared by the window tests; subclasses give `_pvalue`.

    `reference_mean` / `recent_mean` are exact: the mean of the reference in force and
    of the last `window_size` samples.
    """

    default_direction: ClassVar[str] = "both"

    def __init__(
        self,
        *,
        reference_size: int = 1000,
        window_size: int = 300,
        check_every: int = 50,
        alpha: float = 2e-5,
        cooldown: int = 300,
        direction: str | None = None,
    ) -> None:
        owner = self.name
        self.reference_size = check_number(
            owner, "reference_size", reference_size, low=2, high=MAX_SIZE, integer=True
        )
        self.window_size = check_number(
            owner, "window_size", window_size, low=2, high=MAX_SIZE, integer=True
        )
        self.check_every = check_number(owner, "check_every", check_every, low=1, integer=True)
        self.alpha = check_number(owner, "alpha", alpha, low=0, high=1, open_low=True)
        self.cooldown = check_number(owner, "cooldown", cooldown, low=0, integer=True)
        self.direction = check_choice(
            owner, "direction", direction or self.default_direction, DIRECTIONS
        )
        super().__init__()

    def _reset_state(self) -> None:
        self._ring = np.zeros(self.window_size, dtype=np.float64)
        self._pos = 0
        self._filled = 0
        self._reference: np.ndarray | None = None
        self._reference_mean: float | None = None
        self._building: list[float] = []
        self._cooling = 0
        self._since_reference = 0  # samples since the reference in force was frozen
        self.last_pvalue: float | None = None

    def rebaseline(self) -> None:
        """Take the next `reference_size` samples as the new reference (operator command)."""
        self._cooling = 0
        self._building = []
        self._since_reference = -1  # marks "building"; see _step

    @property
    def testing(self) -> bool:
        """True while a reference is in force and tests run (not warming up or cooling)."""
        return self._reference is not None and self._since_reference >= 0 and not self._cooling

    def _step(self, x: float) -> bool:
        pos, size = self._pos, self.window_size
        self._ring[pos] = x
        pos += 1
        self._pos = pos if pos < size else pos % size
        if self._filled != size:
            self._filled = min(self._filled + 1, size)
        if self._cooling:
            self._cooling -= 1
            return False
        since = self._since_reference
        if since >= 0 and self._reference is not None:  # testing: the usual sample
            since += 1
            self._since_reference = since
            due = since - size
            if due < 0 or due % self.check_every:
                return False
            return self._test()
        # no reference yet, or a new one being built (after a detection or a rebaseline)
        self._building.append(x)
        if len(self._building) == self.reference_size:
            self._reference = np.asarray(self._building, dtype=np.float64)
            self._reference_mean = float(self._reference.mean())
            self._building = []
            self._since_reference = 0
        return False

    def _test(self) -> bool:
        """One scheduled test of the recent window against the reference."""
        assert self._reference is not None
        self.last_pvalue = float(self._pvalue(self._reference, self._ring))
        if self.last_pvalue >= self.alpha:
            return False
        self.rebaseline()
        self._cooling = self.cooldown
        return True

    @abstractmethod
    def _pvalue(self, reference: np.ndarray, recent: np.ndarray) -> float: ...

    def _internal_state(self) -> dict[str, Any]:
        pack = pack_bits if self.binary else pack_floats
        return {
            "ring": pack(self._ring),
            "pos": self._pos,
            "filled": self._filled,
            "reference": None if self._reference is None else pack(self._reference),
            "reference_mean": self._reference_mean,
            "building": pack(self._building),
            "cooling": self._cooling,
            "since_reference": self._since_reference,
            "last_pvalue": self.last_pvalue,
        }

    def _parse_internal(self, internal: Any, n: int, drift: bool) -> dict[str, Any]:
        f = Fields(internal, f"{self.name} internal", _KEYS)
        read = f.bits if self.binary else f.floats
        size, ref_size = self.window_size, self.reference_size
        ring = read("ring", size, size)
        pos, filled = f.integer("pos", 0, size - 1), f.integer("filled", 0, size)
        reference = read("reference", ref_size, ref_size, optional=True)
        reference_mean = f.number("reference_mean", optional=True)
        building = read("building", 0, ref_size - 1)
        cooling = f.integer("cooling", 0, self.cooldown)
        since = f.integer("since_reference", -1, n)
        last_pvalue = f.number("last_pvalue", 0.0, 1.0, optional=True)
        where = f.where
        check_consistent(pos == n % size and filled == min(n, size), where, "pos/filled vs n")
        check_consistent(not ring[filled:].any(), where, "ring slots past `filled` are set")
        if reference is None:
            ok = reference_mean is None and (since == -1 or len(building) == n)
            check_consistent(ok and since <= 0, where, "no reference, but counters of one")
            mean = None
        else:
            mean = float(reference.mean())
            check_consistent(reference_mean == mean, where, "reference_mean is not its mean")
        building_now = reference is None or since == -1
        check_consistent(building_now or not len(building), where, "building while testing")
        check_consistent(not cooling or (since == -1 and not len(building)), where, "cooling")
        ok = not drift or (cooling == self.cooldown and since == -1)
        check_consistent(ok, where, "a detection, but no cooldown or new reference")
        return {
            "_ring": ring,
            "_pos": pos,
            "_filled": filled,
            "_reference": reference,
            "_reference_mean": mean,
            "_building": building.tolist(),
            "_cooling": cooling,
            "_since_reference": since,
            "last_pvalue": None if last_pvalue is None else float(last_pvalue),
        }

    @property
    def reference_mean(self) -> float | None:
        return self._reference_mean

    @property
    def recent_mean(self) -> float | None:
        if not self._filled:
            return None
        return float(self._ring[: self._filled].mean())


@register_drift_detector("ks_window")
class KSWindowDetector(WindowTestDetector):
    """Two-sample Kolmogorov-Smirnov (`scipy.stats.ks_2samp`): any change of distribution.

    `direction` "down" alarms only when recent values are stochastically smaller
    (their CDF lies above the reference's somewhere), "up" the reverse.
    """

    _ALTERNATIVE: ClassVar[dict[str, str]] = {
        "both": "two-sided",
        "down": "greater",
        "up": "less",
    }

    def _pvalue(self, reference: np.ndarray, recent: np.ndarray) -> float:
        from scipy import stats  # lazy: scipy.stats is +62 MiB RSS; only these tests use it

        alt = self._ALTERNATIVE[self.direction]
        return float(stats.ks_2samp(recent, reference, alternative=alt, method="asymp").pvalue)


@register_drift_detector("mannwhitney_window")
class MannWhitneyWindowDetector(WindowTestDetector):
    """Mann-Whitney U (`scipy.stats.mannwhitneyu`, tie-corrected): a shift of location."""

    _ALTERNATIVE: ClassVar[dict[str, str]] = {
        "both": "two-sided",
        "down": "less",
        "up": "greater",
    }

    def _pvalue(self, reference: np.ndarray, recent: np.ndarray) -> float:
        from scipy import stats

        alt = self._ALTERNATIVE[self.direction]
        result = stats.mannwhitneyu(recent, reference, alternative=alt, method="asymptotic")
        return float(result.pvalue)
