"""`ragpulse_slo_events_total{slo, service, prompt_version, outcome}`: each SLO's good and
bad events, counted where the turn is already scored or judged (docs/slo.md).

- `failure_free`: every scored turn (`EventMetrics.scored`, children cached per deployment);
- `valid_events`: every consumed message: scored or duplicate is good, dead-lettered is bad
  (labels `service="all"`, `prompt_version="all"`: a dead letter has no service);
- `judge_pass`: every judged turn sampled at the base/stratum rate whose gate was evaluated;
- `reference_correct`: every reference turn (sampler reason `reference`) whose reference
  metric was scored. A judge error counts as neither: it is not a verdict.

`service` and `prompt_version` are the capped label values (`labels.max_values` /
`labels.allow`); an SLO's `services` selector matches the raw `service` field. Both
outcomes of a label set are created together, so the error ratio exists from the first event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from exporters.slo_settings import SloSpec

__all__ = ["ALL", "SloCounters"]

#: the `service` / `prompt_version` value of SLOs that do not split by them
ALL = "all"

Pair = tuple[Any, Any]  # (good child, bad child)


def _selects(services: frozenset[str], raw: str | None) -> bool:
    return not services or (raw is not None and raw in services)


class SloCounters:
    """The SLO counters of one process; cheap to call when no SLO is configured."""

    def __init__(self, family: Any, specs: Sequence[SloSpec] = ()) -> None:
        self._family = family
        self._pairs: dict[tuple[str, str, str], Pair] = {}
        self.failure_free = [
            (s.name, frozenset(s.services), frozenset(s.failure_modes))
            for s in specs
            if s.sli == "failure_free"
        ]
        self.judge_pass = [
            (s.name, frozenset(s.services), s.gate) for s in specs if s.sli == "judge_pass"
        ]
        self.reference = [
            (s.name, frozenset(s.services), s.metric, s.floor)
            for s in specs
            if s.sli == "reference_correct"
        ]
        valid = [self.pair(s.name, ALL, ALL) for s in specs if s.sli == "valid_events"]
        self.valid_good = [good for good, _ in valid]
        self.valid_bad = [bad for _, bad in valid]

    def pair(self, slo: str, service: str, prompt_version: str) -> Pair:
        key = (slo, service, prompt_version)
        pair = self._pairs.get(key)
        if pair is None:
            f = self._family
            pair = self._pairs[key] = (
                f.labels(slo, service, prompt_version, "good"),
                f.labels(slo, service, prompt_version, "bad"),
            )
        return pair

    # -- per scored turn (the detector path) ----------------------------------------------
    def for_deployment(
        self, raw_service: str | None, service: str, prompt_version: str
    ) -> tuple[tuple[frozenset[str], Any, Any], ...]:
        """The failure_free SLOs covering a deployment: (bad modes, good child, bad child).
        The judge SLOs' children of the deployment are created too, at 0: its first judged
        verdicts then count in `rate()` (a series that appears at 1 loses its first count)."""
        judged = [(n, s) for n, s, _ in self.judge_pass] + [(n, s) for n, s, *_ in self.reference]
        for name, services in judged:
            if _selects(services, raw_service):
                self.pair(name, service, prompt_version)
        return tuple(
            (modes, *self.pair(name, service, prompt_version))
            for name, services, modes in self.failure_free
            if _selects(services, raw_service)
        )

    def valid(self, good: bool, n: int = 1) -> None:
        """`n` consumed messages: scored/duplicate (good) or dead-lettered (bad)."""
        for child in self.valid_good if good else self.valid_bad:
            child.inc(n)

    # -- per judged turn (the judge thread) -----------------------------------------------
    def judged(
        self,
        raw_service: str | None,
        label: Callable[[], tuple[str, str]],
        population: bool,
        reference: bool,
        gates: Mapping[str, bool | None],
        reference_scores: Mapping[str, float],
    ) -> None:
        """One judged turn: its gate results (population turns) and reference-metric scores
        (reference turns). `label` gives the capped (service, prompt_version)."""
        labels: tuple[str, str] | None = None
        if population:
            for name, services, gate in self.judge_pass:
                passed = gates.get(gate)
                if passed is not None and _selects(services, raw_service):
                    labels = labels or label()
                    good, bad = self.pair(name, *labels)
                    (good if passed else bad).inc()
        if reference:
            for name, services, metric, floor in self.reference:
                score = reference_scores.get(metric)
                if score is not None and _selects(services, raw_service):
                    labels = labels or label()
                    good, bad = self.pair(name, *labels)
                    (good if score >= floor else bad).inc()
