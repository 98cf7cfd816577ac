"""Sampler configuration (config ``sampling``; see docs/sampling.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from stream.contract.sections import Section

__all__ = ["SamplerBoosts", "SamplerBudget", "SamplerSettings", "SamplerStrata"]

Rate = Annotated[float, Field(ge=0.0, le=1.0)]


def _off(value: object) -> object:
    """'null' / 'none' / '' (from an environment variable) switch a setting off."""
    return (
        None if isinstance(value, str) and value.strip().lower() in {"null", "none", ""} else value
    )


Off = BeforeValidator(_off)


class SamplerStrata(Section):
    service: dict[str, Rate] = Field(default_factory=dict, description="rate per service")
    model: dict[str, Rate] = Field(default_factory=dict, description="rate per model")
    service_model: dict[str, dict[str, Rate]] = Field(
        default_factory=dict,
        description="rate per service then model, e.g. {earnings-qa: {gpt-4.1: 0.2}}",
    )


class SamplerBoosts(Section):
    failure_modes: list[str] = Field(
        default_factory=lambda: ["*"],
        description="failure modes whose presence boosts a turn; '*' = any, [] = none",
    )
    detectors: list[str] = Field(
        default_factory=list, description="detector names whose hit boosts a turn (e.g. refusal)"
    )
    thumbs_down: bool = Field(True, description="feedback.thumbs = down boosts a turn")
    rating_below: Annotated[float | None, Off] = Field(
        3.0, description="feedback.rating below this boosts a turn (1-5 scale); null: off"
    )
    retrieval_score_below: Annotated[float | None, Off] = Field(
        0.5, description="best retrieved chunk score below this boosts a turn; null: off"
    )
    boost_rate: Annotated[float, Field(ge=1.0)] | Literal["always"] = Field(
        "always", description="'always' judges a boosted turn; a number multiplies its rate"
    )


class SamplerBudget(Section):
    calls_per_minute: Annotated[Annotated[float, Field(gt=0)] | None, Off] = Field(
        120.0, description="judge calls per minute, no sliding minute exceeds it; null: no cap"
    )
    calls_per_event: Annotated[float, Field(gt=0)] = Field(
        1.0, description="judge calls one sampled turn costs"
    )
    usd_per_hour: Annotated[Annotated[float, Field(gt=0)] | None, Off] = Field(
        2.0, description="judge dollars per hour, no sliding hour exceeds it; null: no cap"
    )
    cost_per_event_usd: Annotated[float, Field(ge=0)] = Field(
        0.0, description="starting estimate of one sampled turn's judge cost (measured later)"
    )
    cost_smoothing: Annotated[float, Field(gt=0, le=1)] = Field(
        0.05, description="weight of a new measured cost in the running estimate"
    )
    burst_fraction: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.1, description="share of each budget that may be spent at once (bucket size)"
    )
    reserve_for_flagged: Annotated[float, Field(ge=0, lt=1)] = Field(
        0.25,
        description="share of each budget kept for boosted and reference turns (base/stratum "
        "turns spend the rest only; flagged turns may also spend the rest)",
    )
    credit_s: Annotated[float, Field(ge=0, le=600)] = Field(
        60.0,
        description="a flagged turn over the budget waits up to this long for the refill "
        "instead of being dropped (0: no credit)",
    )

    @model_validator(mode="after")
    def _fits(self) -> SamplerBudget:
        cpm = self.calls_per_minute
        if cpm is not None and cpm <= self.calls_per_event:
            raise ValueError("calls_per_minute must exceed calls_per_event")
        reserve = self.reserve_for_flagged
        if cpm is not None and reserve and cpm * min(reserve, 1 - reserve) <= self.calls_per_event:
            raise ValueError(
                "calls_per_minute x reserve_for_flagged (and x its rest) must exceed "
                "calls_per_event: each share of the budget must hold one sampled turn"
            )
        return self


class SamplerSettings(Section):
    enabled: bool = Field(True, description="false: no turn is judged (reason disabled)")
    rate: Rate = Field(0.05, description="base share of conversations judged")
    salt: str = Field("ragpulse", description="hash salt; same salt = same conversations chosen")
    strata: SamplerStrata = Field(
        default_factory=SamplerStrata, description="rates per service / model (most specific wins)"
    )
    boosts: SamplerBoosts = Field(
        default_factory=SamplerBoosts, description="turns judged always or more often"
    )
    boosts_bypass_budget: bool = Field(
        False, description="boosted turns are judged even when the budget is spent"
    )
    references: bool = Field(
        True,
        description="turns whose labels carry a reference (expected_answer, "
        "required_information) are always judged, within the budget (reason reference)",
    )
    budget: SamplerBudget = Field(
        default_factory=SamplerBudget, description="token buckets on judge calls and dollars"
    )
    backpressure_start: Rate = Field(
        0.5, description="judge queue fill where the rate starts to fall (to 0 when full)"
    )
