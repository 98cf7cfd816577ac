"""The one place retries are decided: classify an exception, then back off.

`classify` says whether an error is worth retrying (`retry`), is the remote asking us
to slow down (`rate_limit`, honouring its Retry-After), or is final (`give_up`).
`Backoff` is the one policy: jittered exponential, capped, with Retry-After winning.
Tests set `Backoff.scale = 0` (an autouse fixture) so retries cost no wall time.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, Literal

from aiokafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError

__all__ = ["Backoff", "Decision", "classify"]

Decision = Literal["retry", "rate_limit", "give_up"]


def classify(exc: BaseException) -> Decision:
    """Retry transient transport failures; give up on everything else."""
    if isinstance(exc, KafkaConnectionError | KafkaTimeoutError | ConnectionError | TimeoutError):
        return "retry"
    if isinstance(exc, KafkaError) and getattr(exc, "retriable", False):
        return "retry"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 429:
        return "rate_limit"
    if isinstance(status, int) and status >= 500:
        return "retry"
    return "give_up"


@dataclass(frozen=True)
class Backoff:
    initial_s: float = 0.5
    max_s: float = 30.0
    factor: float = 2.0
    jitter: float = 0.2  # +/- share of each delay

    #: multiplies every delay; the test suite sets it to 0
    scale: ClassVar[float] = 1.0

    def delays(self) -> Iterator[float]:
        """Endless delays: initial, initial*factor, ... capped at max_s, each jittered."""
        delay = self.initial_s
        while True:
            spread = delay * self.jitter
            yield max(0.0, delay + random.uniform(-spread, spread)) * Backoff.scale
            delay = min(delay * self.factor, self.max_s)

    @staticmethod
    async def sleep(delay: float, retry_after: float | None = None) -> None:
        """Wait `delay`, or the server's Retry-After when it asks for longer."""
        wait = max(delay, (retry_after or 0.0) * Backoff.scale)
        if wait > 0:
            await asyncio.sleep(wait)
