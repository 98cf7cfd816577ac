"""`adwin`: river's ADWIN (adaptive windowing) for mean shifts on score streams.

ADWIN keeps a window of recent samples whose size adapts: every `clock` samples it
looks for a split of the window into an older and a newer part whose means differ by
more than a Hoeffding/Bernstein bound at confidence `delta`, and drops the older part
when it finds one. It needs no reference level and no variance guess, so one default
suits every score metric. It is two-sided; `direction` keeps only downward ("down") or
upward ("up") changes (ADWIN still drops its old window on an ignored change).

State as data: river 0.26 keeps ADWIN's buckets in a Rust object whose only export is
opaque serialized bytes, which are never read back here. Instead the detector
logs the samples ADWIN has taken since it (re)started (at construction, `reset()`, and
the update after each of its detections, where river starts a new window), at most
the last `state_samples` of them (8 bytes each), and `load_state` replays the log into
a fresh ADWIN. While fewer than `state_samples` samples were taken since that restart,
the restored detector makes exactly the original's decisions; beyond it, the restored
ADWIN is one started on the last `state_samples` samples (a shorter window: it may
decide differently until ADWIN next detects a change).
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from monitors.drift._state import Fields, check_consistent, pack_floats
from monitors.drift.base import (
    MAX_SIZE,
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
        state_samples: int = 10_000,
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
        self.recent_size = check_number(
            owner, "recent_size", recent_size, low=1, high=MAX_SIZE, integer=True
        )
        self.state_samples = check_number(
            owner, "state_samples", state_samples, low=1, high=MAX_SIZE, integer=True
        )
        super().__init__()

    def _new_adwin(self) -> Any:
        from river.drift import ADWIN  # lazy: importing river costs seconds at CLI start

        return ADWIN(
            delta=self.delta,
            clock=self.clock,
            max_buckets=self.max_buckets,
            min_window_length=self.min_window_length,
            grace_period=self.grace_period,
        )

    def _reset_state(self) -> None:
        self._adwin = self._new_adwin()
        self._recent = RollingMean(self.recent_size)
        self._before: float | None = None
        self._restart_log()

    def _restart_log(self) -> None:
        self._log = array("d")  # the samples since ADWIN (re)started: a ring once full
        self._log_pos = 0
        self._log_seen = 0  # samples since ADWIN (re)started (the log holds the last ones)

    def _step(self, x: float) -> bool:
        adwin = self._adwin
        # river empties the window at the start of the update after a detection
        if adwin.drift_detected:
            width, total = 0.0, 0.0
            self._restart_log()
        else:
            width, total = adwin.width, adwin.total
        self._log_seen += 1
        if len(self._log) < self.state_samples:
            self._log.append(x)
        else:
            self._log[self._log_pos] = x
            self._log_pos = (self._log_pos + 1) % self.state_samples
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

    def _internal_state(self) -> dict[str, Any]:
        log, pos = np.frombuffer(self._log, dtype=np.float64), self._log_pos
        return {
            "log": pack_floats(np.concatenate([log[pos:], log[:pos]]) if pos else log),
            "seen": self._log_seen,
            "recent": pack_floats(self._recent.values),
            "before": self._before,
        }

    def _parse_internal(self, internal: Any, n: int, drift: bool) -> dict[str, Any]:
        f = Fields(internal, "adwin internal", ("log", "seen", "recent", "before"))
        seen = f.integer("seen", 0, n)
        kept = min(seen, self.state_samples)
        log = f.floats("log", kept, kept)
        in_recent = min(n, self.recent_size)
        recent = f.floats("recent", in_recent, in_recent)
        before = f.number("before", optional=True)
        check_consistent(seen > 0 or not drift, f.where, "a detection without samples")
        adwin = self._new_adwin()
        for x in log.tolist():
            adwin.update(x)
        if kept == seen:  # the whole window: the replay is the original ADWIN
            ok = adwin.drift_detected or (not drift and before is None)
            check_consistent(ok, f.where, "a detection that the replayed ADWIN does not make")
        return {
            "_adwin": adwin,
            "_recent": RollingMean(self.recent_size, recent.tolist()),
            "_before": None if before is None else float(before),
            "_log": array("d", log.tolist()),
            "_log_pos": 0,
            "_log_seen": seen,
        }

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
