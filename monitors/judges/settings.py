"""Judge configuration (`judge:` section of the settings, same names in Helm values)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["DEFAULT_METRICS", "JudgeSettings"]

DEFAULT_METRICS = [
    "faithfulness",
    "context_relevance",
    "answer_relevance",
    "case_aware",
    "citation_accuracy",
    "citation_coverage",
    "source_policy_usage",
]


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
        default_factory=lambda: list(DEFAULT_METRICS), description="judge metrics to run"
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
