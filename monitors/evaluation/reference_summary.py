"""The reference-based block of the `ragpulse eval` report (``report["reference"]``).

Reference-based metrics score a turn against the reference it carries
(``labels.expected_answer`` / ``labels.required_information``, see
`stream.contract.reference`) and skip every other turn, so their population is the
reference turns (golden/canary replays, reviewed turns), not the traffic. The report keeps
them in ``metrics`` like any judge metric (and the baseline comparison tests them the same
way) and summarises them apart, with the number of events that carry a reference:

```
"reference": {
  "events": 12,          # events with a reference
  "judged": 10,          # events with at least one reference-based score
  "metrics": {"answer_correctness": {"n": 10, "mean": 0.71, "ci95": [0.6, 0.8],
                                     "bands": {"severe": 0.1, ...}, "judge_error": 0}}
}
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from monitors.evaluation.records import EventRecord
from monitors.evaluation.stats import finite

__all__ = ["REFERENCE_METRICS", "has_reference", "reference_summary"]

#: outputs of the reference-based metrics (those whose ``needs`` contains "reference"):
#: ``answer_correctness``, ``answer_correctness_analytic``, ``dece``; in this order in the
#: report. tests/monitors/evaluation/test_reference_report.py holds it to the registry.
REFERENCE_METRICS: tuple[str, ...] = (
    "answer_correctness",
    "answer_precision",
    "answer_recall",
    "answer_f1",
    "dece_precision",
    "dece_recall",
    "dece_f2",
)


def has_reference(record: EventRecord) -> bool:
    """The event carried a reference: the run flagged it, or a reference-based metric
    scored it or failed on it with a judge error (they never run without one)."""
    return record.reference or any(
        m in record.scores or record.not_scored.get(m) == "judge_error" for m in REFERENCE_METRICS
    )


def _row(summary: Mapping[str, Any]) -> dict[str, Any]:
    n = int(summary["scored"])
    counts: Mapping[str, int] = summary["bands"]
    return {
        "n": n,
        "mean": summary["mean"],
        "ci95": summary["ci95"],
        "bands": {band: finite(count / n) if n else None for band, count in counts.items()},
        "judge_error": summary["judge_error"],
    }


def reference_summary(
    records: Sequence[EventRecord], metrics: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The ``reference`` block from the records and their `metric_summary` (``metrics``),
    or None when no record has a reference-based score."""
    if not any(metrics.get(m, {}).get("scored") for m in REFERENCE_METRICS):
        return None
    shown = [
        m for m in REFERENCE_METRICS if metrics.get(m, {}).get("scored") or
        metrics.get(m, {}).get("judge_error")
    ]  # fmt: skip
    return {
        "events": sum(has_reference(r) for r in records),
        "judged": sum(any(m in r.scores for m in REFERENCE_METRICS) for r in records),
        "metrics": {m: _row(metrics[m]) for m in shown},
    }
