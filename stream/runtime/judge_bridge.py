"""Between the event loop and the judge thread (one part of `SidecarBase`).

`submit` hands a sampled event to the judge service and never waits (a full queue drops
and counts). The judge thread's results come back on the event loop: the sampler's cost
budget, the drift streams on judge scores (the scores that feed the aggregates: population
turns, and the reference-based scores of reference turns; see
:mod:`exporters.judge_metrics`) and the scorecard
update on `rag.scores`. `close` stops taking events, lets the queue finish within its
deadline and publishes what was produced.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from exporters import PromFamilies
from monitors.drift.alarms import AlarmEvent
from stream.contract.events import Event
from stream.runtime.judging import POPULATION_REASONS, JudgeResult, JudgeService
from stream.runtime.pipeline import Pipeline

__all__ = ["JudgeBridge"]

log = logging.getLogger(__name__)

#: publish one record outside any fetched batch: (topic, key, value)
Publish = Callable[[str, bytes, bytes], Awaitable[Any]]
PublishAlarm = Callable[[AlarmEvent], Awaitable[Any]]


class JudgeBridge:
    def __init__(
        self,
        judging: JudgeService | None,
        pipeline: Pipeline,
        prom: PromFamilies,
        scores_topic: str,
        publish: Publish,
        publish_alarm: PublishAlarm,
    ) -> None:
        self.judging, self.pipeline, self.prom = judging, pipeline, prom
        self._scores_topic = scores_topic
        self._publish, self._publish_alarm = publish, publish_alarm
        self._open = judging is not None
        self._updates: set[asyncio.Future[Any]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None

    def submit(
        self,
        event: Event,
        reason: str = "base",
        wait_s: float = 0.0,
        key: bytes | None = None,
        failure_modes: Sequence[str] = (),
        repeat: bool = False,
    ) -> None:
        """Hand a sampled event to the judge; never waits (a full queue drops and counts,
        per failure mode too). Its update goes out with the scorecard's `key`."""
        if self.judging is None:
            return
        out_key = key if key is not None else (event.conversation_id or event.event_id).encode()
        if not self._open:
            self.prom.dropped.labels("shutdown").inc()
            self._flagged_dropped(failure_modes, "shutdown")
        elif not self.judging.submit(
            event, lambda result: self._on_judged(result, out_key), reason, wait_s, repeat
        ):
            self.prom.dropped.labels("judge_backlog").inc()
            self._flagged_dropped(failure_modes, "judge_backlog")

    def _flagged_dropped(self, failure_modes: Sequence[str], reason: str) -> None:
        for mode in failure_modes:
            self.prom.dropped_flagged.labels(mode, reason).inc()

    def _on_judged(self, result: JudgeResult, key: bytes) -> None:
        """Called on the judge thread: publish the scorecard update from the event loop."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._publish_update, result, key)

    def _publish_update(self, result: JudgeResult, key: bytes) -> None:
        sampler = self.pipeline.sampler
        if sampler is not None:
            flagged = result.sample_reason not in POPULATION_REASONS
            first = {id(o.call): o.call for o in result.outcomes if o.call is not None}
            sampler.record_cost(sum(c.cost_usd for c in first.values()), flagged=flagged)
            if result.second_outcomes:  # a second opinion: reserved at the estimate
                second = [c for c in result.calls() if id(c) not in first]
                sampler.settle_extra(sum(c.cost_usd for c in second), sampler.cost_estimate_usd)
        drift = self.pipeline.drift
        scores = result.aggregate_scores()  # boosted turns would bias the streams
        buffer = self.pipeline.observations
        if buffer is not None and drift is not None and scores:  # the owner runs the detectors
            wanted = drift.settings.score_metrics
            buffer.add_scores([(m, v) for m, v in scores.items() if m in wanted],
                              drift.service_label(result.service), time.time())  # fmt: skip
        elif drift is not None and scores:
            for alarm in drift.observe_scores(scores, result.service):
                self.pipeline.alarm(alarm)
                self.track(self._publish_alarm(alarm))
        body = json.dumps(result.scorecard_update()).encode()
        self.track(self._publish(self._scores_topic, key, body))

    def track(self, aw: Awaitable[Any]) -> None:
        """Keep a publish running in the background; `close` waits for it."""
        task = asyncio.ensure_future(aw)
        self._updates.add(task)
        task.add_done_callback(self._updates.discard)

    async def close(self, timeout_s: float) -> None:
        """Stop taking sampled events, let queued judging finish within `timeout_s`, count
        what is left as dropped{reason="shutdown"}, and publish the updates produced."""
        if self.judging is not None:
            self._open = False
            left = await asyncio.to_thread(self.judging.close, timeout_s)
            if left:
                self.prom.dropped.labels("shutdown").inc(left)
                log.warning("shutdown: %d sampled events were not judged", left)
        await asyncio.sleep(0)  # let the updates scheduled by the judge thread start
        if self._updates:
            await asyncio.gather(*self._updates, return_exceptions=True)
