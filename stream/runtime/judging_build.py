"""`build_judging`: the configured judge, metrics and gates behind a JudgeService."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from exporters.otel import OtelEvents
from exporters.prometheus import PromFamilies
from monitors.metrics.base import MetricOutcome
from stream.runtime.components import build_judge, build_metrics
from stream.runtime.judging import JudgeService
from stream.runtime.sampler import Sampler
from stream.runtime.settings import ConfigError, Settings

__all__ = ["build_judging", "sampler_for"]


log = logging.getLogger(__name__)


def build_judging(
    settings: Settings, prom: PromFamilies | None = None, events: OtelEvents | None = None
) -> JudgeService | None:
    """The configured judge, metrics and gates behind a JudgeService (None: judge.backend none).

    Raises ConfigError naming the setting when the judge or a metric cannot be built.
    """
    js = settings.judge
    if js.backend.type == "none":
        judged = [s.name for s in settings.slos if s.sli in ("judge_pass", "reference_correct")]
        if judged:
            log.warning("judge.backend is none: the SLOs %s count no events", judged)
        return None
    from monitors.metrics.gates import evaluate_gates, metric_floor

    judge = build_judge(settings)
    built = build_metrics(settings)
    outputs = {o for m in built for o in m.outputs}
    unscored = sorted(set(js.compound.weights) - outputs)
    if unscored:
        raise ConfigError(
            f"judge.compound.weights names scores no enabled metric produces: {unscored}; "
            f"enabled outputs: {sorted(outputs)}"
        )
    reference = {o for m in built if "reference" in m.needs for o in m.outputs}
    for i, slo in enumerate(settings.slos):
        if slo.sli == "reference_correct" and slo.metric not in reference:
            problem = (
                f"slos.{i}.metric: {slo.metric!r} is not a reference-based score of the enabled"
                f" judge metrics; they give {sorted(reference) or 'none'} (judge.metrics)"
            )
            if "slos" in settings.model_fields_set:  # configured: a mistake
                raise ConfigError(problem)
            log.warning("%s: the default SLO %s counts no events", problem, slo.name)
    gates = settings.gates

    def evaluate(outcomes: Sequence[MetricOutcome]) -> Mapping[str, bool | None]:
        return evaluate_gates(outcomes, gates)

    return JudgeService(
        judge,
        built,
        js.queue_size,
        js.concurrency,
        prom,
        events,
        evaluate,
        js.windows_s,
        compound=js.compound.weights,
        floor=lambda metric: metric_floor(gates, metric, judge.name),
    )


def sampler_for(settings: Settings, judging: JudgeService | None) -> Sampler | None:
    """The sampler of `judging` (None without a judge): a deterministic judge is never
    asked twice, any other on `judge.health.consistency.rate` of the sampled turns."""
    if judging is None:
        return None
    rate = 0.0 if judging.deterministic else settings.judge.health.consistency.rate
    return Sampler(settings.sampling, repeat_rate=rate)
