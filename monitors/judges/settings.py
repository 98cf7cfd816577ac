"""Judge configuration (`judge:` section of the settings, same names in Helm values)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

__all__ = ["BUNDLED_METRICS", "DEFAULT_METRICS", "JudgeSettings", "default_metrics"]

#: the embedded judge's default: each metric on its own (it makes no LLM calls)
DEFAULT_METRICS = [
    "faithfulness",
    "context_relevance",
    "answer_relevance",
    "case_aware",
    "citation_accuracy",
    "citation_coverage",
    "source_policy_usage",
]
#: the default of every other judge (LLM judges): the same outputs in at most 3 LLM calls
#: per turn (`rag_triad`, `case_aware` and `citation_policy` one call each; no LLM call
#: for `citation_coverage`), see docs/metrics-judge.md
BUNDLED_METRICS = ["rag_triad", "case_aware", "citation_policy", "citation_coverage"]


def default_metrics(judge_type: str) -> list[str]:
    """`judge.metrics` when not configured: DEFAULT_METRICS for the embedded judge,
    BUNDLED_METRICS for any other."""
    return list(DEFAULT_METRICS if judge_type == "embedded" else BUNDLED_METRICS)


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
