"""The throughput stages' clock: it starts after the warm-up events and stops N later."""

from __future__ import annotations

from bench.perf.stages import Clock


def test_per_event_ticks_start_after_the_warmup() -> None:
    clock = Clock(3, warmup=5)
    for _ in range(5):
        clock.tick()
    assert not clock.started  # the warm-up events are not timed
    clock.tick()
    assert clock.started and clock.first == 6
    clock.tick()
    assert not clock.done.is_set()
    clock.tick()
    assert clock.done.is_set()
    assert clock.result()["timed_events"] == 2  # the batch that started the clock is out


def test_batches_that_straddle_the_warmup() -> None:
    clock = Clock(10, warmup=5)
    clock.tick(4)
    assert not clock.started
    clock.tick(4)  # 8 handled: the clock starts with this batch in hand
    assert clock.started and clock.first == 8
    clock.tick(4)
    assert not clock.done.is_set()
    clock.tick(4)  # 16 >= 5 + 10
    assert clock.done.is_set() and clock.result()["timed_events"] == 8


def test_no_warmup_starts_with_the_first_batch() -> None:
    clock = Clock(5)
    clock.tick(2)
    assert clock.started and clock.first == 2
    clock.tick(3)
    assert clock.done.is_set() and clock.result()["timed_events"] == 3
