"""`ragpulse eval`: detectors + judge metrics over a JSONL file, synchronously, into a report.

Events go through the same `Pipeline` as the stream (parse, dedupe, detectors). The
judged share is an unbiased sample: a turn is judged when its conversation's stable hash
position (`Sampler.position`) is below `--sample-rate`; the sidecar's boosts and budgets
are *not* applied, since they would tilt the report's means towards detector hits.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitors.evaluation import EventRecord, InputStats, JudgeStats
from monitors.metrics.common import distinct_calls
from stream.commands.args import InputError
from stream.contract.events import parse_event
from stream.contract.reference import reference_of
from stream.runtime.filesource import open_input
from stream.runtime.judging import JudgeResult, JudgeService
from stream.runtime.judging_build import build_judging
from stream.runtime.pipeline import Pipeline
from stream.runtime.sampler import Sampler
from stream.runtime.settings import ConfigError, Settings

__all__ = [
    "EvalRun",
    "judging_for",
    "load_labels",
    "merge_labels",
    "read_jsonl",
    "read_lines",
    "run_eval",
]


def read_jsonl(path: str, what: str, bad_line: str = "not JSON") -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line of a JSONL file; InputError names
    the file (`what` it is) when it cannot be read, and the line when it is not JSON."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{path}:{n}: {bad_line}") from None


@dataclass
class EvalRun:
    records: list[EventRecord] = field(default_factory=list)
    input: InputStats = field(default_factory=InputStats)
    judge: JudgeStats = field(default_factory=JudgeStats)


def load_labels(path: str) -> dict[str, dict[str, Any]]:
    """`{"event_id": ..., "labels": {...}}` per line -> {event_id: labels}."""
    out: dict[str, dict[str, Any]] = {}
    expected = "expected {'event_id': ..., 'labels': {...}}"
    for n, row in read_jsonl(path, "labels", expected):
        try:
            event_id, labels = row["event_id"], row["labels"]
        except (KeyError, TypeError):
            raise InputError(f"{path}:{n}: {expected}") from None
        if not isinstance(labels, dict):
            raise InputError(f"{path}:{n}: labels must be an object")
        out.setdefault(str(event_id), {}).update(labels)
    return out


def merge_labels(raw: bytes, extra: Mapping[str, dict[str, Any]]) -> tuple[bytes, bool]:
    """The raw event with the labels-file entry merged into `labels` (True if matched)."""
    try:
        data = json.loads(raw)
        labels = extra.get(str(data.get("event_id")))
    except (ValueError, AttributeError):  # the pipeline reports it as invalid
        return raw, False
    if labels is None:
        return raw, False
    own = data.get("labels") if isinstance(data.get("labels"), dict) else {}
    data["labels"] = {**own, **labels}
    return json.dumps(data, ensure_ascii=False).encode(), True


def _record(card: dict[str, Any], category: Any) -> EventRecord:
    return EventRecord(
        event_id=str(card["event_id"]),
        category=str(category) if category is not None else None,
        failure_modes=list(card.get("failure_modes", [])),
    )


def _add_judged(record: EventRecord, result: JudgeResult, stats: JudgeStats) -> None:
    record.sampled = True
    record.gates = dict(result.gates)
    for o in result.outcomes:
        if o.status == "scored" and o.score is not None:
            record.scores[o.metric] = float(o.score)
            record.judges[o.metric] = o.judge
            if o.calibrated:
                record.calibrated.append(o.metric)
        else:
            record.not_scored[o.metric] = o.status
    for call in distinct_calls(result.outcomes):
        stats.calls += 1
        stats.prompt_tokens += call.prompt_tokens
        stats.completion_tokens += call.completion_tokens
        stats.cost_usd += call.cost_usd


def run_eval(
    settings: Settings,
    lines: Iterable[bytes],
    labels: Mapping[str, dict[str, Any]] | None = None,
    judging: JudgeService | None = None,
    sample_rate: float = 1.0,
) -> EvalRun:
    """Score every line; judge the sampled ones now (one at a time, waiting for each)."""
    labels = labels or {}
    run = EvalRun(judge=JudgeStats(name=judging.name if judging is not None else "none"))
    pipeline = Pipeline(settings, run_drift=False)
    position = Sampler(settings.sampling).position
    matched: set[str] = set()
    for line in lines:
        raw = line.rstrip(b"\r\n")
        if not raw.strip():
            continue
        run.input.lines += 1
        raw, hit = merge_labels(raw, labels) if labels else (raw, False)
        result = pipeline.process(raw)
        if result.outcome != "scored" or result.scorecard is None:
            run.input.invalid += result.outcome == "invalid"
            run.input.duplicate += result.outcome == "duplicate"
            continue
        run.input.scored += 1
        event = json.loads(raw)
        if hit:
            matched.add(str(event["event_id"]))
        record = _record(result.scorecard, (event.get("labels") or {}).get("category"))
        ref = reference_of(event.get("labels") if isinstance(event.get("labels"), dict) else None)
        record.reference = ref is not None and ref.present
        if judging is not None:
            parsed = parse_event(raw, settings.limits)
            # reference turns are always judged, as the sidecar's sampler does
            if record.reference or position(parsed) < sample_rate:
                started = time.perf_counter()
                judged = judging.judge_now(parsed, "reference" if record.reference else "base")
                run.judge.latencies_s.append(time.perf_counter() - started)
                _add_judged(record, judged, run.judge)
                run.input.judged += 1
        run.records.append(record)
    run.input.labels_matched = len(matched)
    run.input.labels_unmatched = len(set(labels) - matched)
    return run


def judging_for(settings: Settings, judge_type: str) -> JudgeService | None:
    """A JudgeService for `judge_type` (none: None); ConfigError when it cannot be built."""
    settings.judge.backend = settings.judge.backend.with_type(judge_type)
    try:
        return build_judging(settings)
    except ConfigError:
        raise
    except (ImportError, OSError) as exc:
        raise ConfigError(f"judge {judge_type!r} cannot start: {exc}") from None


def read_lines(path: str) -> list[bytes]:
    try:
        with open_input(path) as src:
            return list(src)
    except OSError as exc:
        raise InputError(f"cannot read {exc.filename or path}: {exc.strerror}") from None
