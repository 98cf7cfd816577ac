"""`ragpulse qualify`: ADAMS-style qualification of every judge metric on human-labelled
events (`labels.human.overall`): Cohen's d good vs bad, the score variance ratio under
rewrites of the good answers, RMAD of d across services or models.

Also the labelled-event loading and the scores (a judge run or scorecard files) that
`ragpulse weights fit` shares.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from monitors.evaluation import parse_human
from monitors.evaluation.qualification import build_qualification
from monitors.evaluation.rewrites import rewrite_id, rewrites_of
from stream.commands.args import InputError, check_outputs, eprint, write_reports
from stream.commands.calibrate_run import judge_scores, load_scorecards
from stream.commands.eval_run import read_lines
from stream.contract.events import Event, EventLimits, InvalidEvent, parse_event
from stream.runtime.settings import ConfigError, Settings

__all__ = ["Labelled", "load_labelled", "rewrite_events", "run_qualify", "scores_for"]

EXIT_USAGE = 2
Scores = dict[str, dict[str, float]]


@dataclass
class Labelled:
    """Valid events carrying `labels.human.overall`, their verdicts, the rest counted."""

    events: list[Event] = field(default_factory=list)
    good: dict[str, bool] = field(default_factory=dict)
    rewrites: dict[str, list[str]] = field(default_factory=dict)
    n_events: int = 0

    @property
    def n_unlabelled(self) -> int:
        return self.n_events - len(self.events)


def load_labelled(lines: Iterable[bytes], limits: EventLimits | None = None) -> Labelled:
    """Like `calibrate.load_human`, for the `overall` verdict only (bool, or a number in
    [0, 1] good at ≥ 0.5, or a band name) and `labels.rewrites`; InputError names the line."""
    out = Labelled()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out.n_events += 1
        try:
            event = parse_event(line.rstrip(b"\r\n"), limits)
        except InvalidEvent as exc:
            raise InputError(f"line {n}: {exc}") from None
        labels = event.labels or {}
        human = labels.get("human")
        if human is not None and not isinstance(human, dict):
            raise InputError(f"line {n}: labels.human must be an object {{metric: value}}")
        if not human or "overall" not in human:
            continue  # not part of d, VR or the fit: counted as unlabelled
        try:
            good = parse_human(human["overall"]).good(0.5)
        except ValueError as exc:
            raise InputError(f"line {n}: labels.human.overall: {exc}") from None
        supplied = labels.get("rewrites")
        if supplied is not None and not (
            isinstance(supplied, list) and all(isinstance(s, str) for s in supplied)
        ):
            raise InputError(f"line {n}: labels.rewrites must be a list of strings")
        if event.event_id in out.good:
            raise InputError(f"line {n}: event_id {event.event_id!r} appears twice")
        out.events.append(event)
        out.good[event.event_id] = good
        if supplied:
            out.rewrites[event.event_id] = supplied
    return out


def rewrite_events(labelled: Labelled, limit: int) -> list[Event]:
    """The changed rewrites of every good answer as events `<id>~rw<k>` (labels.human and
    labels.rewrites dropped, so they are never mistaken for labelled turns)."""
    out = []
    for event in labelled.events:
        if not labelled.good[event.event_id]:
            continue
        supplied = labelled.rewrites.get(event.event_id)
        labels = {k: v for k, v in (event.labels or {}).items() if k not in ("human", "rewrites")}
        for k, text in rewrites_of(event.response, supplied, limit):
            update = {"event_id": rewrite_id(event.event_id, k), "response": text}
            out.append(event.model_copy(update={**update, "labels": labels or None}))
    return out


def scores_for(
    settings: Settings, judge: str, files: Sequence[str] | None, events: Sequence[Event]
) -> tuple[str, Mapping[str, Mapping[str, float]]]:
    """(judge name, {event_id: {metric: score}}): the scorecard files merged, else a run of
    `judge` on every event."""
    if not files:
        if judge == "none":
            raise InputError("a judge is needed: --judge embedded|openai or --scores FILE")
        return judge_scores(settings, judge, events)
    names: list[str] = []
    merged: Scores = {}
    for path in files:
        name, scores = load_scorecards(path)
        names += [n for n in name.split(", ") if n not in names]
        for event_id, row in scores.items():
            merged.setdefault(event_id, {}).update(row)
    return ", ".join(names), merged


def _write_events(events: Sequence[Event], path: str) -> None:
    lines = [json.dumps(e.model_dump(mode="json", exclude_none=True)) + "\n" for e in events]
    try:
        Path(path).write_text("".join(lines), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    eprint(f"ragpulse qualify: wrote {len(events)} rewrite events to {path}")


def _no_rewrites(args: argparse.Namespace) -> str:
    if not args.scores:
        return "no good answer has a rewrite that changes its text"
    return (
        "the scorecards hold no scores of rewrites (<event_id>~rw<k>): write them with "
        "--write-rewrites, score them with `ragpulse score --judge J --sample-rate 1` and "
        "pass both scorecard files with --scores"
    )


def run_qualify(settings: Settings, args: argparse.Namespace) -> int:
    try:
        check_outputs("qualification", args.output)
        labelled = load_labelled(read_lines(args.input), settings.limits)
        if not labelled.events:
            raise InputError(f"{args.input}: no event carries labels.human.overall")
        rewrites = rewrite_events(labelled, args.rewrites)
        if args.write_rewrites:
            _write_events(rewrites, args.write_rewrites)
        judged = labelled.events if args.scores else [*labelled.events, *rewrites]
        judge, scores = scores_for(settings, args.judge, args.scores, judged)
    except (InputError, ConfigError) as exc:
        eprint(f"ragpulse qualify: {exc}")
        return EXIT_USAGE
    groups = {
        e.event_id: (labelled.good[e.event_id], getattr(e, args.group_by) or "(none)")
        for e in labelled.events
    }
    extra = {
        "input": args.input,
        "judge": judge,
        "n_events": labelled.n_events,
        "n_labelled": len(labelled.events),
        "n_unlabelled": labelled.n_unlabelled,
        "group_by": args.group_by,
        "rewrites_per_answer": args.rewrites,
    }
    report = build_qualification(groups, scores, args.min_d, args.max_vr, _no_rewrites(args), extra)
    write_reports(report, args.output)
    metrics = report["metrics"]
    ok = sum(1 for row in metrics.values() if row["qualified"])
    eprint(
        f"ragpulse qualify: {len(labelled.events)} labelled events "
        f"({labelled.n_unlabelled} without labels.human.overall ignored); "
        f"{ok} of {len(metrics)} metrics qualified"
    )
    return 0
