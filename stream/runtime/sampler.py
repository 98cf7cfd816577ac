"""Which turns go to the judge: base rate, strata, boosts, budget and backpressure.

The choice for a turn is a stable hash of its conversation id (salted) compared to the
rate, so a sampled conversation is judged on all its turns, in every replica and after a
restart. A turn that carries a reference (`labels.expected_answer` or
`labels.required_information`: a golden/canary replay or a reviewed turn) is always
chosen, within the budget, with reason ``reference``; it never joins the population.
Boosts (detector hits, negative feedback, weak retrieval) raise a turn's rate; a
boosted turn that the base/stratum rate selects anyway keeps reason base/stratum, so the
turns with those reasons are an unbiased sample (exporters.judge_metrics);
two token buckets (judge calls per minute, dollars per hour) and the judge queue's fill
level bound what is sent. Every decision carries one reason from a bounded set. See
docs/sampling.md. Not thread-safe: one sampler per event loop.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from stream.contract.events import Event
from stream.runtime.sampling_settings import (
    SamplerBoosts,
    SamplerBudget,
    SamplerSettings,
    SamplerStrata,
)

__all__ = [
    "DROPPED_REASONS",
    "SAMPLED_REASONS",
    "Decision",
    "Sampler",
    "SamplerBoosts",
    "SamplerBudget",
    "SamplerSettings",
    "SamplerStrata",
    "TokenBucket",
]

SAMPLED_REASONS = (
    "base",
    "stratum",
    "reference",
    "boost_detector",
    "boost_feedback",
    "boost_retrieval",
)
DROPPED_REASONS = ("not_selected", "budget", "judge_backlog", "disabled")


class TokenBucket:
    """Holds `burst_fraction` of a budget and refills the rest over the period.

    Bucket size C plus refill r·P equals the budget, so no window of one period spends
    more than the budget (plus any debt left by a cost corrected after the fact).
    """

    def __init__(
        self, budget: float, period_s: float, burst_fraction: float, unit: float = 0.0
    ) -> None:
        self.capacity = max(budget * burst_fraction, unit)
        self.refill_per_s = (budget - self.capacity) / period_s
        self.tokens = self.capacity
        self._at: float | None = None

    def available(self, now: float, cost: float) -> bool:
        if self._at is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self._at) * self.refill_per_s)
        self._at = now
        return self.tokens >= min(cost, self.capacity)  # a cost over the size needs a full bucket

    def charge(self, cost: float) -> None:
        """Take `cost` (negative refunds); debt is floored at one bucket size."""
        self.tokens = max(-self.capacity, min(self.capacity, self.tokens - cost))


@dataclass(frozen=True, slots=True)
class Decision:
    sampled: bool
    reason: str
    reserved_usd: float = 0.0  # estimated cost charged to the dollar budget


#: the decisions that drop a turn (immutable, so one each serves every turn)
_DROPPED = {reason: Decision(False, reason) for reason in DROPPED_REASONS}


class Sampler:
    def __init__(
        self, settings: SamplerSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = s = settings
        self._clock = clock
        self._hasher = hashlib.blake2b(s.salt.encode() + b"\x00", digest_size=8)
        b, cpm, usd = s.budget, s.budget.calls_per_minute, s.budget.usd_per_hour
        self._calls = TokenBucket(cpm, 60.0, b.burst_fraction, b.calls_per_event) if cpm else None
        self._usd = TokenBucket(usd, 3600.0, b.burst_fraction) if usd else None
        self.cost_estimate_usd = b.cost_per_event_usd
        self._costs_seen = 0
        self._any_mode = "*" in s.boosts.failure_modes
        self._modes = frozenset(s.boosts.failure_modes)
        self._detectors = frozenset(s.boosts.detectors)
        self._fill = 0.0
        self._scale = 1.0
        self.counts: dict[str, int] = dict.fromkeys(SAMPLED_REASONS + DROPPED_REASONS, 0)

    @property
    def effective_rate(self) -> float:
        """The base rate after backpressure (exported as ragpulse_sample_rate)."""
        if not self.settings.enabled:
            return 0.0
        return self.settings.rate * self._scale

    def set_pressure(self, queue_fill: float) -> None:
        """Judge queue fill 0..1: above `backpressure_start` rates fall linearly to 0."""
        fill = min(1.0, max(0.0, queue_fill))
        start = self.settings.backpressure_start
        self._fill = fill
        self._scale = 1.0 if fill <= start else max(0.0, (1.0 - fill) / (1.0 - start))

    def record_cost(self, usd: float, reserved_usd: float | None = None) -> None:
        """Measured judge cost of one sampled turn: settles the dollar budget, updates the
        estimate. `reserved_usd` is the decision's `reserved_usd` (default: the estimate)."""
        reserved = self.cost_estimate_usd if reserved_usd is None else reserved_usd
        if self._usd is not None:
            self._usd.charge(usd - reserved)
        self._costs_seen += 1
        weight = max(self.settings.budget.cost_smoothing, 1.0 / self._costs_seen)
        self.cost_estimate_usd += weight * (usd - self.cost_estimate_usd)

    def position(self, event: Event) -> float:
        """The turn's stable place in [0, 1): conversation id hashed with the salt."""
        h = self._hasher.copy()
        h.update((event.conversation_id or event.event_id).encode())
        return (int.from_bytes(h.digest(), "big") >> 11) * 2.0**-53

    def decide(
        self, event: Event, failure_modes: Collection[str], detectors: Collection[str] = ()
    ) -> Decision:
        """Judge this turn or not; `detectors` names the detectors that hit (optional)."""
        s = self.settings
        if not s.enabled:
            return self._count(False, "disabled")
        if self._fill >= 1.0:
            return self._count(False, "judge_backlog")
        if s.references and (ref := event.reference) is not None and ref.present:
            # golden/labelled turns: few and valuable, judged whenever the budget allows,
            # and never part of the population of unlabelled traffic
            return self._spend("reference", bypass=False)
        rate, reason = self._rate(event)
        boost = self._boost(event, failure_modes, detectors)
        where = self.position(event)
        if boost is not None:
            if where < rate * self._scale:
                # chosen at the base/stratum rate anyway: it stays in the unbiased population
                # (reason base/stratum, budget applies as to any population turn)
                return self._spend(reason, bypass=False)
            reason = boost
            if s.boosts.boost_rate == "always":
                return self._spend(reason, bypass=s.boosts_bypass_budget)
            rate = min(1.0, rate * float(s.boosts.boost_rate))
        if where >= rate:
            return self._count(False, "not_selected")
        if where >= rate * self._scale:
            return self._count(False, "judge_backlog")
        return self._spend(reason, bypass=boost is not None and s.boosts_bypass_budget)

    def _rate(self, event: Event) -> tuple[float, str]:
        st, service, model = self.settings.strata, event.service, event.model
        if not (st.service_model or st.service or st.model):
            return self.settings.rate, "base"  # no strata configured (the default)
        pairs = st.service_model.get(service, {}) if service is not None else {}
        for table, key in ((pairs, model), (st.service, service), (st.model, model)):
            if key is not None and (rate := table.get(key)) is not None:
                return rate, "stratum"
        return self.settings.rate, "base"

    def _boost(
        self, event: Event, failure_modes: Collection[str], detectors: Collection[str]
    ) -> str | None:
        b = self.settings.boosts
        if failure_modes and (self._any_mode or not self._modes.isdisjoint(failure_modes)):
            return "boost_detector"
        if detectors and not self._detectors.isdisjoint(detectors):
            return "boost_detector"
        fb = event.feedback
        if fb is not None and (
            (b.thumbs_down and fb.thumbs == "down")
            or (b.rating_below is not None and fb.rating is not None and fb.rating < b.rating_below)
        ):
            return "boost_feedback"
        if b.retrieval_score_below is not None:
            scores = [c.score for c in event.retrieved_context if c.score is not None]
            if scores and max(scores) < b.retrieval_score_below:
                return "boost_retrieval"
        return None

    def _spend(self, reason: str, bypass: bool) -> Decision:
        now = self._clock()
        calls = self.settings.budget.calls_per_event
        usd = self.cost_estimate_usd
        fits = (self._calls is None or self._calls.available(now, calls)) and (
            self._usd is None or self._usd.available(now, usd)
        )
        if not fits and not bypass:
            return self._count(False, "budget")
        if self._calls is not None:
            self._calls.charge(calls)
        if self._usd is not None:
            self._usd.charge(usd)
        return self._count(True, reason, usd)

    def _count(self, sampled: bool, reason: str, usd: float = 0.0) -> Decision:
        self.counts[reason] += 1
        if not sampled and not usd:
            return _DROPPED[reason]
        return Decision(sampled, reason, usd)
