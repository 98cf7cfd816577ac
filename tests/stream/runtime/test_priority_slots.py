"""Judge slots go to flagged turns first, in order within each class."""

from __future__ import annotations

import asyncio

import pytest

from stream.runtime.priority_slots import PrioritySlots


def test_flagged_waiters_get_freed_slots_before_earlier_base_waiters() -> None:
    order: list[str] = []

    async def go() -> None:
        slots = PrioritySlots(1)
        gate = asyncio.Event()

        async def work(name: str, first: bool) -> None:
            async with slots.slot(first):
                order.append(name)
                await gate.wait()

        tasks = [asyncio.create_task(work("busy", False))]
        await asyncio.sleep(0)
        for name, first in [
            ("b1", False),
            ("b2", False),
            ("f1", True),
            ("b3", False),
            ("f2", True),
        ]:
            tasks.append(asyncio.create_task(work(name, first)))
            await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*tasks)
        assert slots.free == 1

    asyncio.run(go())
    assert order == ["busy", "f1", "f2", "b1", "b2", "b3"]


def test_a_cancelled_waiter_loses_no_slot() -> None:
    async def go() -> int:
        slots = PrioritySlots(2)
        gate = asyncio.Event()

        async def work(first: bool) -> None:
            async with slots.slot(first):
                await gate.wait()

        holders = [asyncio.create_task(work(False)) for _ in range(2)]
        await asyncio.sleep(0)
        waiters = [asyncio.create_task(work(i % 2 == 0)) for i in range(6)]
        await asyncio.sleep(0)
        for w in waiters[::2]:
            w.cancel()
        gate.set()
        await asyncio.gather(*holders, *waiters, return_exceptions=True)
        return slots.free

    assert asyncio.run(go()) == 2


def test_no_slots_is_an_error() -> None:
    with pytest.raises(ValueError):
        PrioritySlots(0)
