"""Every component picked by name is built here, from its `{type: name, ...options}`.

One function per extension point, all through :func:`build`, which turns a registry's
ValueError into a ConfigError naming the setting (`detectors.enabled.2 (policy): ...`):

- detectors (`detectors.enabled`, plugins imported first): :func:`build_detectors`;
- the judge (`judge.backend`, with the secrets read from the environment):
  :func:`build_judge`;
- judge metrics (`judge.metrics`): :func:`build_metrics`;
- drift detectors (`drift.rate_detectors`, `drift.score_detectors`,
  `judge.health.canaries.detectors`): :func:`check_drift_detectors` at start; a monitor
  builds one per stream from the same spec (the spec is part of the stream's snapshot).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from stream.contract.sections import Component
from stream.runtime.settings import ConfigError, Settings

if TYPE_CHECKING:
    from detectors import Detector
    from monitors.judges.base import EmbeddedJudge, LLMJudge
    from monitors.metrics.base import JudgeMetric

__all__ = ["build", "build_detectors", "build_judge", "build_metrics", "check_drift_detectors"]

T = TypeVar("T")


def build(create: Callable[..., T], spec: Component, where: str) -> T:
    """`create(spec.type, **spec.options)`; a bad name or option is a ConfigError at `where`."""
    try:
        return create(spec.type, **spec.options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where} ({spec.type}): {exc}") from None


def build_detectors(settings: Settings) -> list[Detector]:
    from detectors import create_detector

    for module in settings.detectors.plugins:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(f"detectors.plugins: cannot import {module!r}: {exc}") from None
    return [
        build(create_detector, spec, f"detectors.enabled.{i}")
        for i, spec in enumerate(settings.detectors.enabled)
    ]


def build_judge(settings: Settings) -> LLMJudge | EmbeddedJudge:
    """The judge of `judge.backend`, with the key and the secret headers and query
    parameters read from the environment at start (never part of the backend's options)."""
    import monitors.judges  # noqa: F401  (registers the built-in judges)
    from monitors.judges.base import create_judge

    js = settings.judge
    secrets: dict[str, Any] = {}
    if js.api_key is not None:
        secrets["api_key"] = js.api_key
    if js.headers_from_env:
        secrets["secret_headers"] = js.secret_headers()
    if js.query_from_env:
        secrets["secret_query"] = js.secret_query()
    if js.allow_insecure_http:
        secrets["allow_insecure_http"] = True
    return build(create_judge, js.backend.with_options(**secrets), "judge.backend")


def build_metrics(settings: Settings) -> list[JudgeMetric]:
    import monitors.metrics  # noqa: F401  (registers the built-in metrics)
    from monitors.metrics.base import create_metric

    return [
        build(create_metric, spec, f"judge.metrics.{i}")
        for i, spec in enumerate(settings.judge.metrics)
    ]


def check_drift_detectors(specs: Sequence[Mapping[str, Any]], where: str) -> None:
    """Build each drift detector spec once, so that a bad one stops the start."""
    from monitors.drift import create_drift_detector

    for i, spec in enumerate(specs):
        try:
            create_drift_detector(spec)
        except ValueError as exc:
            raise ConfigError(f"{where}.{i} ({spec.get('type')}): {exc}") from None
