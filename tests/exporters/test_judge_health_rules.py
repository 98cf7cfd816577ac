"""The judge-health alerts and the judge_suspect annotation, unit-tested with promtool."""

from __future__ import annotations

from pathlib import Path

from exporters.judge_health_rules import judge_suspect_annotation
from exporters.rules import AlertSettings, render_rule_groups
from tests.exporters.test_rules import (
    DEPLOY,
    NO_EVENTS,
    POD,
    STEPS,
    alert,
    case,
    counter,
    gauge,
    run_tests,
)

J = 'judge="openai:gpt-4o-mini"'
DRIFT_UP = gauge((0, 100), (1, STEPS + 1 - 100))  # the canaries moved at 100m


def _series(silent: bool, drift: bool, flips: float) -> dict[str, str]:
    age = (
        " ".join(str(60 * max(0, i - 120)) for i in range(STEPS + 1))
        if silent
        else gauge((5, STEPS + 1))
    )
    return {
        f'ragpulse_judge_drift_alarm{{{POD}, {J}, metric="faithfulness", canary_set="default"}}': (
            DRIFT_UP if drift else gauge((0, STEPS + 1))
        ),
        # the service's own drift alarm on the same judged metric, from 110m
        f'ragpulse_drift_alarm{{{POD}, metric="faithfulness", detector="page_hinkley",'
        ' service="all"}': gauge((0, 110), (1, STEPS + 1 - 110)),
        f'ragpulse_drift_alarm{{{POD}, metric="compound", detector="page_hinkley",'
        ' service="all"}': gauge((0, 110), (1, STEPS + 1 - 110)),
        f'ragpulse_drift_alarm{{{POD}, metric="refusal", detector="proportion",'
        ' service="all"}': gauge((0, 110), (1, STEPS + 1 - 110)),
        f'ragpulse_metric_score_count{{{POD}, metric="faithfulness"}}': counter(1),
        f'ragpulse_metric_score_sum{{{POD}, metric="faithfulness"}}': counter(0.9),
        f"ragpulse_judge_last_verdict_age_seconds{{{POD}, {J}}}": age,
        f"ragpulse_pipeline_queue_depth{{{POD}}}": gauge((3, STEPS + 1)),
        f'ragpulse_sampled_total{{{POD}, reason="base"}}': counter(1 if not silent else 0),
        f'ragpulse_judge_consistency_pairs_total{{{POD}, {J}, metric="faithfulness",'
        ' result="flip"}': counter(flips),
        f'ragpulse_judge_consistency_pairs_total{{{POD}, {J}, metric="faithfulness",'
        ' result="agree"}': counter(1 - flips),
    }


LABELS = {**DEPLOY, "judge": "openai:gpt-4o-mini"}
JUDGE_DRIFT = alert(
    "RagpulseJudgeDrift",
    {**LABELS, "metric": "faithfulness", "severity": "ticket"},
    "Judge openai:gpt-4o-mini changed its verdicts on faithfulness canaries",
    "The canary turns, whose verdicts are known, are scored differently by judge"
    " openai:gpt-4o-mini on faithfulness than before: the judge (model, version, prompt"
    " template or quantisation) changed, not the service. Judged-metric alarms raised"
    " meanwhile say so in their judge_suspect annotation.",
)
SUSPECT = (
    "The judge is suspect: its canary verdicts moved (RagpulseJudgeDrift). Check the judge"
    " before the service (runbook: ragpulsejudgedrift)."
)


def _one_drift(metric: str, detector: str, suspect: str) -> dict[str, object]:
    return alert(
        "RagpulseDriftAlarm",
        {**DEPLOY, "metric": metric, "detector": detector, "service": "all",
         "severity": "ticket"},
        f"Drift on {metric} ({detector}), service all",
        f"The {detector} drift detector reports that {metric} of service all left its"
        " reference band. The alarm event on rag.alarms has the direction, reference mean,"
        " current mean and since when.",
        judge_suspect=suspect,
    )  # fmt: skip


def _service_drift(suspect: str) -> list[dict[str, object]]:
    """The judged metrics' alarms carry `suspect`; the detectors' rate alarm never does."""
    return [
        _one_drift("compound", "page_hinkley", suspect),
        _one_drift("faithfulness", "page_hinkley", suspect),
        _one_drift("refusal", "proportion", ""),
    ]


def test_judge_alerts_fire_on_their_series_and_annotate_the_judged_drift(tmp_path: Path) -> None:
    silent = alert(
        "RagpulseJudgeSilent",
        {**LABELS, "severity": "ticket"},
        "Judge openai:gpt-4o-mini has given no verdict for over 10m",
        "Turns are sampled for judge openai:gpt-4o-mini or wait in its queue, but no verdict,"
        " ok or error, came back for more than 10m: the judge or its endpoint hangs. Judged"
        " metrics and judge-based SLOs are not being measured.",
    )
    inconsistent = alert(
        "RagpulseJudgeInconsistent",
        {**LABELS, "metric": "faithfulness", "severity": "ticket"},
        "Judge openai:gpt-4o-mini flips 30% of faithfulness verdicts when asked twice",
        "Over 6h, 30% of the turns judged twice (context shuffled) got faithfulness verdicts on"
        " both sides of the gate floor (ceiling 20%, at least 20 pairs): single verdicts of"
        " this judge are not reliable enough to gate on.",
    )
    cases = [
        case("a steady judge", _series(False, False, 0.1), {
            "RagpulseDriftAlarm": _service_drift(""),
            "RagpulseNoEvents": [NO_EVENTS],  # the test has no event series
        }),
        case("the judge changed, hangs and flips", _series(True, True, 0.3), {
            "RagpulseJudgeDrift": [JUDGE_DRIFT],
            "RagpulseJudgeSilent": [silent],
            "RagpulseJudgeInconsistent": [inconsistent],
            "RagpulseDriftAlarm": _service_drift(SUSPECT),
            "RagpulseNoEvents": [NO_EVENTS],
        }),
    ]  # fmt: skip
    out = run_tests(tmp_path, render_rule_groups(AlertSettings()), cases)
    assert "SUCCESS" in out, out


def test_the_annotation_query_is_scoped_to_the_deployment() -> None:
    text = judge_suspect_annotation(["namespace", "job"])
    assert "ragpulse_judge_drift_alarm{namespace=%q,job=%q}" in text
    assert '> 0" $labels.namespace $labels.job | query' in text
    assert 'printf "max(ragpulse_judge_drift_alarm) > 0" | query' in judge_suspect_annotation([])
