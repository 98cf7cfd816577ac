"""Tiered gates over a whole run: per-tier pass rate against a floor, per-threshold shares.

An event passes a tier when `monitors.metrics.gates.gate_failures` finds no failed
threshold among the tier's scored metrics (per event, exactly as the sidecar decides);
the run passes the tier when the share of evaluated events that passed is at least the
tier's floor. A threshold's floor depends on the judge that scored the metric
(``Threshold.floor(judge)``: ``min_by_judge``, else ``min``); ``floors_used`` lists them.
Tiers with no evaluated event are ``not_evaluated`` (never a failure).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from monitors.evaluation.records import EventRecord
from monitors.evaluation.stats import finite
from monitors.metrics.base import MetricOutcome
from monitors.metrics.gates import GATE_ACTIONS, GATES, GateSettings, gate_failures

__all__ = ["DEFAULT_FLOORS", "event_gate_failures", "gate_floors", "summarize_gates"]

DEFAULT_FLOORS: dict[str, float] = {"critical": 0.95, "quality": 0.90, "diagnostic": 0.80}


def gate_floors(
    critical_gates: Iterable[str], critical_floor: float, overrides: Mapping[str, float]
) -> dict[str, float]:
    """Floors per tier: the alert floor for critical tiers, defaults, then overrides."""
    floors = dict(DEFAULT_FLOORS)
    for gate in critical_gates:
        floors[gate] = critical_floor
    floors.update(overrides)
    return floors


def event_gate_failures(record: EventRecord, settings: GateSettings) -> dict[str, list[str] | None]:
    """`gate_failures` of one recorded event (outcomes rebuilt from its scores)."""
    outcomes = [
        MetricOutcome(metric, "scored", score=score, judge=record.judges.get(metric, ""))
        for metric, score in record.scores.items()
    ]
    return gate_failures(outcomes, settings)


def summarize_gates(
    records: Iterable[EventRecord],
    settings: GateSettings,
    floors: Mapping[str, float],
    critical: Collection[str] = ("critical",),
) -> dict[str, dict[str, Any]]:
    tiers = settings.tiers()
    evaluated: dict[str, int] = dict.fromkeys(GATES, 0)
    passed: dict[str, int] = dict.fromkeys(GATES, 0)
    scored: dict[tuple[str, str], list[float]] = {}
    failed: dict[tuple[str, str], int] = {}
    used: dict[tuple[str, str], dict[str, float]] = {}  # judge -> floor applied
    for record in records:
        for gate, failures in event_gate_failures(record, settings).items():
            if failures is None:
                continue
            evaluated[gate] += 1
            passed[gate] += not failures
            bad = {f.split(" ", 1)[0] for f in failures}
            for t in tiers[gate]:
                if t.metric in record.scores:
                    scored.setdefault((gate, t.metric), []).append(record.scores[t.metric])
                    judge = record.judges.get(t.metric, "")
                    used.setdefault((gate, t.metric), {})[judge or "-"] = t.floor(judge)
                    failed[(gate, t.metric)] = failed.get((gate, t.metric), 0) + (t.metric in bad)
    out: dict[str, dict[str, Any]] = {}
    for gate in GATES:
        n = evaluated[gate]
        rate = passed[gate] / n if n else None
        floor = float(floors.get(gate, DEFAULT_FLOORS[gate]))
        status = "not_evaluated" if rate is None else ("pass" if rate >= floor else "fail")
        thresholds = []
        for t in tiers[gate]:
            values = scored.get((gate, t.metric), [])
            row: dict[str, Any] = {"metric": t.metric, "min": t.min, "scored": len(values)}
            if t.min_by_judge:
                row["min_by_judge"] = dict(t.min_by_judge)
            row["floors_used"] = dict(sorted(used.get((gate, t.metric), {}).items()))
            if values:
                row["pass_rate"] = finite(1 - failed[(gate, t.metric)] / len(values))
                row["mean"] = finite(sum(values) / len(values))
            thresholds.append(row)
        out[gate] = {
            "action": GATE_ACTIONS[gate],
            "critical": gate in critical,
            "evaluated": n,
            "passed": passed[gate],
            "pass_rate": finite(rate),
            "floor": floor,
            "status": status,
            "thresholds": thresholds,
        }
    return out
