"""`ragpulse calibrate`: judge scores next to human labels (`labels.human`) for calibration.

Scores come from running a judge on every labelled event (no sampling) or from a
scorecards JSONL written by `ragpulse score` (`--scores`), matched by `event_id`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from monitors.evaluation import HumanLabel, JudgeScores, parse_human
from monitors.metrics.gates import GateSettings
from stream.commands.args import InputError
from stream.commands.eval_run import judging_for, read_jsonl
from stream.contract.events import Event, EventLimits, InvalidEvent, parse_event
from stream.runtime.settings import Settings

__all__ = ["gate_thresholds", "judge_scores", "load_human", "load_scorecards"]


def load_human(
    lines: Iterable[bytes], limits: EventLimits | None = None
) -> tuple[list[Event], dict[str, dict[str, HumanLabel]]]:
    """The events and their parsed `labels.human`; InputError names the bad line."""
    events: list[Event] = []
    human: dict[str, dict[str, HumanLabel]] = {}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = parse_event(line.rstrip(b"\r\n"), limits)
        except InvalidEvent as exc:
            raise InputError(f"line {n}: {exc}") from None
        raw = (event.labels or {}).get("human")
        if raw is None:
            continue  # unlabelled events are not part of the calibration
        if not isinstance(raw, dict):
            raise InputError(f"line {n}: labels.human must be an object {{metric: value}}")
        try:  # "overall" is the reviewer's verdict on the turn, not a metric's label
            labels = {str(k): parse_human(v) for k, v in raw.items() if k != "overall"}
        except ValueError as exc:
            raise InputError(f"line {n}: labels.human: {exc}") from None
        if not labels:
            continue
        if event.event_id in human:
            raise InputError(f"line {n}: event_id {event.event_id!r} appears twice")
        events.append(event)
        human[event.event_id] = labels
    return events, human


def load_scorecards(path: str) -> JudgeScores:
    """{event_id: {metric: score}} of a `ragpulse score` JSONL, named after its judge."""
    scores: dict[str, dict[str, float]] = {}
    judges: set[str] = set()
    for _n, card in read_jsonl(path, "scores"):
        if not isinstance(card, dict) or "metrics" not in card or "event_id" not in card:
            continue  # invalid/duplicate lines of `ragpulse score`
        row = scores.setdefault(str(card["event_id"]), {})
        for metric, outcome in (card.get("metrics") or {}).items():
            if outcome.get("status") == "scored" and outcome.get("score") is not None:
                row[metric] = float(outcome["score"])
                judges.add(str(outcome.get("judge") or ""))
    name = ", ".join(sorted(j for j in judges if j)) or Path(path).name
    return name, scores


def judge_scores(settings: Settings, judge_type: str, events: Iterable[Event]) -> JudgeScores:
    """Run `judge_type` on every event, waiting for each: {event_id: {metric: score}}."""
    judging = judging_for(settings.model_copy(deep=True), judge_type)
    if judging is None:
        raise InputError("calibrate needs a judge: --judge embedded|openai or --scores FILE")
    scores: dict[str, dict[str, float]] = {}
    try:
        for event in events:
            result = judging.judge_now(event)
            scores[event.event_id] = {
                o.metric: float(o.score)
                for o in result.outcomes
                if o.status == "scored" and o.score is not None
            }
    finally:
        judging.close(5)
    return judging.name, scores


def gate_thresholds(
    gates: GateSettings, overrides: dict[str, float]
) -> Callable[[str, str], float]:
    """Good/bad cut of (metric, judge): an override, else the gate floor for that judge
    (`Threshold.floor`: min_by_judge, else min), else 0.5."""
    by_metric = {t.metric: t for tier in gates.tiers().values() for t in tier}

    def cut(metric: str, judge: str) -> float:
        if metric in overrides:
            return overrides[metric]
        threshold = by_metric.get(metric)
        return threshold.floor(judge) if threshold is not None else 0.5

    return cut
