"""`concurrency` judge slots, handed to flagged turns before base-rate ones.

An asyncio semaphore wakes its waiters in arrival order, so in a burst the flagged turns
would wait behind every base-rate turn queued before them. :class:`PrioritySlots` keeps
two FIFO queues of waiters: a freed slot goes to the oldest `first` waiter, else to the
oldest other one. One event loop only (the judge thread's).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

__all__ = ["PrioritySlots"]


class PrioritySlots:
    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("slots must be >= 1")
        self.free = slots
        self._first: deque[asyncio.Future[None]] = deque()
        self._rest: deque[asyncio.Future[None]] = deque()

    @contextlib.asynccontextmanager
    async def slot(self, first: bool = False) -> AsyncIterator[None]:
        await self._acquire(first)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, first: bool) -> None:
        if self.free > 0 and not self._first and not self._rest:
            self.free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._first if first else self._rest
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot as it was cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):  # a release may have skipped it
                    queue.remove(waiter)
            raise

    def _release(self) -> None:
        for queue in (self._first, self._rest):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)  # the slot passes straight to the waiter
                    return
        self.free += 1
