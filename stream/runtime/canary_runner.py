"""Judge canaries on a schedule (one part of `SidecarBase`; docs/judges.md "Judge health").

Every `judge.health.canaries.interval_s` the runner judges one *round*: every turn of the
canary set once, through the same `JudgeService` queue as sampled turns (reason
``canary``: judge accounting and liveness, never the traffic's aggregates, SLOs or
scorecards). The round's turns are spread evenly over the interval, and the first one
waits a random part of that spacing, so neither the judge nor the sampling budget sees a
burst (nor a fleet of replicas restarted together). Each turn is charged to the sampling
budget's shared pool before it is sent, whatever the pool's level: the sampled traffic
gets what is left, so a busy stream cannot starve the canaries, and `check_canaries`
refuses at start a schedule that would take more than :data:`MAX_BUDGET_SHARE` of the
calls budget. A turn the judge queue has no room for ends the round, which is counted as
skipped (``ragpulse_judge_canary_rounds_total{outcome="judge_backlog"}``) and feeds
nothing. Rounds never overlap: the next one starts once the last verdict of this
one is in (or `round_timeout_s` passed, outcome ``timeout``).

Each judged round sets the canary score and agreement gauges and feeds the canary drift
detectors (:class:`~monitors.judges.canaries.CanaryMonitor`); an alarm transition sets
``ragpulse_judge_drift_alarm``, is logged and published on the alarms topic with service
``judge:<judge name>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from exporters.prometheus import PromFamilies
from monitors.drift.alarms import AlarmEvent, AlarmPolicy
from monitors.judges.canaries import CanaryMonitor, CanaryRound, CanarySet, load_canaries
from monitors.judges.health_settings import CanarySettings
from stream.contract.errors import RagpulseError
from stream.runtime.components import check_drift_detectors
from stream.runtime.judging import CANARY, JudgeResult, JudgeService
from stream.runtime.sampler import Sampler, SamplerBudget
from stream.runtime.settings import ConfigError

__all__ = ["MAX_BUDGET_SHARE", "CanaryRunner", "check_canaries"]

#: the share of `sampling.budget.calls_per_minute` a canary schedule may take at most
MAX_BUDGET_SHARE = 0.25

log = logging.getLogger(__name__)

PublishAlarm = Callable[[AlarmEvent], Awaitable[Any]]


def check_canaries(settings: CanarySettings, budget: SamplerBudget | None = None) -> None:
    """What the runner would refuse at start: the canary file, the detector specs, and a
    schedule over :data:`MAX_BUDGET_SHARE` of the calls budget (ConfigError naming
    `judge.health.canaries.<field>`)."""
    if not settings.enabled:
        return
    try:
        canaries = load_canaries(settings.file)
    except ValueError as exc:
        raise ConfigError(f"judge.health.canaries.file: {exc}") from None
    if budget is not None and budget.calls_per_minute is not None:
        per_minute = len(canaries.turns) * budget.calls_per_event * 60.0 / settings.interval_s
        cap = MAX_BUDGET_SHARE * budget.calls_per_minute
        if per_minute > cap:
            raise ConfigError(
                f"judge.health.canaries.interval_s: {settings.interval_s:g} s makes the"
                f" {len(canaries.turns)} canary turns take {per_minute:.1f} judge calls a minute,"
                f" over {MAX_BUDGET_SHARE:.0%} of sampling.budget.calls_per_minute"
                f" ({budget.calls_per_minute:g}): raise the interval or the budget"
            )
    check_drift_detectors(settings.detectors, "judge.health.canaries.detectors")


class CanaryRunner:
    def __init__(
        self,
        settings: CanarySettings,
        judging: JudgeService,
        prom: PromFamilies,
        sampler: Sampler | None = None,
        calls_per_turn: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Raises a RagpulseError (ValueError) naming the file or option that is wrong."""
        self.settings = settings
        self.judging = judging
        self.prom = prom
        self.sampler = sampler
        self.calls_per_turn = calls_per_turn
        self.clock = clock
        self.canaries: CanarySet = load_canaries(settings.file)
        window = max((int(d.get("window_size", 6)) for d in settings.detectors), default=6)
        policy = AlarmPolicy(settings.min_hold_s, settings.clear_after_s, recent_window=window)
        self.monitor = CanaryMonitor(judging.name, settings.detectors, policy, judging.floor)
        self.round_timeout_s = max(settings.interval_s, 120.0)
        self.rounds = 0
        outputs = {o for m in judging.judge_metrics for o in m.outputs}
        #: the canary set's metrics that an enabled judge metric scores
        self.watched = [m for m in self.canaries.metrics() if m in outputs]
        prom.judge_health.declare_canaries(judging.name, self.canaries.name, self.watched)

    async def run(self, publish: PublishAlarm | None = None) -> None:
        """Judge a round every `interval_s`, its turns spread over it, until cancelled."""
        spacing = self.settings.interval_s / len(self.canaries.turns)
        await asyncio.sleep(random.uniform(0.0, spacing))  # replicas restarted together
        while True:
            started = time.monotonic()
            try:
                for alarm in await self.round(spacing):
                    if publish is not None:
                        await publish(alarm)
            except RagpulseError as exc:  # never stops the sidecar
                log.error("canary round failed: %s", exc)
            await asyncio.sleep(max(0.0, self.settings.interval_s - (time.monotonic() - started)))

    def _count(self, outcome: str) -> None:
        self.prom.judge_health.canary_rounds.labels(
            self.judging.name, self.canaries.name, outcome
        ).inc()

    async def round(self, spacing: float = 0.0) -> list[AlarmEvent]:
        """One round, a turn every `spacing` seconds: judged, exported and fed to the
        detectors; the alarm transitions (none when the round was skipped)."""
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[JudgeResult]] = []
        estimate = self.sampler.cost_estimate_usd if self.sampler is not None else 0.0
        for i, turn in enumerate(self.canaries.turns):
            if i and spacing > 0:
                await asyncio.sleep(spacing)
            if self.judging.room() < 1:
                return self._skip("judge_backlog", futures)
            if self.sampler is not None:
                self.sampler.charge_extra(self.calls_per_turn, estimate)
            fut: asyncio.Future[JudgeResult] = loop.create_future()

            def done(result: JudgeResult, fut: asyncio.Future[JudgeResult] = fut) -> None:
                if not loop.is_closed():  # a verdict after the sidecar's loop ended: unused
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(_resolve, fut, result)

            if not self.judging.submit(turn.event, done, CANARY):
                return self._skip("judge_backlog", futures)
            futures.append(fut)
        _, pending = await asyncio.wait(futures, timeout=self.round_timeout_s)
        if pending:
            return self._skip("timeout", futures)
        results: list[JudgeResult | None] = [f.result() for f in futures]
        if self.sampler is not None:
            cost = sum(c.cost_usd for r in results if r is not None for c in r.calls())
            self.sampler.settle_extra(cost, estimate * len(futures))
        self._count("judged")
        self.rounds += 1
        return self._record(results)

    def _skip(self, outcome: str, futures: list[asyncio.Future[JudgeResult]]) -> list[AlarmEvent]:
        """Count a skipped round; its turns already sent finish on their own, unused."""
        for fut in futures:
            fut.cancel()
        self._count(outcome)
        return []

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
        h = self.prom.judge_health
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
        return alarms


def _resolve(fut: asyncio.Future[JudgeResult], result: JudgeResult) -> None:
    if not fut.done():
        fut.set_result(result)
