"""`adwin`: river's ADWIN (adaptive windowing) for mean shifts on score streams.

ADWIN keeps a window of recent samples whose size adapts: every `clock` samples it
looks for a split of the window into an older and a newer part whose means differ by
more than a Hoeffding/Bernstein bound at confidence `delta`, and drops the older part
when it finds one. It needs no reference level and no variance guess, so one default
suits every score metric. It is two-sided; `direction` keeps only downward ("down") or
upward ("up") changes (ADWIN still drops its old window on an ignored change).
"""

from __future__ import annotations

from monitors.drift.base import (
    BaseDriftDetector,
    RollingMean,
    check_choice,
    check_number,
    register_drift_detector,
)

__all__ = ["AdwinDetector"]

DIRECTIONS = ("both", "down", "up")


@register_drift_detector("adwin")
class AdwinDetector(BaseDriftDetector):
    """ADWIN on a real-valued (or 0/1) stream.

    `reference_mean`: on the update that detects a change, the exact mean of the older
    part of the window ADWIN dropped (the level before the change); otherwise the exact
    mean of ADWIN's current window (the samples since the last change it detected).
    `recent_mean`: exact mean of the last `recent_size` samples.
    """

    def __init__(
        self,
        *,
        delta: float = 0.002,
        clock: int = 32,
        max_buckets: int = 5,
        min_window_length: int = 5,
        grace_period: int = 10,
        direction: str = "both",
        recent_size: int = 100,
    ) -> None:
        owner = "adwin"
        self.delta = check_number(owner, "delta", delta, low=0, high=1, open_low=True)
        self.clock = check_number(owner, "clock", clock, low=1, integer=True)
        self.max_buckets = check_number(owner, "max_buckets", max_buckets, low=1, integer=True)
        self.min_window_length = check_number(
            owner, "min_window_length", min_window_length, low=1, integer=True
        )
        self.grace_period = check_number(owner, "grace_period", grace_period, low=1, integer=True)
        self.direction = check_choice(owner, "direction", direction, DIRECTIONS)
        self.recent_size = check_number(owner, "recent_size", recent_size, low=1, integer=True)
        super().__init__()

    def _reset_state(self) -> None:
        from river.drift import ADWIN  # lazy: importing river costs seconds at CLI start

        self._adwin = ADWIN(
            delta=self.delta,
            clock=self.clock,
            max_buckets=self.max_buckets,
            min_window_length=self.min_window_length,
            grace_period=self.grace_period,
        )
        self._recent = RollingMean(self.recent_size)
        self._before: float | None = None

    def _step(self, x: float) -> bool:
        adwin = self._adwin
        # river empties the window at the start of the update after a detection
        width, total = (0.0, 0.0) if adwin.drift_detected else (adwin.width, adwin.total)
        adwin.update(x)
        self._recent.add(x)
        self._before = None
        if not adwin.drift_detected:
            return False
        dropped = width + 1 - adwin.width
        if dropped <= 0:  # defensive: river reported a change without shrinking
            return self.direction == "both"
        self._before = (total + x - adwin.total) / dropped
        after = adwin.estimation
        if self.direction == "down":
            return after < self._before
        if self.direction == "up":
            return after > self._before
        return True

    @property
    def reference_mean(self) -> float | None:
        if self._before is not None:
            return self._before
        return float(self._adwin.estimation) if self._adwin.width > 0 else None

    @property
    def recent_mean(self) -> float | None:
        return self._recent.mean

    @property
    def width(self) -> int:
        """Samples in ADWIN's current window."""
        return int(self._adwin.width)
