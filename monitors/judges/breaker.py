"""A circuit breaker for one judge endpoint: stop calling a judge that keeps failing.

closed ──(failure_threshold consecutive failed calls)──► open
open ──(reset_after_s elapsed; the next call is let through as the one probe)──► half_open
half_open ──(probe succeeds)──► closed        half_open ──(probe fails)──► open (timer anew)

While open, and while the half-open probe is in flight, `allow()` answers False and the
caller fails fast (reason `circuit_open`) without touching the network. Counted per
logical call (after that call's own retries), not per HTTP attempt. Single event loop;
no locks needed (nothing awaits between a check and its update).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

__all__ = ["BreakerState", "CircuitBreaker"]

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(
        self,
        failure_threshold: int = 5,
        reset_after_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be >= 1")
        if reset_after_s < 0:
            raise ValueError("reset_after_s must be >= 0")
        self.failure_threshold = failure_threshold
        self.reset_after_s = reset_after_s
        self._clock = clock
        self._state: BreakerState = "closed"
        self._failures = 0  # consecutive failed calls while closed
        self._opened_at = 0.0
        self._probing = False  # a half-open probe is in flight
        self.opened_total = 0  # how many times the breaker opened (for tests and logs)

    @property
    def state(self) -> BreakerState:
        """The state as of now (an open breaker past its reset time reads half_open)."""
        if self._state == "open" and self._clock() - self._opened_at >= self.reset_after_s:
            return "half_open"
        return self._state

    @property
    def retry_in_s(self) -> float:
        """Seconds until an open breaker lets a probe through (0 when not open)."""
        if self._state != "open":
            return 0.0
        return max(0.0, self.reset_after_s - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """May a call go out now? In half_open exactly one caller (the probe) gets True."""
        state = self.state
        if state == "closed":
            return True
        if state == "open" or self._probing:
            return False
        self._state = "half_open"
        self._probing = True
        return True

    def record_success(self) -> None:
        self._state = "closed"
        self._failures = 0
        self._probing = False

    def record_failure(self) -> None:
        if self._state == "half_open":
            self._open()
            return
        self._failures += 1
        if self._state == "closed" and self._failures >= self.failure_threshold:
            self._open()

    def release(self) -> None:
        """The call ended with no verdict on the endpoint (cancelled): let another probe."""
        self._probing = False

    def _open(self) -> None:
        self._state = "open"
        self._opened_at = self._clock()
        self._failures = 0
        self._probing = False
        self.opened_total += 1
