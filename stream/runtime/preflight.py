"""What `ragpulse run` checks at start, without connecting to anything: used by
`ragpulse config --print`, so a configuration it prints is one `run` accepts."""

from __future__ import annotations

from stream.runtime.canary_runner import check_canaries
from stream.runtime.judging_build import build_judging
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import Settings

__all__ = ["preflight"]


def preflight(settings: Settings) -> None:
    """Build the detectors, drift detectors and judge as `run` does (ConfigError naming
    the setting when one cannot be built); nothing connects, nothing is kept."""
    Pipeline(settings, run_drift=True)
    judging = build_judging(settings)
    if judging is not None:
        judging.close(0)
        check_canaries(settings.judge.health.canaries, settings.sampling.budget)
