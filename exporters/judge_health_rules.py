"""The judge-health rules: RagpulseJudgeDrift, RagpulseJudgeSilent, RagpulseJudgeInconsistent,
and the annotation that marks a judged-metric alarm while the judge itself is suspect.

Families: :mod:`exporters.judge_health`. Runbook: docs/runbook.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exporters.durations import duration_seconds
from exporters.promql import by, percent

if TYPE_CHECKING:
    from exporters.promql import RuleBuilder

__all__ = [
    "JUDGED_ALERTS",
    "annotate_judged",
    "judge_health_alerts",
    "judge_health_records",
    "judge_suspect_annotation",
]

#: alerts that can be about a judged metric: they get the `judge_suspect` annotation
JUDGED_ALERTS = ("RagpulseDriftAlarm", "RagpulseScoreRegression")

Rule = dict[str, Any]


def judge_suspect_annotation(aggregate_by: list[str]) -> str:
    """A Go template for an alert on a judge metric (label `metric`): text when a
    RagpulseJudgeDrift condition holds in the same deployment, else empty. A metric is a
    judged one when the judge exports its scores (`ragpulse_metric_score_count{metric}`),
    or it is the compound score: the rate metrics of the detectors never get the text."""
    matchers = ",".join(f"{label}=%q" for label in aggregate_by)
    selector = "ragpulse_judge_drift_alarm" + (f"{{{matchers}}}" if matchers else "")
    args = "".join(f" $labels.{label}" for label in aggregate_by)
    judged = '(printf "count(ragpulse_metric_score_count{metric=%q}) > 0" $labels.metric | query)'
    drift = f'printf "max({selector}) > 0"{args} | query'
    return (
        f'{{{{ if or (eq $labels.metric "compound") {judged} }}}}{{{{ with {drift} }}}}'
        "The judge is suspect: its canary verdicts moved (RagpulseJudgeDrift). Check the"
        " judge before the service (runbook: ragpulsejudgedrift).{{ end }}{{ end }}"
    )


def annotate_judged(rules: list[Rule], b: RuleBuilder) -> list[Rule]:
    """`rules` with the `judge_suspect` annotation on the judged-metric alerts (when the
    RagpulseJudgeDrift alert is generated). They are not held back while the judge is
    suspect: a service can regress while its judge changes (docs/judges.md)."""
    if not b.a.judge_drift.enabled:
        return rules
    text = judge_suspect_annotation(b.agg)
    for rule in rules:
        if rule.get("alert") in JUDGED_ALERTS:
            rule["annotations"]["judge_suspect"] = text
    return rules


def judge_health_records(b: RuleBuilder) -> list[Rule]:
    c = b.a.judge_inconsistent
    if not c.enabled:
        return []
    w, j = c.window, by(b.agg, "judge", "metric")
    pairs = f"ragpulse:judge_consistency_pairs:increase{w}"
    flips = f'increase(ragpulse_judge_consistency_pairs_total{{result="flip"}}[{w}])'
    return [
        {
            "record": pairs,
            "expr": f"sum {j} (increase(ragpulse_judge_consistency_pairs_total[{w}]))",
        },
        {  # `or ... * 0`: no flip in the window is a ratio of 0
            "record": f"ragpulse:judge_consistency_flip_ratio:increase{w}",
            "expr": f"(\n  sum {j} ({flips})\n  or\n  {pairs} * 0\n)\n  /\n({pairs} > 0)",
        },
    ]


def judge_health_alerts(b: RuleBuilder) -> list[Rule]:
    a, agg, rules = b.a, b.agg, []
    if a.judge_drift.enabled:
        # max_over_time bridges a restart; one alert per judge and metric per deployment
        expr = (
            f"max {by(agg, 'judge', 'metric')} (max_over_time(ragpulse_judge_drift_alarm[2m])) > 0"
        )
        rules.append(b._alert(
            "RagpulseJudgeDrift", expr, a.judge_drift,
            "Judge {{ $labels.judge }} changed its verdicts on {{ $labels.metric }} canaries",
            "The canary turns, whose verdicts are known, are scored differently by judge"
            " {{ $labels.judge }} on {{ $labels.metric }} than before: the judge (model,"
            " version, prompt template or quantisation) changed, not the service. Judged-metric"
            " alarms raised meanwhile say so in their judge_suspect annotation.",
        ))  # fmt: skip
    if a.judge_silent.enabled:
        s = a.judge_silent
        secs = f"{duration_seconds(s.silence):g}"
        waiting = (
            f"  sum without (reason) (increase(ragpulse_sampled_total[{s.silence}])) > 0\n"
            "  or\n  ragpulse_pipeline_queue_depth > 0"
        )
        expr = (
            f"max {by(agg, 'judge')} (\n  ragpulse_judge_last_verdict_age_seconds > {secs}\n"
            f"  and ignoring (judge)\n  (\n{waiting}\n  )\n)"
        )
        rules.append(b._alert(
            "RagpulseJudgeSilent", expr, s,
            f"Judge {{{{ $labels.judge }}}} has given no verdict for over {s.silence}",
            f"Turns are sampled for judge {{{{ $labels.judge }}}} or wait in its queue, but no"
            f" verdict, ok or error, came back for more than {s.silence}: the judge or its"
            " endpoint hangs. Judged metrics and judge-based SLOs are not being measured.",
        ))  # fmt: skip
    if a.judge_inconsistent.enabled:
        c = a.judge_inconsistent
        w = c.window
        expr = (
            f"ragpulse:judge_consistency_flip_ratio:increase{w} > {c.ceiling:g}\nand\n"
            f"ragpulse:judge_consistency_pairs:increase{w} >= {c.min_pairs}"
        )
        rules.append(b._alert(
            "RagpulseJudgeInconsistent", expr, c,
            "Judge {{ $labels.judge }} flips {{ $value | humanizePercentage }} of"
            " {{ $labels.metric }} verdicts when asked twice",
            f"Over {w}, {{{{ $value | humanizePercentage }}}} of the turns judged twice (context"
            " shuffled) got {{ $labels.metric }} verdicts on both sides of the gate floor"
            f" (ceiling {percent(c.ceiling)}, at least {c.min_pairs} pairs): single verdicts"
            " of this judge are not reliable enough to gate on.",
        ))  # fmt: skip
    return rules
