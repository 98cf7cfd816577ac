"""The SLO burn-rate rules, unit-tested by the real `promtool` on synthetic traffic: the
SRE Workbook's four alerts at the default windows and factors (30d period, 99 %
objective: 1 % of turns may be bad), each scenario a promtool test group with every firing
alert written out (labels and annotations). `test_rules.py` covers the other alerts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from exporters.alert_settings import AlertSettings
from exporters.rules import render_rule_groups, to_yaml
from exporters.slo_rules import BURN_ALERT, SloRules
from exporters.slo_settings import DEFAULT_SLOS, BurnWindow, SloSpec, scaled_duration, seconds
from stream.runtime.settings import ConfigError, load_settings
from tests.exporters.test_rules import promtool

POD = 'namespace="rag", job="ragpulse", instance="10.0.0.7:9108"'
LABELS = {"namespace": "rag", "job": "ragpulse", "slo": "failure-free", "service": "it-support"}
SLO = SloSpec(name="failure-free", sli="failure_free", objective=0.99, failure_modes=["pii_leak"])
PER_MIN = 100  # turns a minute
DAY = 24 * 60  # minutes


def traffic(*phases: tuple[float, int], per_min: float = PER_MIN) -> dict[str, str]:
    """good/bad counter series of one service: `(bad share, minutes)` phases, a sample a
    minute (promtool's expanding notation, each segment from its exact start value)."""
    good, bad = [], []
    g = b = 0.0
    for share, minutes in phases:
        dg, db = per_min * (1 - share), per_min * share
        good.append(f"{g:.12g}+{dg:.12g}x{minutes}")
        bad.append(f"{b:.12g}+{db:.12g}x{minutes}")
        g, b = g + dg * (minutes + 1), b + db * (minutes + 1)
    base = f'ragpulse_slo_events_total{{{POD}, slo="failure-free", service="it-support", prompt_version="v1.4"'  # noqa: E501
    return {f'{base}, outcome="good"}}': " ".join(good), f'{base}, outcome="bad"}}': " ".join(bad)}


def share_bad(phases: Phases, at_min: int, window_min: int) -> float:
    """The bad share over the window ending at `at_min`, counted here from the phases (not
    by Prometheus): interval j runs from sample j to j + 1; a window [t - w, t] (Debian's
    Prometheus 2.x: closed on the left) holds the intervals whose both samples are in it; a
    phase of m minutes holds m + 1 intervals."""
    shares = [share for share, minutes in phases for _ in range(minutes + 1)]
    first = max(at_min - window_min, 0)
    inside = shares[first:at_min]
    return sum(inside) / len(inside)


def humanize_percentage(v: float) -> str:
    """Prometheus's humanizePercentage: %.4g of v * 100."""
    return f"{v * 100:.4g}%"


Phases = tuple[tuple[float, int], ...]
WINDOW_MIN = {"5m": 5, "30m": 30, "1h": 60, "2h": 120, "6h": 360, "1d": DAY, "3d": 3 * DAY}


def burn(window: tuple[str, str, str, str], phases: Phases, at_min: int) -> dict[str, Any]:
    """One firing RagpulseErrorBudgetBurn at `at_min` minutes, as it must read: its burn
    rate (long window) and the budget used over the period, from `share_bad`."""
    severity, long, short, factor = window
    value = share_bad(phases, at_min, WINDOW_MIN[long]) / 0.01
    # the period group is evaluated first (`group_eval_order`): the annotation reads its
    # value of the same minute
    used = humanize_percentage(share_bad(phases, at_min, 30 * DAY) / 0.01)
    share = {"1h": "2%", "6h": "5%", "1d": "10%", "3d": "10%"}[long]
    return {
        "exp_labels": {**LABELS, "severity": severity, "long_window": long, "short_window": short},
        "exp_annotations": {
            "summary": f"SLO failure-free of it-support burns its error budget {value:.1f}x as"
            " fast as the period allows",
            "description": f"Over the last {long} (and {short}) the failure_free SLO"
            f" failure-free of service it-support had a burn rate of {value:.1f} (alert above"
            f" {factor}: {share} of the 30d error budget in {long}; objective 0.99, budget 0.01"
            f" of events). Budget used over the 30d period: {used}.",
            "burn_rate": f"{value:.2f}",
            "budget_used": used,
            "runbook_url": "docs/runbook.md#ragpulseerrorbudgetburn",
        },
    }


def run(tmp_path: Path, cases: list[dict[str, Any]], slo: SloSpec = SLO, **alerts: Any) -> str:
    settings = AlertSettings.model_validate(alerts)
    groups = {"groups": SloRules(settings, [slo]).groups()}
    (tmp_path / "rules.yaml").write_text(to_yaml(groups))
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        # Prometheus runs groups concurrently; pinned here so that the alert's budget_used
        # annotation reads the period group's value of the same evaluation
        "group_eval_order": ["ragpulse-slo-period", "ragpulse-slo"],
        "tests": cases,
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False))
    promtool("check", "rules", tmp_path / "rules.yaml")
    return promtool("test", "rules", tmp_path / "test.yaml")


def case(name: str, series: dict[str, str], checks: list[tuple[str, list[Any]]]) -> dict[str, Any]:
    return {
        "name": name,
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in series.items()],
        "alert_rule_test": [
            {"eval_time": t, "alertname": BURN_ALERT, "exp_alerts": exp} for t, exp in checks
        ],
    }


PAGE_FAST = ("page", "1h", "5m", "14.4")
PAGE_SLOW = ("page", "6h", "30m", "6")
TICKET_FAST = ("ticket", "1d", "2h", "3")
TICKET_SLOW = ("ticket", "3d", "6h", "1")


ALL = (PAGE_FAST, PAGE_SLOW, TICKET_FAST, TICKET_SLOW)


def check(phases: Phases, at_min: int, *firing: tuple[str, str, str, str]) -> tuple[str, list]:
    return f"{at_min}m", [burn(w, phases, at_min) for w in firing]


def test_twenty_times_burn_pages_within_the_short_window(tmp_path: Path) -> None:
    """A service that starts bad at 20x (20 % of turns) fires the fast page by 5 minutes,
    with every slower alert; after 7 healthy hours (0.5x) the same burn needs about 14.4/20
    of the long window, 43 minutes (the workbook's detection time), and the slow ticket,
    whose 3d window holds only those 7 hours, comes first (by 15 minutes)."""
    bad: Phases = ((0.2, 60),)
    onset = 7 * 60
    late: Phases = ((0.005, onset), (0.2, 90))
    run(tmp_path, [
        case("20x from the start", traffic(*bad), [check(bad, 5, *ALL)]),
        case("20x after 7 healthy hours", traffic(*late), [
            check(late, onset + 10),  # not even the slow ticket yet
            check(late, onset + 15, TICKET_SLOW),  # its 3d window holds only 7 h
            check(late, onset + 38, TICKET_SLOW),
            check(late, onset + 48, PAGE_FAST, TICKET_SLOW),
        ]),
    ])  # fmt: skip


def test_twice_the_budget_only_opens_the_slow_ticket_after_its_window(tmp_path: Path) -> None:
    """3 days at 0.5x, then 2x: no alert while the 3d window still holds mostly healthy
    turns (12 h in), the 3d/6h ticket alone once its 3d ratio passes 1 % (after 24 h)."""
    onset = 3 * DAY
    phases: Phases = ((0.005, onset), (0.02, 30 * 60))
    checks = [check(phases, onset + 12 * 60), check(phases, onset + 30 * 60, TICKET_SLOW)]
    run(tmp_path, [case("2x", traffic(*phases), checks)])


def test_half_the_budget_and_a_five_minute_blip_fire_nothing(tmp_path: Path) -> None:
    """0.5x for 3 days fires nothing; nor does a blip of 5 minutes at 100 % bad after it,
    while the blip is in the short window or after."""
    blip_at = 3 * DAY
    phases: Phases = ((0.005, blip_at), (1.0, 5), (0.005, 4 * 60))
    minutes = [DAY, 2 * DAY, blip_at] + [blip_at + m for m in (3, 6, 10, 35, 125, 240)]
    run(
        tmp_path,
        [case("0.5x, then a 5m blip", traffic(*phases), [check(phases, m) for m in minutes])],
    )


def test_minimum_events_guard_holds_on_low_traffic(tmp_path: Path) -> None:
    """40 turns an hour with a quarter bad burns 25x over every window: no alert with the
    default guard (100 events in the long window; 140 minutes in, the 1h window holds 40
    turns and the longer ones 93), and all four with a guard of 10."""
    phases: Phases = ((0.25, 180),)
    series = traffic(*phases, per_min=40 / 60)
    run(tmp_path, [case("40 turns/h, guard 100", series, [check(phases, 140)])])
    low = SLO.model_copy(update={"min_events": 10})
    run(tmp_path, [case("40 turns/h, guard 10", series, [check(phases, 140, *ALL)])], slo=low)


def test_windows_scale_factors_follow_the_period_and_the_groups_are_generated() -> None:
    assert seconds("1h30m") == 5400 and seconds("250ms") == 0.25
    assert [scaled_duration(d, 1 / 60) for d in ("1h", "5m", "3d", "30d")] == [
        "1m", "5s", "1h12m", "12h",
    ]  # fmt: skip
    assert scaled_duration("5m", 1 / 120) == "2s500ms" and scaled_duration("1m", 0.001) == "1s"
    page = BurnWindow(severity="page", budget_consumed=0.02, long="1h", short="5m")
    assert round(page.factor("30d"), 6) == 14.4 and round(page.factor("28d"), 6) == 13.44
    scaled = AlertSettings.model_validate({"slo_burn": {"time_scale": 1 / 60}})
    groups = render_rule_groups(scaled, [SLO])["groups"]
    assert [g["name"] for g in groups] == ["ragpulse", "ragpulse-slo", "ragpulse-slo-period"]
    records = {r.get("record") for g in groups for r in g["rules"]}
    assert {"ragpulse:slo_burn_rate:rate1m", "ragpulse:slo_burn_rate:rate5s"} <= records
    assert groups[2]["interval"] == "1s"
    assert len([r for r in groups[1]["rules"] if r.get("alert") == BURN_ALERT]) == 4
    off = AlertSettings.model_validate({"slo_burn": {"enabled": False}})
    assert [g["name"] for g in render_rule_groups(off, [SLO])["groups"]] == ["ragpulse"]
    assert [g["name"] for g in render_rule_groups(AlertSettings(), [])["groups"]] == ["ragpulse"]
    with pytest.raises(ValidationError, match="must be shorter than long"):
        BurnWindow(severity="page", budget_consumed=0.02, long="5m", short="1h")


def test_rules_export_from_the_settings_holds_the_default_slos(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"slos\.0\.objective"):
        load_settings(slos=[{"name": "x", "sli": "valid_events", "objective": 2}])
    settings = load_settings()
    doc = render_rule_groups(settings.alerts, settings.slos)
    (tmp_path / "rules.yaml").write_text(to_yaml(doc))
    assert "SUCCESS" in promtool("check", "rules", tmp_path / "rules.yaml")
    alerts = [r for g in doc["groups"] for r in g["rules"] if r.get("alert") == BURN_ALERT]
    assert {a["labels"]["slo"] for a in alerts} == {s.name for s in settings.slos}


def test_pairs_that_cannot_fire_are_left_out() -> None:
    """Every event bad is a burn of 1 / budget: 10 at 90 % (no 14.4 page), 5 at 80 % (no
    page at all)."""
    slos = [SloSpec.model_validate(d) for d in DEFAULT_SLOS]
    groups = SloRules(AlertSettings(), slos).groups()
    pairs = {
        (r["labels"]["slo"], r["labels"]["long_window"])
        for r in groups[0]["rules"]
        if r.get("alert") == BURN_ALERT
    }
    assert {w for s, w in pairs if s == "pii-free"} == {"1h", "6h", "1d", "3d"}
    assert {w for s, w in pairs if s == "critical-gate"} == {"6h", "1d", "3d"}
    assert {w for s, w in pairs if s == "canary-correct"} == {"1d", "3d"}
