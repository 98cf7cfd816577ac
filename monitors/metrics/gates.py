"""Tiered quality gates over the judge-metric outcomes of one event.

Three tiers, each a list of ``{metric, min}`` thresholds (config ``gates``):

* ``critical`` — policy compliance and groundedness; a failure should page;
* ``quality`` — answer quality; a failure should warn;
* ``diagnostic`` — retrieval and citation health; monitored, never pages.

A gate passes when every one of its metrics that was *scored* on the event is at or
above its minimum for the judge that scored it (``min_by_judge``, else ``min``);
metrics that were skipped or hit a judge error do not count (they are
not evidence either way). A gate with no scored metric is ``None`` (not evaluated), so
pass ratios are computed over the events the gate could judge.

``min`` is written for an LLM judge's scale. The embedded judge has its own scales
(calibrated probabilities for four metrics, raw support for ``citation_accuracy``), so
the defaults carry per-judge floors for it, fitted on the developer split on the scale it
reports by ``python -m bench.judge.gate_floors`` and read from
``monitors/judges/embedded_gate_floors.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import cache
from importlib.resources import files

from pydantic import BaseModel, ConfigDict, Field, field_validator

from monitors.metrics.base import MetricOutcome
from stream.contract.scales import GATE_ACTIONS, GATES

__all__ = [
    "GATES",
    "GATE_ACTIONS",
    "GateSettings",
    "Threshold",
    "embedded_floors",
    "evaluate_gates",
    "gate_failures",
    "metric_floor",
]

#: the floor of a metric that is in no gate (judge health: agreement and flips)
DEFAULT_FLOOR = 0.5


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str = Field(min_length=1, description="a judge metric output name")
    min: float = Field(ge=0, le=1, description="lowest passing score (LLM judge scale)")
    min_by_judge: dict[str, float] = Field(
        default_factory=dict,
        description="judge name or glob (e.g. embedded-minilm-v1, 'openai:*') -> lowest "
        "passing score on that judge's scale; other judges use min",
    )

    @field_validator("min_by_judge")
    @classmethod
    def _ratios(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(k for k, x in v.items() if not 0.0 <= x <= 1.0)
        if bad:
            raise ValueError(f"min_by_judge values must be in [0, 1]: {bad}")
        return v

    def floor(self, judge: str | None) -> float:
        """The floor for scores from `judge`: exact name, then the first matching glob."""
        if judge:
            if judge in self.min_by_judge:
                return self.min_by_judge[judge]
            for pattern, value in self.min_by_judge.items():
                if fnmatchcase(judge, pattern):
                    return value
        return self.min


EMBEDDED_JUDGE = "embedded-minilm-v1"


@cache
def embedded_floors() -> dict[str, float]:
    """The embedded judge's fitted floors per metric (``embedded_gate_floors.json``)."""
    src = files("monitors.judges") / "embedded_gate_floors.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    return {str(k): float(v) for k, v in data["floors"].items()}


def _t(metric: str, minimum: float) -> Threshold:
    fitted = embedded_floors().get(metric)
    by_judge = {EMBEDDED_JUDGE: fitted} if fitted is not None else {}
    return Threshold(metric=metric, min=minimum, min_by_judge=by_judge)


class GateSettings(BaseModel):
    """Thresholds of the three gate tiers (config ``gates``)."""

    model_config = ConfigDict(extra="forbid")

    critical: list[Threshold] = Field(
        default_factory=lambda: [
            _t("faithfulness", 0.7),
            _t("hallucination", 0.7),
            _t("source_policy_usage", 0.5),
        ],
        description="policy compliance and groundedness (page)",
    )
    quality: list[Threshold] = Field(
        default_factory=lambda: [
            _t("answer_relevance", 0.6),
            _t("context_relevance", 0.5),
            _t("s_final", 0.7),
            _t("citation_accuracy", 0.7),
        ],
        description="answer quality (warn)",
    )
    diagnostic: list[Threshold] = Field(
        default_factory=lambda: [
            _t("citation_coverage", 0.5),
            _t("retrieval_correctness", 0.6),
            _t("context_sufficiency", 0.6),
        ],
        description="retrieval and citation health (monitor)",
    )

    @field_validator("critical", "quality", "diagnostic")
    @classmethod
    def _unique(cls, v: list[Threshold]) -> list[Threshold]:
        names = [t.metric for t in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"metric listed twice in one gate: {dupes}")
        return v

    def tiers(self) -> dict[str, list[Threshold]]:
        return {gate: getattr(self, gate) for gate in GATES}

    def unknown_metrics(self, known: Iterable[str]) -> list[str]:
        """Gate metrics that no enabled metric produces (to warn about at start)."""
        have = set(known)
        return sorted({t.metric for ts in self.tiers().values() for t in ts} - have)


def metric_floor(settings: GateSettings, metric: str, judge: str | None) -> float:
    """The floor of `metric` for `judge`: its threshold in the first gate tier that lists it
    (``min_by_judge``, else ``min``), or :data:`DEFAULT_FLOOR` when no gate lists it."""
    for thresholds in settings.tiers().values():
        for t in thresholds:
            if t.metric == metric:
                return t.floor(judge)
    return DEFAULT_FLOOR


def _scores(outcomes: Iterable[MetricOutcome]) -> dict[str, tuple[float, str]]:
    return {
        o.metric: (float(o.score), o.judge)
        for o in outcomes
        if o.status == "scored" and o.score is not None
    }


def gate_failures(
    outcomes: Iterable[MetricOutcome], settings: GateSettings | None = None
) -> dict[str, list[str] | None]:
    """Per gate: the failed thresholds as ``"metric 0.42 < 0.7"``, or None if not evaluated."""
    scores = _scores(outcomes)
    result: dict[str, list[str] | None] = {}
    for gate, thresholds in (settings or GateSettings()).tiers().items():
        judged = [t for t in thresholds if t.metric in scores]
        if not judged:
            result[gate] = None
            continue
        failed = []
        for t in judged:
            score, judge = scores[t.metric]
            floor = t.floor(judge)
            if score < floor:
                failed.append(f"{t.metric} {score:.2f} < {floor:g}")
        result[gate] = failed
    return result


def evaluate_gates(
    outcomes: Iterable[MetricOutcome], settings: GateSettings | None = None
) -> dict[str, bool | None]:
    """``{gate: True (pass) | False (fail) | None (no metric of the gate scored)}``."""
    return {
        gate: None if failed is None else not failed
        for gate, failed in gate_failures(outcomes, settings).items()
    }
