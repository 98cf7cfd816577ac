"""The rules of the quality SLOs: recording rules per window and period, and the
multiwindow, multi-burn-rate alerts `RagpulseErrorBudgetBurn` (docs/slo.md).

Two groups:

- `ragpulse-slo`, every evaluation interval: each SLO's objective and budget as constant
  series, then for every window an alert reads (`alerts.slo_burn.windows`, times
  `time_scale`) the event rate and the error ratio per deployment, SLO and service, and
  per SLO the burn rate (error ratio / its budget, a number), then the alerts: per SLO
  and window pair that can fire, burn above the pair's factor over both windows and at
  least `min_events` in the long one. The 1d and 3d windows read a day or three of raw
  samples at every evaluation, like every rule built on raw counters here.
- `ragpulse-slo-period`, once a minute (times `time_scale`): the error ratio and the share
  of the budget used over each SLO's whole period (`increase` over 30d is the costly query;
  it is not needed every few seconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from exporters.promql import by
from exporters.slo_settings import BurnWindow, SloSpec, scaled_duration, seconds

__all__ = ["BURN_ALERT", "SloRules"]

BURN_ALERT = "RagpulseErrorBudgetBurn"


def _budget(s: SloSpec) -> str:
    """1 - objective, as PromQL writes it (0.99 -> 0.01, not 0.010000000000000009)."""
    return f"{1 - s.objective:.12g}"


EVENTS = "ragpulse_slo_events_total"

Rule = dict[str, Any]


class SloRules:
    """Rule groups for `slos` under the `alerts` settings (`AlertSettings`)."""

    def __init__(self, alerts: Any, slos: Sequence[SloSpec]) -> None:
        self.a = alerts
        self.cfg = alerts.slo_burn
        self.slos = list(slos)
        self.by = by(alerts.aggregate_by, "slo", "service")
        self.match = ", ".join([*alerts.aggregate_by, "slo", "service"])

    def scaled(self, duration: str) -> str:
        return scaled_duration(duration, self.cfg.time_scale)

    def windows(self) -> list[str]:
        """Every window an alert reads, scaled, shortest first."""
        spans = {self.scaled(w) for b in self.cfg.windows for w in (b.long, b.short)}
        return sorted(spans, key=seconds)

    def groups(self) -> list[dict[str, Any]]:
        if not self.cfg.enabled or not self.slos:
            return []
        rules = [r for s in self.slos for r in self._objective(s)]
        for w in self.windows():
            rules += self._window(w)
        for w in self.windows():
            rules += [self._burn(s, w) for s in self.slos]
        # a pair whose factor x budget is 1 or more cannot fire (every event bad is a burn
        # of 1 / budget): left out, docs/slo.md lists which
        rules += [self._alert(s, b) for s in self.slos for b in self.cfg.windows if b.can_fire(s)]
        period = [r for s in self.slos for r in self._period(s)]
        return [
            {"name": "ragpulse-slo", "rules": rules},
            {"name": "ragpulse-slo-period", "interval": self.scaled("1m"), "rules": period},
        ]

    # -- recording rules ------------------------------------------------------------------
    @staticmethod
    def _objective(s: SloSpec) -> list[Rule]:
        labels = {"slo": s.name}
        return [
            {"record": "ragpulse:slo_objective", "expr": f"vector({s.objective:.12g})",
             "labels": dict(labels)},
            {"record": "ragpulse:slo_error_budget", "expr": f"vector({_budget(s)})",
             "labels": dict(labels)},
        ]  # fmt: skip

    def _window(self, w: str) -> list[Rule]:
        events = f"ragpulse:slo_events:rate{w}"
        ratio = f"ragpulse:slo_error_ratio:rate{w}"
        return [
            {"record": events, "expr": f"sum {self.by} (rate({EVENTS}[{w}]))"},
            {
                "record": ratio,
                "expr": f'sum {self.by} (rate({EVENTS}{{outcome="bad"}}[{w}]))\n'
                f"  /\n({events} > 0)",
            },
        ]

    @staticmethod
    def _burn(s: SloSpec, w: str) -> Rule:
        """Error ratio / error budget (1 spends the budget exactly in the period). One rule
        per SLO, the budget a number: no join on a series another release might also write."""
        return {
            "record": f"ragpulse:slo_burn_rate:rate{w}",
            "expr": f'ragpulse:slo_error_ratio:rate{w}{{slo="{s.name}"}} / {_budget(s)}',
            "labels": {"slo": s.name},
        }

    def _period(self, s: SloSpec) -> list[Rule]:
        p, sel = self.scaled(s.period), f'slo="{s.name}"'
        total = f"sum {self.by} (increase({EVENTS}{{{sel}}}[{p}]))"
        bad = f'sum {self.by} (increase({EVENTS}{{{sel}, outcome="bad"}}[{p}]))'
        one = {"slo": s.name}  # the same record names for every SLO: told apart for promtool
        return [
            {"record": "ragpulse:slo_events:period", "expr": total, "labels": dict(one)},
            {"record": "ragpulse:slo_error_ratio:period", "expr": f"{bad}\n  /\n({total} > 0)",
             "labels": dict(one)},
            {
                "record": "ragpulse:slo_error_budget_used:period",
                "expr": f"ragpulse:slo_error_ratio:period{{{sel}}} / {_budget(s)}",
                "labels": dict(one),
            },
        ]  # fmt: skip

    # -- alerts -----------------------------------------------------------------------------
    def _alert(self, s: SloSpec, b: BurnWindow) -> Rule:
        long, short = self.scaled(b.long), self.scaled(b.short)
        factor = b.factor(s.period)
        sel = f'{{slo="{s.name}"}}'
        expr = (
            f"ragpulse:slo_burn_rate:rate{long}{sel} > {factor:g}\nand on ({self.match})\n"
            f"ragpulse:slo_burn_rate:rate{short}{sel} > {factor:g}\nand on ({self.match})\n"
            f"ragpulse:slo_events:rate{long}{sel} * {seconds(long):g} >= {s.min_events}"
        )
        names = [*self.a.aggregate_by, "slo", "service"]
        matchers = ", ".join(f"{n}=%q" for n in names)
        args = " ".join(f"$labels.{n}" for n in names)
        used = (
            f'{{{{ with printf "ragpulse:slo_error_budget_used:period{{{matchers}}}" {args}'
            " | query }}{{ . | first | value | humanizePercentage }}{{ else }}unknown{{ end }}"
        )
        budget = 1 - s.objective
        return {
            "alert": BURN_ALERT,
            "expr": expr,
            **({"for": self.cfg.for_duration} if seconds(self.cfg.for_duration) else {}),
            "labels": {
                **self.a.labels,
                "slo": s.name,
                "severity": b.severity,
                "long_window": b.long,
                "short_window": b.short,
            },
            "annotations": {
                "summary": f"SLO {s.name} of {{{{ $labels.service }}}} burns its error budget"
                ' {{ printf "%.1f" $value }}x as fast as the period allows',
                "description": (
                    f"Over the last {b.long} (and {b.short}) the {s.sli} SLO {s.name} of"
                    " service {{ $labels.service }} had a burn rate of"
                    ' {{ printf "%.1f" $value }} (alert above'
                    f" {factor:g}: {b.budget_consumed:.0%} of the {s.period} error budget in"
                    f" {b.long}; objective {s.objective:g}, budget {budget:.3g} of events)."
                    f" Budget used over the {s.period} period: {used}."
                ),
                "burn_rate": '{{ printf "%.2f" $value }}',
                "budget_used": used,
                "runbook_url": f"{self.a.runbook_base_url}#{BURN_ALERT.lower()}",
            },
        }
