"""Judge canaries on a schedule (one part of `SidecarBase`; docs/judges.md "Judge health").

Every `judge.health.canaries.interval_s` the runner judges one *round*: every turn of the
canary set once, through the same `JudgeService` queue as sampled turns (reason
``canary``: judge accounting and liveness, never the traffic's aggregates, SLOs or
scorecards). A round is paid for before it starts: it takes its calls and estimated
dollars from the sampling budget's shared pool, or it is skipped and counted
(``ragpulse_judge_canary_rounds_total{outcome="budget"}``); a judge queue without room for
the whole round skips it too (``judge_backlog``). Rounds never overlap: the next one waits
for the last verdict of this one (or `round_timeout_s`, outcome ``timeout``).

Each judged round sets the canary score and agreement gauges and feeds the canary drift
detectors (:class:`~monitors.judges.canaries.CanaryMonitor`); an alarm transition sets
``ragpulse_judge_drift_alarm``, is logged and published on the alarms topic with service
``judge:<judge name>``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from exporters.prometheus import Metrics
from monitors.drift.alarms import AlarmEvent, AlarmPolicy
from monitors.judges.canaries import CanaryMonitor, CanaryRound, CanarySet, load_canaries
from monitors.judges.health_settings import CanarySettings
from stream.contract.errors import RagpulseError
from stream.runtime.judging import CANARY, JudgeResult, JudgeService
from stream.runtime.sampler import Sampler

__all__ = ["CanaryRunner"]

log = logging.getLogger(__name__)

PublishAlarm = Callable[[AlarmEvent], Awaitable[Any]]


class CanaryRunner:
    def __init__(
        self,
        settings: CanarySettings,
        judging: JudgeService,
        metrics: Metrics,
        sampler: Sampler | None = None,
        calls_per_turn: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Raises a RagpulseError (ValueError) naming the file or option that is wrong."""
        self.settings = settings
        self.judging = judging
        self.metrics = metrics
        self.sampler = sampler
        self.calls_per_turn = calls_per_turn
        self.clock = clock
        self.canaries: CanarySet = load_canaries(settings.file)
        window = max((int(d.get("window_size", 6)) for d in settings.detectors), default=6)
        policy = AlarmPolicy(settings.min_hold_s, settings.clear_after_s, recent_window=window)
        self.monitor = CanaryMonitor(judging.name, settings.detectors, policy, judging.floor)
        self.round_timeout_s = max(settings.interval_s, 120.0)
        self.rounds = 0
        self.alarms: list[AlarmEvent] = []
        outputs = {o for m in judging.judge_metrics for o in m.outputs}
        #: the canary set's metrics that an enabled judge metric scores
        self.watched = [m for m in self.canaries.metrics() if m in outputs]
        metrics.judge_health.declare_canaries(judging.name, self.canaries.name, self.watched)

    async def run(self, publish: PublishAlarm | None = None) -> None:
        """Judge a round every `interval_s` until cancelled."""
        while True:
            started = time.monotonic()
            try:
                for alarm in await self.round():
                    if publish is not None:
                        await publish(alarm)
            except RagpulseError as exc:  # never stops the sidecar
                log.error("canary round failed: %s", exc)
            await asyncio.sleep(max(0.0, self.settings.interval_s - (time.monotonic() - started)))

    def _count(self, outcome: str) -> None:
        self.metrics.judge_health.canary_rounds.labels(
            self.judging.name, self.canaries.name, outcome
        ).inc()

    async def round(self) -> list[AlarmEvent]:
        """One round: judged, exported and fed to the detectors; the alarm transitions."""
        turns = self.canaries.turns
        reserved = 0.0
        if self.sampler is not None:
            reserved = self.sampler.cost_estimate_usd * len(turns)
            if not self.sampler.spend_extra(self.calls_per_turn * len(turns), reserved):
                self._count("budget")
                return []
        if self.judging.room() < len(turns):
            self._count("judge_backlog")
            return []
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[JudgeResult]] = []
        for turn in turns:
            fut: asyncio.Future[JudgeResult] = loop.create_future()

            def done(result: JudgeResult, fut: asyncio.Future[JudgeResult] = fut) -> None:
                loop.call_soon_threadsafe(_resolve, fut, result)

            if not self.judging.submit(turn.event, done, CANARY):
                fut.cancel()
            futures.append(fut)
        _, pending = await asyncio.wait(futures, timeout=self.round_timeout_s)
        for fut in pending:
            fut.cancel()
        if pending:
            self._count("timeout")
            return []
        results = [f.result() if not f.cancelled() else None for f in futures]
        if self.sampler is not None:
            cost = sum(c.cost_usd for r in results if r is not None for c in r.calls())
            self.sampler.settle_extra(cost, reserved)
        self._count("judged")
        self.rounds += 1
        return self._record(results)

    def _record(self, results: list[JudgeResult | None]) -> list[AlarmEvent]:
        judge, name = self.judging.name, self.canaries.name
        round_ = CanaryRound()
        for turn, result in zip(self.canaries.turns, results, strict=True):
            outcomes = {o.metric: o for o in result.outcomes} if result is not None else {}
            for metric, expected in turn.expected.items():
                outcome = outcomes.get(metric)
                if outcome is None or outcome.status == "skipped":
                    continue  # the metric is not enabled, or cannot score this turn
                round_.add(metric, expected, outcome.score)
        h = self.metrics.judge_health
        for metric in sorted(set(round_.scores) | set(round_.errors)):
            if (errors := round_.errors.get(metric, 0)) > 0:
                h.canary_verdicts.labels(judge, metric, name, "judge_error").inc(errors)
            mean = round_.mean_score(metric)
            if mean is None:
                continue
            agree, disagree = round_.verdicts(metric, self.judging.floor(metric))
            h.canary_verdicts.labels(judge, metric, name, "agree").inc(agree)
            h.canary_verdicts.labels(judge, metric, name, "disagree").inc(disagree)
            h.canary_score.labels(judge, metric, name).set(mean)
            h.canary_agreement.labels(judge, metric, name).set(agree / (agree + disagree))
        alarms = self.monitor.observe(round_, self.clock())
        for alarm in alarms:
            raised = alarm.state == "raised"
            h.drift_alarm.labels(judge, alarm.metric, name).set(1 if raised else 0)
            log.warning(
                "judge drift %s: %s of judge %s (canaries %s) moved from %.3f to %.3f",
                alarm.state, alarm.metric, judge, name, alarm.reference_mean, alarm.current_mean,
            )  # fmt: skip
        self.alarms.extend(alarms)
        return alarms


def _resolve(fut: asyncio.Future[JudgeResult], result: JudgeResult) -> None:
    if not fut.done():
        fut.set_result(result)
