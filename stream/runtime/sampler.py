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
    "SampleDecision",
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
        self.refill_per_s = max(0.0, (budget - self.capacity) / period_s)
        self.tokens = self.capacity
        self.max_debt = self.capacity  # the floor of charge(): cost corrections, credit
        self.credit_limit = 0.0  # debt credit_wait may take on (set by _Pool)
        self.credit_s = 0.0  # the longest wait credit_wait may ask for
        self._at: float | None = None

    def available(self, now: float, cost: float) -> bool:
        if self._at is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self._at) * self.refill_per_s)
        self._at = now
        return self.tokens >= min(cost, self.capacity)  # a cost over the size needs a full bucket

    def charge(self, cost: float) -> None:
        """Take `cost` (negative refunds); debt is floored at `max_debt`."""
        self.tokens = max(-self.max_debt, min(self.capacity, self.tokens - cost))

    def credit_wait(self, cost: float) -> float | None:
        """Seconds until `cost`, taken on credit now, is paid back by the refill (0: it
        fits); None when the debt would pass `credit_limit` or the wait `credit_s`. Call
        `available()` first (it brings the tokens up to now). A call made after that wait
        keeps every window within the budget, as if the turn had waited its turn."""
        after = self.tokens - cost
        if after >= 0:
            return 0.0
        if after < -self.credit_limit or self.refill_per_s <= 0:
            return None
        wait = -after / self.refill_per_s
        return wait if wait <= self.credit_s else None


class _Pool:
    """The call and dollar buckets of one share of the budget."""

    def __init__(self, b: SamplerBudget, share: float, credit_s: float = 0.0) -> None:
        cpm, usd = b.calls_per_minute, b.usd_per_hour
        unit = b.calls_per_event
        self.calls = TokenBucket(cpm * share, 60.0, b.burst_fraction, unit) if cpm else None
        self.usd = TokenBucket(usd * share, 3600.0, b.burst_fraction) if usd else None
        for bucket in (self.calls, self.usd):
            if bucket is not None:
                bucket.credit_limit = bucket.refill_per_s * credit_s
                bucket.credit_s = credit_s
                bucket.max_debt = max(bucket.capacity, bucket.credit_limit)

    def fits(self, now: float, calls: float, usd: float) -> bool:
        ok_calls = self.calls is None or self.calls.available(now, calls)
        return (self.usd is None or self.usd.available(now, usd)) and ok_calls

    def charge(self, calls: float, usd: float) -> None:
        if self.calls is not None:
            self.calls.charge(calls)
        if self.usd is not None:
            self.usd.charge(usd)

    def credit(self, calls: float, usd: float) -> float | None:
        """The wait for a turn taken on credit (the longer bucket's), or None."""
        waits = [
            bucket.credit_wait(cost)
            for bucket, cost in ((self.calls, calls), (self.usd, usd))
            if bucket is not None
        ]
        if any(w is None for w in waits):
            return None
        return max((w for w in waits if w is not None), default=0.0)


@dataclass(frozen=True, slots=True)
class SampleDecision:
    sampled: bool
    reason: str
    reserved_usd: float = 0.0  # estimated cost charged to the dollar budget
    wait_s: float = 0.0  # judge it no sooner: a flagged turn taken on the budget's credit
    repeat: bool = False  # judge it twice (self-consistency); the budget paid for both


#: the reasons of the unbiased population: they may not spend the flagged turns' reserve
_POPULATION = frozenset({"base", "stratum"})
#: the decisions that drop a turn (immutable, so one each serves every turn)
_DROPPED = {reason: SampleDecision(False, reason) for reason in DROPPED_REASONS}


class Sampler:
    def __init__(
        self,
        settings: SamplerSettings,
        clock: Callable[[], float] = time.monotonic,
        repeat_rate: float = 0.0,
    ) -> None:
        self.settings = s = settings
        self._clock = clock
        self._hasher = hashlib.blake2b(s.salt.encode() + b"\x00", digest_size=8)
        self._repeat_hasher = hashlib.blake2b(s.salt.encode() + b"\x01", digest_size=8)
        #: share of sampled turns judged twice (judge.health.consistency.rate; 0 for a
        #: deterministic judge), chosen by event id and paid from the same pool
        self.repeat_rate = repeat_rate
        self.repeats = 0
        b, reserve = s.budget, s.budget.reserve_for_flagged
        # base/stratum turns spend the shared pool only; boosted and reference turns their
        # own pool first, then on its credit, then the shared pool (docs/sampling.md)
        self._shared = _Pool(b, 1.0 - reserve, 0.0 if reserve else b.credit_s)
        self._flagged = _Pool(b, reserve, b.credit_s) if reserve else None
        self.cost_estimate_usd = b.cost_per_event_usd
        self._costs_seen = 0
        self._any_mode = "*" in s.boosts.failure_modes
        self._modes = frozenset(s.boosts.failure_modes)
        self._detectors = frozenset(s.boosts.detectors)
        self._fill = 0.0
        self._scale = 1.0
        self.counts: dict[str, int] = dict.fromkeys(SAMPLED_REASONS + DROPPED_REASONS, 0)
        self.deferred = 0  # flagged turns judged after a wait for the budget's refill

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

    def record_cost(
        self, usd: float, reserved_usd: float | None = None, flagged: bool = False
    ) -> None:
        """Measured judge cost of one sampled turn: settles the dollar budget, updates the
        estimate. `reserved_usd` is the decision's `reserved_usd` (default: the estimate)."""
        reserved = self.cost_estimate_usd if reserved_usd is None else reserved_usd
        pool = self._flagged if flagged and self._flagged is not None else self._shared
        if pool.usd is not None:  # settled in the pool that paid (flagged: boosted, reference)
            pool.usd.charge(usd - reserved)
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
    ) -> SampleDecision:
        """Judge this turn or not; `detectors` names the detectors that hit (optional)."""
        s = self.settings
        if not s.enabled:
            return self._count(False, "disabled")
        if self._fill >= 1.0:
            return self._count(False, "judge_backlog")
        if s.references and (ref := event.reference) is not None and ref.present:
            # golden/labelled turns: few and valuable, judged whenever the budget allows,
            # and never part of the population of unlabelled traffic
            return self._spend("reference", bypass=False, event=event)
        rate, reason = self._rate(event)
        boost = self._boost(event, failure_modes, detectors)
        where = self.position(event)
        if boost is not None:
            if where < rate * self._scale:
                # chosen at the base/stratum rate anyway: it stays in the unbiased population
                # (reason base/stratum, budget applies as to any population turn) ...
                decision = self._spend(reason, bypass=False, count=False, event=event)
                if decision.sampled:
                    self.counts[reason] += 1
                    return decision
                # ... unless the population's share is spent: then it is judged as the
                # boosted turn it is (the population loses it whatever its content)
            reason = boost
            if s.boosts.boost_rate == "always":
                return self._spend(reason, bypass=s.boosts_bypass_budget, event=event)
            rate = min(1.0, rate * float(s.boosts.boost_rate))
        if where >= rate:
            return self._count(False, "not_selected")
        if where >= rate * self._scale:
            return self._count(False, "judge_backlog")
        bypass = boost is not None and s.boosts_bypass_budget
        return self._spend(reason, bypass=bypass, event=event)

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

    def _spend(
        self, reason: str, bypass: bool, count: bool = True, event: Event | None = None
    ) -> SampleDecision:
        now = self._clock()
        calls = self.settings.budget.calls_per_event
        usd = self.cost_estimate_usd
        shared, flagged = self._shared, self._flagged
        wait: float | None = 0.0
        if reason in _POPULATION:
            pool = shared if shared.fits(now, calls, usd) or bypass else None
        elif flagged is not None and flagged.fits(now, calls, usd):
            pool = flagged
        else:
            pool = flagged or shared
            # brought up to now, then taken on credit: judged once the refill has paid
            wait = 0.0 if pool.fits(now, calls, usd) else pool.credit(calls, usd)
            if wait is None and flagged is not None and shared.fits(now, calls, usd):
                pool, wait = shared, 0.0
            if wait is None and bypass:
                wait = 0.0
            if wait is None:
                pool = None
        if pool is None or wait is None:
            return self._count(False, "budget") if count else _DROPPED["budget"]
        pool.charge(calls, usd)
        repeat = (
            event is not None
            and self.repeat_rate > 0
            and self._repeat_position(event) < self.repeat_rate
            and pool.fits(now, calls, usd)  # the second call: only if the pool has room now
        )
        if repeat:
            pool.charge(calls, usd)
            self.repeats += 1
        if count:
            self.counts[reason] += 1
            self.deferred += wait > 0
        return SampleDecision(True, reason, usd, wait, repeat)

    def _repeat_position(self, event: Event) -> float:
        h = self._repeat_hasher.copy()
        h.update(event.event_id.encode())
        return (int.from_bytes(h.digest(), "big") >> 11) * 2.0**-53

    def charge_extra(self, calls: float, usd: float) -> None:
        """Judge-health work (a canary turn): `calls` calls and `usd` dollars, charged to the
        shared pool first, whatever its level. The sampled traffic gets what is left, so a
        busy stream cannot starve the canaries, and they stay inside the budget over time
        because their share is bounded at start (`check_canaries`)."""
        self._shared.charge(calls, usd)

    def settle_extra(self, usd: float, reserved_usd: float) -> None:
        """The measured cost of extra work reserved at `reserved_usd` (a second opinion, a
        canary round): settles the dollar budget; the per-turn estimate is left alone."""
        if self._shared.usd is not None:
            self._shared.usd.charge(usd - reserved_usd)

    def _count(self, sampled: bool, reason: str, usd: float = 0.0) -> SampleDecision:
        self.counts[reason] += 1
        if not sampled and not usd:
            return _DROPPED[reason]
        return SampleDecision(sampled, reason, usd)
