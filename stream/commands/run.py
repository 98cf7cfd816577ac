"""`ragpulse run`: consume the input topic and serve /metrics (the sidecar)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    sub.add_parser("run", help="consume the input topic and serve /metrics (the sidecar)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from exporters import PromFamilies
    from exporters.otel import setup_otel
    from stream.runtime.factory import build_sidecar

    setup_otel()
    prom = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
    sidecar = build_sidecar(settings, prom)
    return asyncio.run(sidecar.run())
