"""Judge configuration (`judge:` section of the settings, same names in Helm values)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

__all__ = [
    "BUNDLED_METRICS",
    "DEFAULT_METRICS",
    "CompoundSettings",
    "JudgeSettings",
    "default_metrics",
]

#: the embedded judge's default: each metric on its own (it makes no LLM calls)
DEFAULT_METRICS = [
    "faithfulness",
    "context_relevance",
    "answer_relevance",
    "case_aware",
    "citation_accuracy",
    "citation_coverage",
    "source_policy_usage",
    "answer_correctness",
]
#: the default of every other judge (LLM judges): the same outputs in at most 3 LLM calls
#: per turn (`rag_triad`, `case_aware` and `citation_policy` one call each; no LLM call
#: for `citation_coverage`), see docs/metrics-judge.md
#: `answer_correctness` and `dece` run on reference turns only (labels.expected_answer):
#: no LLM call on other turns
BUNDLED_METRICS = [
    "rag_triad",
    "case_aware",
    "citation_policy",
    "citation_coverage",
    "answer_correctness",
    "dece",
]


def default_metrics(judge_type: str) -> list[str]:
    """`judge.metrics` when not configured: DEFAULT_METRICS for the embedded judge,
    BUNDLED_METRICS for any other."""
    return list(DEFAULT_METRICS if judge_type == "embedded" else BUNDLED_METRICS)


class CompoundSettings(BaseModel):
    """A weighted mean of judge scores (``ragpulse weights fit`` writes the weights)."""

    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float] = Field(
        default_factory=dict,
        description="{metric output: weight >= 0}; empty: no compound score. Written by "
        "`ragpulse weights fit`",
    )

    @model_validator(mode="after")
    def _check(self) -> CompoundSettings:
        bad = [m for m, w in self.weights.items() if not (w >= 0.0 and w < float("inf"))]
        if bad:
            raise ValueError(f"weights must be finite and >= 0: {bad}")
        if self.weights and sum(self.weights.values()) <= 0:
            raise ValueError("at least one weight must be > 0")
        return self

    def score(self, scores: Mapping[str, float]) -> float | None:
        """Σ w·score / Σ w over the weighted metrics, or None when one of them (with a
        weight > 0) has no score on this turn."""
        used = {m: w for m, w in self.weights.items() if w > 0}
        if not used or any(m not in scores for m in used):
            return None
        return sum(w * scores[m] for m, w in used.items()) / sum(used.values())


class JudgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(
        "embedded", description="registered judge: embedded (local, default), openai, or none"
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="judge options, e.g. {base_url, model, timeout_s, concurrency} for openai",
    )
    api_key: SecretStr | None = Field(None, description="secret: RAGPULSE_JUDGE__API_KEY")
    metrics: list[str] = Field(
        default_factory=lambda: list(DEFAULT_METRICS),
        description="judge metrics to run; default with a judge other than embedded: "
        "rag_triad, case_aware, citation_policy, citation_coverage (same outputs, "
        "at most 3 LLM calls per turn)",
    )
    metric_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="keyword options per metric name"
    )
    queue_size: int = Field(200, ge=1, description="sampled events waiting for a judge, max")
    concurrency: int = Field(2, ge=1, le=256, description="events judged at once")
    compound: CompoundSettings = Field(
        default_factory=CompoundSettings,
        description="compound score from fitted weights (ragpulse_compound_score)",
    )
    windows_s: dict[str, float] = Field(
        default_factory=lambda: {"5m": 300.0, "1h": 3600.0},
        description="rolling windows of ragpulse_metric_mean / ragpulse_gate_pass_ratio",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_metrics(cls, data: Any) -> Any:
        """Unset `metrics` follows the judge type (the bundles for LLM judges)."""
        if isinstance(data, dict) and data.get("metrics") is None:
            kind = data.get("type", "embedded")
            data = {**data, "metrics": default_metrics(kind if isinstance(kind, str) else "")}
        return data
