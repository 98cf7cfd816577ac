"""Where each pipeline result goes (one part of `SidecarBase`).

:class:`OutputRouter` turns a :class:`~stream.runtime.pipeline.Result` into records: the
scorecard and its alarms, or a dead letter, and hands the sampled event to the judge
bridge. It also dead-letters a batch that does not decode and publishes alarms raised
outside an event (judge results, canaries). It only decides *what* goes *where*: the
engine's `send` delivers (attached to the current offset, or at once with `force`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from exporters import PromFamilies
from monitors.drift.alarms import AlarmEvent
from stream.runtime.dead_letters import dead_letter, skipped_batch_letter
from stream.runtime.fetch_guard import SkippedBatch
from stream.runtime.judge_bridge import JudgeBridge
from stream.runtime.pipeline import Result, turn_key
from stream.runtime.settings import KafkaSettings

__all__ = ["OutputRouter", "Send"]

#: the engine's publish: (topic, key, value, headers=None, force=False)
Send = Callable[..., Coroutine[Any, Any, Any]]


class OutputRouter:
    """Scorecards, alarms and dead letters to their topics; sampled events to the judge."""

    def __init__(
        self, kafka: KafkaSettings, prom: PromFamilies, send: Send, judge_bridge: JudgeBridge
    ) -> None:
        self.kafka = kafka
        self.prom = prom
        self._send = send
        self.judge_bridge = judge_bridge

    async def route(
        self, result: Result, key: bytes | None, value: bytes | None, topic: str, partition: int,
        offset: int, headers: Iterable[Any] = (),
    ) -> None:  # fmt: skip
        """Publish what the pipeline produced for one message (the same for every engine)."""
        k = self.kafka
        if result.outcome == "scored":
            key = key if key is not None else turn_key(result)
            await self._send(k.scores_topic, key, result.scorecard_bytes())
            for alarm in result.alarms:
                await self.publish_alarm(alarm)
            if result.judge_event is not None:
                self.judge_bridge.submit(
                    result.judge_event, result.sample_reason or "base", result.judge_wait_s,
                    key, (result.scorecard or {}).get("failure_modes", ()),
                    repeat=result.judge_repeat,
                )  # fmt: skip
        elif result.outcome == "invalid":
            key, value, dlq = dead_letter(result, key, value, topic, partition, offset,
                                          headers, k.dlq_max_value_bytes)  # fmt: skip
            await self._send(k.dlq_topic, key, value, dlq)
            self.prom.events.labels("dead_lettered").inc()

    async def skip_batch(self, skip: SkippedBatch) -> None:
        """An undecodable batch: its offsets count as read and invalid, its raw bytes go to
        the dead-letter topic (one record, first/next offsets in the headers)."""
        m, n = self.prom, skip.count
        m.events.labels("consumed").inc(n)
        m.events.labels("invalid").inc(n)
        m.invalid.labels("undecodable_batch").inc(n)
        m.slo.valid(False, n)
        value, dlq = skipped_batch_letter(skip, self.kafka.dlq_max_value_bytes)
        await self._send(self.kafka.dlq_topic, None, value, dlq)
        m.events.labels("dead_lettered").inc()

    async def publish_alarm(self, alarm: AlarmEvent, force: bool = False) -> None:
        """One alarm record to the alarms topic, keyed by its metric."""
        body = json.dumps(alarm.to_dict()).encode()
        await self._send(self.kafka.alarms_topic, alarm.metric.encode(), body, force=force)
