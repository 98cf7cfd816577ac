"""Offline evaluation maths: run reports, gates over a run, regressions, judge calibration.

`build_report` turns per-event records into the `ragpulse eval` report (a dict);
`compare_reports` tests a run against a baseline report; `build_calibration` measures a
judge against human labels. Renderers live in `exporters` (`render_report`).
"""

from monitors.evaluation.calibration import (
    BAND_MIDPOINTS,
    BANDS,
    HumanLabel,
    agreement,
    expected_calibration_error,
    panel_agreement,
    parse_human,
    reliability,
)
from monitors.evaluation.calibration_report import (
    CALIBRATION_FORMAT,
    JudgeScores,
    ThresholdFor,
    build_calibration,
)
from monitors.evaluation.compound import bootstrap_ci, fit_weights, oof_auc
from monitors.evaluation.gate_summary import (
    DEFAULT_FLOORS,
    event_gate_failures,
    gate_floors,
    summarize_gates,
)
from monitors.evaluation.qualification import (
    QUALIFICATION_FORMAT,
    build_qualification,
    cohens_d,
    variance_ratio,
)
from monitors.evaluation.records import EventRecord, InputStats, JudgeStats
from monitors.evaluation.regression import compare_reports, compare_scores, compare_shares
from monitors.evaluation.report import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    EXIT_REGRESSION,
    REPORT_FORMAT,
    build_report,
    exit_code,
    failure_mode_summary,
    metric_summary,
    records_of,
)

__all__ = [
    "BANDS",
    "BAND_MIDPOINTS",
    "CALIBRATION_FORMAT",
    "DEFAULT_FLOORS",
    "EXIT_GATE_FAILED",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "QUALIFICATION_FORMAT",
    "REPORT_FORMAT",
    "EventRecord",
    "HumanLabel",
    "InputStats",
    "JudgeScores",
    "JudgeStats",
    "ThresholdFor",
    "agreement",
    "bootstrap_ci",
    "build_calibration",
    "build_qualification",
    "build_report",
    "cohens_d",
    "compare_reports",
    "compare_scores",
    "compare_shares",
    "event_gate_failures",
    "exit_code",
    "expected_calibration_error",
    "failure_mode_summary",
    "fit_weights",
    "gate_floors",
    "metric_summary",
    "oof_auc",
    "panel_agreement",
    "parse_human",
    "records_of",
    "reliability",
    "summarize_gates",
    "variance_ratio",
]
