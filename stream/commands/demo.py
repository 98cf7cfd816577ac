"""`ragpulse demo`: the embedded broker, the bundled traffic and the real sidecar."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    d = sub.add_parser("demo", help="embedded broker + bundled traffic + the real sidecar")
    d.add_argument("--duration", type=float, default=None, help="stop cleanly after N seconds")
    d.add_argument("--rate", type=float, default=25.0, help="events per second (default 25)")
    d.add_argument("--degrade-after", type=float, default=90.0, help="seconds of baseline traffic")
    d.add_argument("--port", type=int, default=None, help="metrics port (default server.port)")
    d.add_argument("--seed", type=int, default=7)


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import run_demo

    if args.port is not None:
        settings = settings.model_copy(
            update={"server": settings.server.model_copy(update={"port": args.port})}
        )
    return asyncio.run(run_demo(settings, args.duration, args.rate, args.degrade_after, args.seed))
