"""The dashboard's "Judge health" row (families: :mod:`exporters.judge_health`)."""

from __future__ import annotations

from exporters.alert_settings import AlertSettings
from exporters.dashboard_panels import JUDGE_ATTEMPTS, PanelSpec, Sel

__all__ = ["judge_health_panels"]


def judge_health_panels(a: AlertSettings) -> list[PanelSpec]:
    s = Sel(a)
    flips = s.rate("ragpulse_judge_consistency_pairs_total", 'result="flip"', window="1h")
    pairs = s.rate("ragpulse_judge_consistency_pairs_total", window="1h")
    diff_sum = s.rate("ragpulse_judge_consistency_abs_diff_sum", window="1h")
    diff_count = s.rate("ragpulse_judge_consistency_abs_diff_count", window="1h")
    failed = s.rate("ragpulse_judge_requests_total", 'outcome="judge_error"')
    attempts = s.rate("ragpulse_judge_requests_total", JUDGE_ATTEMPTS)
    health_cost = s.rate("ragpulse_judge_health_cost_usd_total")
    silence = a.judge_silent.silence if a.judge_silent.enabled else None
    ceiling = a.judge_inconsistent.ceiling if a.judge_inconsistent.enabled else None
    return [
        PanelSpec("Canary agreement", "Share of the last canary round's verdicts on the expected "
                  "side of the gate floor, per judge and metric (1: every canary judged as "
                  "written).",
                  ((f"min by (judge, metric) ({s('ragpulse_judge_canary_agreement')})",
                    "{{judge}} {{metric}}"),), unit="percentunit", width=8, bounds=(0, 1)),
        PanelSpec("Canary score trend", "Mean score of each canary round per metric; a step is "
                  "the judge changing (RagpulseJudgeDrift), since the canary turns never do.",
                  ((f"avg by (judge, metric) ({s('ragpulse_judge_canary_score')})",
                    "{{judge}} {{metric}}"),), width=8, bounds=(0, 1)),
        PanelSpec("Judge drift alarm", "1 while the canary drift detectors say the judge's "
                  "verdicts moved (RagpulseJudgeDrift).",
                  ((f"max by (judge, metric) ({s('ragpulse_judge_drift_alarm')})",
                    "{{judge}} {{metric}}"),), width=8, kind="state-timeline"),
        PanelSpec("Self-consistency flip rate (1h)", "Turns judged twice (context shuffled) "
                  "whose verdicts fall on both sides of the gate floor, and the mean absolute "
                  "difference of the two (dashed: the RagpulseJudgeInconsistent ceiling).",
                  ((f"sum by (judge, metric) ({flips})\n  /\nsum by (judge, metric) ({pairs})",
                    "flips {{judge}} {{metric}}"),
                   (f"sum by (judge, metric) ({diff_sum})\n  /\n"
                    f"sum by (judge, metric) ({diff_count})", "mean |diff| {{judge}} {{metric}}")),
                  unit="percentunit", width=8, threshold=ceiling),
        PanelSpec("Last verdict age", "Seconds since each judge's last verdict, ok or error "
                  "(dashed: the RagpulseJudgeSilent silence).",
                  ((f"max by (judge) ({s('ragpulse_judge_last_verdict_age_seconds')})",
                    "{{judge}}"),), unit="s", width=8,
                  threshold=_seconds(silence) if silence else None),
        PanelSpec("Judge error ratio (health)", "judge_error / (ok + judge_error) per judge, "
                  "every call counted (sampled turns, canaries, second opinions).",
                  ((f"sum by (judge) ({failed})\n  /\nsum by (judge) ({attempts})", "{{judge}}"),),
                  unit="percentunit", width=8),
        PanelSpec("Judge tokens/s and cost", "All judge tokens per second by direction, and "
                  "the $/hour of all judge calls and of the health calls (canaries, second "
                  "opinions) on their own.",
                  ((f"sum by (direction) ({s.rate('ragpulse_judge_tokens_total')})",
                    "tokens/s {{direction}}"),
                   (f"sum({s.rate('ragpulse_judge_cost_usd_total')}) * 3600", "$/h all"),
                   (f"sum by (kind) ({health_cost}) * 3600", "$/h {{kind}}")), width=12),
        PanelSpec("Judge health calls/min", "Judge calls per minute made for judge health, by "
                  "kind, and canary rounds per hour by outcome (skipped: judge backlog, timeout).",
                  ((f"sum by (kind) ({s.rate('ragpulse_judge_health_calls_total')}) * 60",
                    "calls/min {{kind}}"),
                   (f"sum by (outcome) ({s.rate('ragpulse_judge_canary_rounds_total')}) * 3600",
                    "rounds/h {{outcome}}")), width=12),
    ]  # fmt: skip


def _seconds(duration: str) -> float:
    from exporters.durations import duration_seconds

    return float(duration_seconds(duration))
